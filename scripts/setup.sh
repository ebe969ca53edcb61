#!/usr/bin/env bash
# Create .venv (if missing) and install llm-core, both plugins and the development tools into it.
# Needs only Python 3.11+, pip and git. Safe to run again: it only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
  || { echo "setup needs Python 3.11+: run with PYTHON=/path/to/python3.11 (found: $("$PYTHON" --version 2>&1 | head -n 1))" >&2; exit 1; }
quiet() { grep -v -E "^(WARNING: Location|DEPRECATION)" || true; }  # pip's noise; pip's own exit status is kept
step() { echo "setup: $*" >&2; }  # a line per step on stderr, so a first run (about a minute) is not silent
if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version 2>&1) (first run: about a minute in all)"
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
fi
step "installing llm-core, its plugins and the dev tools into .venv (only what changed)"
.venv/bin/python -m pip install -q -e "./core[replay,cli,keyring,mcp]" -e ./plugins/gemini -e ./plugins/openai -e ./plugins/otel --group dev 2>&1 | quiet
.venv/bin/python -c "import llm_core, core_gemini_plugin, core_openai_plugin, core_otel_plugin" \
  || { echo "setup failed: packages did not install" >&2; exit 1; }
step "ready"
