#!/usr/bin/env bash
# Set up .venv and run the whole test suite (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 CAPEVAL_PROGRESS=0
.venv/bin/python -m pytest -q "$@"
