#!/usr/bin/env bash
# Set up .venv (and Debian's chromium for the browser test, where possible) and run the tests (offline).
#   bash scripts/test.sh            everything, then the type check (what CI runs)
#   bash scripts/test.sh --quick    the fast set for daily work: no slow, browser, install or GPU tests
#   bash scripts/test.sh ARGS       pytest ARGS (e.g. tests/metrics/cider, -m "not models"), then the type check
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 CAPEVAL_PROGRESS=0
if [ "$quick" = 1 ]; then
    .venv/bin/python -m pytest -q -m "not slow and not browser and not install and not gpu" "$@"
    exit
fi
bash scripts/apt_install.sh "the browser" chromedriver chromium chromium-driver
bash scripts/apt_install.sh "WordNet 3.0 (CHAIR's lemmas; Debian's wordnet-base)" wn wordnet-base wordnet
.venv/bin/python -m pytest -q "$@"
# The type check of the library (lenient: setup.cfg's [mypy] section).
.venv/bin/python -m mypy shared/capeval
