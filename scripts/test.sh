#!/usr/bin/env bash
# Set up .venv (and Debian's chromium for the browser test, where possible) and run the whole test suite (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
bash scripts/apt_install.sh "the browser" chromedriver chromium chromium-driver
# WordNet 3.0 (Debian's wordnet-base, which the wordnet package brings with its `wn` command) for CAPTURE's tests.
bash scripts/apt_install.sh "WordNet (CAPTURE)" wn wordnet
export HF_HUB_OFFLINE=1 CAPEVAL_PROGRESS=0
.venv/bin/python -m pytest -q "$@"
# The type check of the library (lenient: setup.cfg's [mypy] section).
.venv/bin/python -m mypy shared/capeval
