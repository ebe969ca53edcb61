#!/usr/bin/env bash
# Install the LiteLLM proxy (the `litellm-proxy` dependency group of pyproject.toml, pinned) into
# .venv-litellm, a venv of its own: tests/compat/test_litellm_proxy.py starts it as a real
# OpenAI-compatible server on loopback. Safe to run again: it installs only when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
quiet() { grep -v -E "^(WARNING: Location|DEPRECATION)" || true; }
if [ -x .venv-litellm/bin/litellm ]; then
  exit 0
fi
"$PYTHON" -m venv .venv-litellm
.venv-litellm/bin/python -m pip install -q --upgrade pip 2>&1 | quiet
.venv-litellm/bin/python -m pip install -q --group litellm-proxy 2>&1 | quiet
# the local cost map: without it litellm fetches its price list from the internet when it starts
LITELLM_LOCAL_MODEL_COST_MAP=True .venv-litellm/bin/litellm --version >/dev/null
