#!/usr/bin/env python
"""Write the GPU figures recorded on an NVIDIA H100 on 2026-11-26 (results/speed/: the output of the earlier
bench_karpathy.py and bench_batch_sizes.py runs, four device sessions of one day; the sweep script has since become
the batch_sizes declarations) as a result file of the suite (speed/results/gpu_h100.json, format capeval-speed/1),
one side per metric with the latest run's figures, each labelled with its run. Only what those files hold is written: wall seconds of the cold and warm calls (or a projection from a
probe, labelled so); no CPU time, peak memory, CPU model or driver was recorded, and none is invented.

Usage: python speed/import_recorded.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.gpu import TITLES  # noqa: E402
from harness import FORMAT, REPO  # noqa: E402

SOURCES = {1: "results/speed/gpu_suite_h100.json", 2: "results/speed/karpathy2_h100.json", 34: "results/speed/gpu_runs3_4_h100.json"}


def runs_of(row: dict) -> dict:
    if "projected_s" in row:
        return {f"cold process, projected from {row['probe_captions']:,} captions": {"wall_s": row["projected_s"]}}
    return {"cold process": {"wall_s": row["cold_s"]}, "warm": {"wall_s": row["warm_s"]}}


def side(row: dict, run: str, extra: str = "") -> dict:
    return {"label": f"{TITLES[row['metric']]}{extra} ({run})", "role": "capeval", "runs": runs_of(row)}


def main() -> None:
    run1 = json.loads((REPO / SOURCES[1]).read_text())
    run2 = json.loads((REPO / SOURCES[2]).read_text())
    runs34 = json.loads((REPO / SOURCES[34]).read_text())["runs"]
    latest: dict[str, tuple[dict, str]] = {row["metric"]: (row, "run 1") for row in run1["karpathy"]}
    latest.update({row["metric"]: (row, "run 2") for row in run2["rows"]})
    bf16: dict[str, tuple[dict, str]] = {}
    sweeps: dict[int, list[tuple[dict, str]]] = {2000: [], 1000: []}
    for entry in runs34:
        label = f"run {entry['run']}"
        for row in entry["rows"]:
            if "batch_size" in row:
                sweeps[row["captions"]].append((row, label))
            elif row["dtype"] == "bfloat16":
                bf16[row["metric"]] = (row, label)
            else:
                latest[row["metric"]] = (row, label)
    karpathy = {"description": "SMURF's Karpathy-test captions (system 0) with their references, a synthetic 500 × 375 "
                               "JPEG or synthetic region features per caption; random weights at the paper models' real sizes",
                "items": 5000}
    benchmarks = {
        "karpathy": {"title": "Every metric on the COCO Karpathy test split, one `capeval.evaluate` call each (float32)",
                     "device": "cuda", "data": karpathy, "comparisons": [],
                     "sides": {metric: side(*latest[metric]) for metric in TITLES if metric in latest}},
        "karpathy_bf16": {"title": "UMIC and ViLBERTScore on the Karpathy test split in bfloat16", "device": "cuda",
                          "data": karpathy, "comparisons": [],
                          "sides": {metric: side(*bf16[metric]) for metric in ("umic", "vilbertscore")}},
    }
    for name, rows in (("batch_sizes", 2000), ("batch_sizes_qace", 1000)):
        benchmarks[name] = {
            "title": f"Warm captions/s by forward-pass precision and batch size, {rows:,} Karpathy-test captions",
            "device": "cuda", "comparisons": [], "data": {**karpathy, "items": rows},
            "sides": {f"{row['metric']} {row.get('dtype', 'float32')} {row['batch_size']}": {
                "label": f"{TITLES[row['metric']]}, {row.get('dtype', 'float32')}, batch {row['batch_size']} ({run}"
                         f"{', under cProfile' if row['metric'] == 'qace_ref' and row['batch_size'] == 512 else ''})",
                "role": "capeval", "runs": {"warm": {"wall_s": row["warm_s"]}}} for row, run in sweeps[rows]}}
    result = {"format": FORMAT, "date": "2026-11-26T00:00:00Z", "quick": False,
              "command": "python speed/import_recorded.py",
              "imported_from": ", ".join(SOURCES.values()),
              "machine": {"cpu": "CPU model not recorded", "cores": 16, "usable_cores": 16, "memory_gib": None,
                          "gpu": {"name": run1["gpu"], "driver": "not recorded", "torch": run1["torch"]}},
              "benchmarks": benchmarks}
    output = REPO / "speed" / "results" / "gpu_h100.json"
    output.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {output.relative_to(REPO)}")


if __name__ == "__main__":
    main()
