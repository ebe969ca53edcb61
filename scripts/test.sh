#!/usr/bin/env bash
# Quick start 2: set up, then run the whole test suite (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The LiteLLM proxy the OpenAI-compatible server tests start, in a venv of its own (only the tests
# need it, not the demo); a failed install only makes that test skip, saying so.
if [ ! -x .venv-litellm/bin/litellm ]; then
  echo "setup: installing the LiteLLM proxy into .venv-litellm (first run: a few minutes)" >&2
fi
bash scripts/setup-litellm.sh || echo "setup: the LiteLLM proxy did not install; tests/compat/test_litellm_proxy.py will skip" >&2
# two workers, one test file each at a time (module fixtures are built once); `-n 0` runs in one process
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
