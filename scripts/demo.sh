#!/usr/bin/env bash
# Set up .venv and score the bundled sample captions with every metric that runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1
.venv/bin/capeval score "$@"
