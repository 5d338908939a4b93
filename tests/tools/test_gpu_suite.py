"""speed/gpu_suite.sh, the device session's one prepared script, runs end to end on CPU (--quick) and writes its JSON."""

import json
import os
import re
import subprocess
import sys

import pytest

from fixtures import REPO



@pytest.mark.slow
def test_gpu_suite_runs_quick_on_cpu(tmp_path):
    """Its figures are one run of the suite's runner on the GPU declarations (a result file like every other)."""
    output = tmp_path / "suite.json"
    run = subprocess.run(["bash", str(REPO / "speed/gpu_suite.sh"), "--device", "cpu", "--quick", "--output", str(output)],
                         env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True)
    report = json.loads(output.read_text())
    assert run.returncode == 0 and report["passed"], run.stderr
    assert [step["name"] for step in report["steps"]] == ["cuda_parity", "figures"]
    assert (report["device"], report["quick"], report["gpu"]) == ("cpu", True, None)
    steps = {step["name"]: step for step in report["steps"]}
    # The CUDA parity tests skip without a GPU.
    assert "12 skipped" in steps["cuda_parity"]["output"] and steps["cuda_parity"]["figures"] is None
    result = steps["figures"]["figures"]
    assert result["format"] == "capeval-speed/1" and result["quick"] is True
    benchmarks = result["benchmarks"]
    assert list(benchmarks) == ["gpu_vilbertscore", "gpu_qace_ref", "gpu_clip_score"]
    assert all(benchmarks[name]["device"] == "cpu" for name in benchmarks)
    figures = {name: benchmarks[f"gpu_{name}"]["sides"][name]["figures"]["cold process"]
               for name in ("vilbertscore", "qace_ref", "clip_score")}
    # Every figure carries its goal and the card that gave it, at the top and in each row.
    assert {name: (f["metric"], f["device"], f["goal"] != "") for name, f in figures.items()} == {
        name: (name, "CPU", True) for name in figures}
    assert all(row["device"] == "CPU" for f in figures.values() for row in f["rows"])
    vilbert = figures["vilbertscore"]["rows"]
    assert [row["variant"].split(",")[0] for row in vilbert] == [
        "before: pairs batched by length", "grouped by image", "grouped by image", "grouped by image", "cuda_graphs", "torch_compile"]
    # Every measured variant scores as the path before (CUDA graphs fall back to eager on a CPU); no MFU without a
    # known card; compilation is skipped in the quick run.
    assert all(row["max_abs_diff_vs_before"] <= 1e-2 and row["mfu"] is None and row["captions_per_s"] > 0 for row in vilbert[:5])
    assert "skipped" in vilbert[5]
    qace = figures["qace_ref"]
    assert [(row["dtype"], row["batch_size"]) for row in qace["rows"]] == [
        ("float32", "default (1,024 on GPU)"), ("float32", 512), ("float32", 2048), ("bfloat16", "default (1,024 on GPU)")]
    assert all(row["projected_split_s"] == pytest.approx(row["probe_s"] * 5000 / 4, abs=7) for row in qace["rows"])
    assert qace["split"].startswith("not run") and qace["load_s"] > 0
    clip = figures["clip_score"]
    assert [row["label"] for row in clip["rows"]] == ["now", "before", "now, again"]
    assert clip["first_call"]["cold_s"] > 0 and clip["captions"] == 6 and clip["references"] == 24


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


def test_the_full_run_names_every_cuda_declaration_but_the_karpathy_sweeps():
    """A GPU declaration left out of the device session's run would never get a figure: every CUDA declaration is in
    its full run except the Karpathy split's sweeps (their figures are the recorded H100 runs), with UMIC and Polos."""
    sys.path.insert(0, str(REPO / "speed"))
    from benchmarks import BENCHMARKS

    script = (REPO / "speed" / "gpu_suite.sh").read_text()
    goals = re.search(r"^figures=\(speed/run\.py ([^)]*?) --device", script, re.M)[1].split()
    rest = re.search(r"^  figures\+=\(([^)-]*)\)$", script, re.M)[1].split()
    cuda = {name for name, bench in BENCHMARKS.items() if bench.device == "cuda"}
    assert set(goals + rest) == cuda - {"karpathy", "karpathy_bf16", "batch_sizes", "batch_sizes_qace"} | {"umic", "polos"}
