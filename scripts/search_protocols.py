"""Search the protocol space for each published table's baseline rows; write what was tried and the closest Δ.

For every table and every benchmark column it uses, each setting of the grid below is scored on the
table's baseline rows (BLEU, ROUGE-L, METEOR, CIDEr; SPICE cannot run offline); a
setting is judged by the largest |Δ| over those rows together, never cell by cell. The toolkit
options (tokenizer, BLEU smoothing) are shared by the whole table. Per-caption scores are cached
(``capeval reproduce``'s cache), so a rerun takes seconds.

    python scripts/search_protocols.py [--paper bert_tbr] [--output results/protocol_search]

Grid: Flickr8k-Expert: P1 (mean of experts) / P2 (every rating) × self-captions excluded / kept (own
reference kept) / excluded with 4 references (each of the 5 left out in turn) × τ-b / τ-c / Pearson /
Spearman. Composite (the Flickr8k third, the only one with
references here): the candidate's own reference removed / kept × the four statistics. PASCAL-50S:
references first 5 / FLEUR's 5 / all 50 / 5 random (seeds 0, 1) × ties 0.5 / 0. Flickr8k-CF:
self-captions kept (CLIPScore's preparation) × the four statistics (its METEOR pass over 47,830
captions is the slowest step). Toolkit: tokenizer PTB / none (text as given) × BLEU smoothing coco /
none.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from capeval.benchmarks.published import ROW_METRICS, published_cells
from capeval.benchmarks.reproduce import reproduce_cells
from capeval.benchmarks.stats import CORRELATIONS
from capeval.benchmarks.table_protocols import BenchmarkSetting, TableProtocol

GRIDS = {
    "flickr8k_expert": [BenchmarkSetting(options, rows, stat) for options, rows, stat in itertools.product(
        [{"include_self_captions": False}, {"include_self_captions": True}]
        + [{"include_self_captions": False, "drop_reference": k} for k in range(5)], ("P1 mean", "P2 all"), CORRELATIONS)],
    "composite": [BenchmarkSetting({"candidate_reference": own}, "correctness", stat)
                  for own, stat in itertools.product(("remove", "keep"), CORRELATIONS)],
    "pascal50s": [BenchmarkSetting({"refs": refs}, ties=ties)
                  for refs, ties in itertools.product(("first5", "fleur5", "all", "random5:0", "random5:1"), ("half", "fail"))],
    "flickr8k_cf": [BenchmarkSetting({"include_self_captions": True}, "fraction yes", stat) for stat in CORRELATIONS],
}
TOOLKITS = [{"tokenizer": tokenizer, "smoothing": smoothing}
            for tokenizer, smoothing in itertools.product(("ptb", "none"), ("coco", "none"))]


def baseline_cells(cells):
    """The printed cells of the baseline rows: the COCO toolkit metrics, all computable offline."""
    return [c for c in cells if c.published is not None and ROW_METRICS[c.metric].toolkit]


def search_table(cells) -> list[dict]:
    """Every (toolkit, benchmark setting) tried on one table: its largest and mean |Δ| and the cells."""
    tried = []
    for toolkit in TOOLKITS:
        for benchmark in dict.fromkeys(c.benchmark for c in cells):
            of_benchmark = [c for c in cells if c.benchmark == benchmark]
            for setting in GRIDS.get(benchmark, []):
                if benchmark != "flickr8k_expert" and any(c.measure in ("tau-b", "tau-c") for c in of_benchmark) \
                        and setting.statistic not in ("tau-b",):
                    continue  # columns that name their statistic leave nothing to search
                results = reproduce_cells(of_benchmark, TableProtocol({benchmark: setting}, toolkit))
                deltas = [abs(r.delta) for r in results]
                tried.append({"benchmark": benchmark, "toolkit": toolkit, "setting": setting.describe(),
                              "max_abs_delta": max(deltas), "mean_abs_delta": float(np.mean(deltas)),
                              "reproduced": sum(r.status == "reproduced" for r in results), "cells": len(results),
                              "deltas": {f"{r.row} / {r.column}": round(r.delta, 4) for r in results}})
    return tried


def best(tried: list[dict]) -> tuple[dict, dict[str, dict]]:
    """The table-wide toolkit and, per benchmark, the setting with the smallest largest |Δ| under it (ties:
    smallest mean |Δ|); the toolkit is the one whose worst benchmark is closest."""
    def closest(of_toolkit):
        out = {}
        for t in of_toolkit:
            key = t["benchmark"]
            if key not in out or (t["max_abs_delta"], t["mean_abs_delta"]) < (out[key]["max_abs_delta"], out[key]["mean_abs_delta"]):
                out[key] = t
        return out

    per_toolkit = [closest([t for t in tried if t["toolkit"] == toolkit]) for toolkit in TOOLKITS]
    index = min(range(len(TOOLKITS)), key=lambda k: max(t["max_abs_delta"] for t in per_toolkit[k].values()))
    return TOOLKITS[index], per_toolkit[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper", default="all")
    parser.add_argument("--output", default="results/protocol_search")
    args = parser.parse_args()
    cells = baseline_cells(published_cells(args.paper))
    report, lines = [], ["# Protocol search: the closest setting per table and benchmark", "",
                         "Largest |Δ| over the table's offline baseline rows under one setting (τ; accuracy in %).", ""]
    for key in dict.fromkeys((c.paper, c.table) for c in cells):
        tried = search_table([c for c in cells if (c.paper, c.table) == key])
        report.append({"paper": key[0], "table": key[1], "tried": tried})
        toolkit, settings = best(tried)
        block = [f"## {key[0]} {key[1]} ({len(tried)} settings tried; closest toolkit {toolkit})"]
        for benchmark, t in settings.items():
            block.append(f"- {benchmark}: {t['setting']}: max |Δ| {t['max_abs_delta']:.3f}, mean |Δ| "
                         f"{t['mean_abs_delta']:.3f}, {t['reproduced']}/{t['cells']} cells within tolerance")
            block.append("  - " + "; ".join(f"{cell} {delta:+.3f}" for cell, delta in t["deltas"].items()))
        lines += block + [""]
        print("\n".join(block), flush=True)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    out.with_suffix(".md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
