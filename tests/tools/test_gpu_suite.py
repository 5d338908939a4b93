"""speed/gpu_suite.sh, the device session's one prepared script, runs end to end on CPU (--quick) and writes its JSON."""

import json
import os
import subprocess
import sys

import pytest

from fixtures import REPO



@pytest.mark.slow
def test_gpu_suite_runs_quick_on_cpu(tmp_path):
    output = tmp_path / "suite.json"
    run = subprocess.run(["bash", str(REPO / "speed/gpu_suite.sh"), "--device", "cpu", "--quick", "--output", str(output)],
                         env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True)
    report = json.loads(output.read_text())
    assert run.returncode == 0 and report["passed"], run.stderr
    assert [step["name"] for step in report["steps"]] == ["cuda_parity", "umic", "vilbertscore", "karpathy", "text_precision"]
    assert (report["device"], report["quick"]) == ("cpu", True)
    outputs = {step["name"]: step["output"] for step in report["steps"]}
    assert "batched / one-by-one" in outputs["umic"] and "batched / one pair per forward" in outputs["vilbertscore"]
    assert "| bfloat16 |" in outputs["umic"] and "| bfloat16 |" in outputs["vilbertscore"]
    assert "| polos | polos | bfloat16 |" in outputs["text_precision"]
    assert [row["metric"] for row in report["karpathy"]] == ["bleu", "bert_tbr", "umic", "qace_img"]
    assert all(row["captions"] == 6 and row["cold_s"] > 0 for row in report["karpathy"])
    # --dtype reaches the metrics that declare it, and only those.
    assert [row["dtype"] for row in report["karpathy"]] == ["float32", "bfloat16", "bfloat16", "bfloat16"]
    # The CUDA parity tests skip without a GPU (QACE's also without spaCy) and pass with one.
    assert ("10 skipped" if not report["cuda"] else "10 passed") in outputs["cuda_parity"]


def test_a_call_past_the_limit_is_projected_from_a_probe(monkeypatch):
    import argparse

    from capeval import models

    cleared = []
    monkeypatch.setattr(models, "clear_feature_caches", lambda: cleared.append(True))

    sys.path.insert(0, str(REPO / "speed"))
    import bench_karpathy

    captions, references = bench_karpathy.karpathy_rows(40)
    options = dict(device="cpu", dtype="float32", probe=10)
    fits = bench_karpathy.measure("bleu", captions, references, argparse.Namespace(limit=600, **options), bench_karpathy.QUICK, None)
    # Timed, not projected (a 40-caption BLEU call can take under 5 ms, which rounds to 0.0 s).
    assert isinstance(fits["cold_s"], float) and fits["cold_s"] >= 0 and "warm_s" in fits and "projected_s" not in fits
    assert not cleared
    over = bench_karpathy.measure("bleu", captions, references, argparse.Namespace(limit=1e-6, **options), bench_karpathy.QUICK, None)
    # The probe starts from the stopped call's encodings emptied.
    assert over["cold_s"] == "> 1e-06" and over["probe_captions"] == 10 and cleared == [True]
    # 40 captions projected from 10: four times the probe (both figures rounded as shown).
    assert abs(over["projected_s"] - over["probe_s"] * 4) <= 0.07 and "warm_s" not in over


@pytest.mark.slow
def test_the_batch_size_sweep_runs_quick_on_cpu(tmp_path):
    output = tmp_path / "sweep.json"
    run = subprocess.run([sys.executable, str(REPO / "speed/bench_batch_sizes.py"), "--quick", "--rows", "4", "--metrics", "umic",
                          "--dtype", "float32", "bfloat16", "--batch-sizes", "1,4", "--output", str(output)],
                         capture_output=True, text=True, cwd=REPO / "speed")
    assert run.returncode == 0, run.stderr
    rows = json.loads(output.read_text())["rows"]
    assert [(row["dtype"], row["batch_size"]) for row in rows] == [("float32", 1), ("float32", 4), ("bfloat16", 1), ("bfloat16", 4)]
    assert all(row["captions"] == 4 and row["warm_s"] > 0 for row in rows)
    assert "| umic | bfloat16 | 4 |" in run.stdout
