#!/usr/bin/env bash
# Quick start 1: set up, then tour discovery, capability routing and real calls through both
# plugins, answered from the repository's recorded cassettes (no network, no API key).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/llm-core --replay cassettes demo "$@"
