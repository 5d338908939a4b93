"""speed/gpu_suite.sh, the device session's one prepared script, runs end to end on CPU (--quick) and writes its JSON."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_suite_runs_quick_on_cpu(tmp_path):
    output = tmp_path / "suite.json"
    run = subprocess.run(["bash", str(ROOT / "speed/gpu_suite.sh"), "--device", "cpu", "--quick", "--output", str(output)],
                         env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True)
    report = json.loads(output.read_text())
    assert run.returncode == 0 and report["passed"], run.stderr
    assert [step["name"] for step in report["steps"]] == ["umic", "vilbertscore", "smurf", "text_precision", "cuda_parity"]
    assert (report["device"], report["quick"]) == ("cpu", True)
    outputs = {step["name"]: step["output"] for step in report["steps"]}
    assert "batched / one-by-one" in outputs["umic"] and "batched / one pair per forward" in outputs["vilbertscore"]
    # The CUDA parity test skips without a GPU and passes with one.
    assert "| polos | polos | bfloat16 |" in outputs["text_precision"]
    assert "SPURTS" in outputs["smurf"] and ("1 skipped" if not report["cuda"] else "1 passed") in outputs["cuda_parity"]
