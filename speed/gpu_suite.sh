#!/usr/bin/env bash
# The device session's one prepared run: the CUDA parity tests and the speed suite's GPU declarations (step 21's goals
# beside their goals, UMIC, Polos, CAPTURE, Visual-T5, the FLEUR judge), written to one JSON (a device session has minutes).
#
#   bash speed/gpu_suite.sh [--device cuda|cpu] [--quick] [--install] [--output gpu_suite.json]
#
# Steps, each in its own process and under its own time cap (a step that fails or runs out is recorded, and the
# next one runs):
#   cuda_parity   every model metric's CUDA scores against its CPU scores (tests/properties/test_cuda_parity.py) and
#                 ViLBERTScore's `-k cuda` tests (CUDA against CPU, CUDA graphs against eager CUDA); they skip
#                 without a GPU;
#   figures       the suite's runner (speed/run.py) on the GPU declarations: step 21's goals (gpu_vilbertscore,
#                 gpu_qace_ref, gpu_clip_score: each figure beside its goal with the card's name and MFU), then UMIC,
#                 Polos (each batched against one caption per forward pass), CAPTURE (against capture-metric, skipped
#                 where that does not install), Visual-T5's attention and FLEUR at LLaVA-1.5-13B's sizes in
#                 bfloat16 (fleur_gpu: batched with shared prefixes against the released one-caption loop), all on
#                 --device (--quick: the goals alone); its result file (format capeval-speed/1, the machine
#                 record with the GPU's name and driver) is the step's figures.
# --quick shrinks every step (tiny models, a few captions) so that `--device cpu --quick` checks the suite in CI.
# --install first installs this checkout (`pip install -e . --no-deps`) where capeval does not import from it (a bare
# GPU machine has torch, transformers and the rest). QACE reads the answer spans spaCy found from CAPEVAL_BENCH_SPANS
# (default speed/karpathy_spans.json where it exists; written beforehand with
# `python speed/bench_karpathy.py --write-spans speed/karpathy_spans.json`) where spaCy is not installed.
# Each step records its command, exit status, wall seconds, the end of its output and its figures; the JSON also holds
# the device, torch's version and the load average. The exit status is 1 when a step failed (the runner fails when
# two sides' outputs differ).
set -uo pipefail
cd "$(dirname "$0")/.."
device=cuda quick=0 install=0 output=gpu_suite.json
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --install) install=1; shift ;;
    --output) output=$2; shift 2 ;;
    *) echo "usage: bash speed/gpu_suite.sh [--device cuda|cpu] [--quick] [--install] [--output FILE]" >&2; exit 2 ;;
  esac
done
export HF_HUB_OFFLINE=1 CAPEVAL_PROGRESS=0 PYTHONUNBUFFERED=1
# A GPU machine may have python3 alone.
python=${PYTHON:-$(command -v python || command -v python3)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

if [ "$install" = 1 ] && ! "$python" -c "import capeval, pathlib, sys; sys.exit(pathlib.Path(capeval.__file__).resolve().parents[2] != pathlib.Path.cwd())" 2>/dev/null; then
  "$python" -m pip install -q --no-deps --no-build-isolation --no-index -e . || exit 1
fi
spans=${CAPEVAL_BENCH_SPANS:-}
[ -z "$spans" ] && [ -f speed/karpathy_spans.json ] && spans=speed/karpathy_spans.json
[ -n "$spans" ] && export CAPEVAL_BENCH_SPANS=$spans

# The GPU declarations of the suite, in the order they run (speed/run.py --list says what each compares); the quick
# check runs step 21's goals alone (the others are the suite's own declarations, run on the CPU as they are here).
figures=(speed/run.py gpu_vilbertscore gpu_qace_ref gpu_clip_score --device "$device")
if [ "$quick" = 1 ]; then
  figures+=(--quick)
  caps=(300 600)
else
  figures+=(umic polos capture visual_t5 fleur_gpu)
  caps=(90 720)
fi
# The tests that score on CUDA and compare with CPU or with eager CUDA (they skip where there is no GPU).
parity=(-m pytest -q -p no:cacheprovider tests/properties/test_cuda_parity.py tests/metrics/vilbertscore/test_vilbertscore_scorer.py
        tests/metrics/vilbertscore/test_vilbertscore_fast_paths.py -k cuda)

names=()
run_step() {  # name, time cap in seconds, then the python arguments (a step writing figures takes --output last)
  local name=$1 cap=$2; shift 2
  names+=("$name")
  local start=$(date +%s.%N)
  # tee: a run stopped part-way (a device session's time limit) still shows what each step printed.
  timeout "$cap" "$python" "$@" 2>&1 | tee "$logs/$name.out" >&2
  echo "${PIPESTATUS[0]}" >"$logs/$name.rc"
  echo "$start $(date +%s.%N)" >"$logs/$name.time"
  echo "$name: exit $(cat "$logs/$name.rc")" >&2
}
run_step cuda_parity "${caps[0]}" "${parity[@]}"
run_step figures "${caps[1]}" "${figures[@]}" --output "$logs/figures.json"

"$python" - "$logs" "$output" "$device" "$quick" "${names[@]}" <<'EOF'
import json, os, sys
from pathlib import Path
logs, output, device, quick, names = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
try:
    import torch
    torch_about = {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
                   "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
except ImportError:
    torch_about = {"torch": None}
steps = []
for name in names:
    start, end = map(float, (logs / f"{name}.time").read_text().split())
    figures = logs / f"{name}.json"
    steps.append({"name": name, "returncode": int((logs / f"{name}.rc").read_text()), "seconds": round(end - start, 2),
                  "output": (logs / f"{name}.out").read_text(errors="replace")[-6000:],
                  "figures": json.loads(figures.read_text()) if figures.exists() else None})
report = {"device": device, "quick": quick, **torch_about, "cpu_cores": len(os.sched_getaffinity(0)), "load_average": os.getloadavg(),
          "steps": steps, "passed": all(step["returncode"] == 0 for step in steps)}
Path(output).write_text(json.dumps(report, indent=1))
print(f"wrote {output}: " + ", ".join(f"{s['name']} {'ok' if s['returncode'] == 0 else 'FAILED'} ({s['seconds']} s)" for s in steps))
sys.exit(0 if report["passed"] else 1)
EOF
