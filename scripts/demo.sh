#!/usr/bin/env bash
# Set up .venv with what the demo runs (the text metrics; BERT-TBR, BERTScore and SPARCS with all-MiniLM-L6-v2 standing
# in for their models; METEOR through its Java-free port) and score the bundled sample captions with every metric that runs
# offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh models,bertscore,meteor
export HF_HUB_OFFLINE=1
.venv/bin/capeval score "$@"
