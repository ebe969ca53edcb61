#!/usr/bin/env bash
# Quick start 2: set up, then run the whole test suite (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# two workers, one test file each at a time (module fixtures are built once); `-n 0` runs in one process
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
