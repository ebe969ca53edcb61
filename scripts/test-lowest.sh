#!/usr/bin/env bash
# The suite against the lowest versions our dependencies allow (constraints/lowest.txt), in a
# venv of its own (.venv-lowest), so that every `>=` bound in the three pyproject.toml files is a
# tested one. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
quiet() { grep -v -E "^(WARNING: Location|DEPRECATION)" || true; }
if [ ! -x .venv-lowest/bin/python ]; then
  "$PYTHON" -m venv .venv-lowest
  .venv-lowest/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
fi
.venv-lowest/bin/python -m pip install -q -c constraints/lowest.txt \
  -e "./core[replay,cli,keyring,mcp]" -e ./plugins/gemini -e ./plugins/openai -e ./plugins/otel --group dev 2>&1 | quiet
.venv-lowest/bin/python - <<'PY'
# Fail loudly when pip did not install the pinned lowest versions (e.g. a resolver backtrack).
import importlib.metadata as m, pathlib
pins = [l.split("==") for l in pathlib.Path("constraints/lowest.txt").read_text().splitlines() if "==" in l]
wrong = [f"{n} {m.version(n)} (want {v})" for n, v in pins if m.version(n) != v.strip()]
if wrong:
    raise SystemExit("lowest-versions venv does not hold the pinned versions: " + ", ".join(wrong))
print("lowest versions:", ", ".join(f"{n}=={v}" for n, v in pins))
PY
exec .venv-lowest/bin/python -m pytest "$@"
