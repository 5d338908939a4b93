"""lmms-eval's COCO caption aggregation against capeval's lmms-eval task, on the COCO Karpathy test split.

What is timed is what an lmms-eval run does after generation for a COCO caption task: its seven aggregations
(``coco_bleu4``, ``coco_bleu3``, ``coco_bleu2``, ``coco_bleu1``, ``coco_meteor``, ``coco_rougel``, ``coco_cider`` of
lmms-eval 0.7's ``tasks/coco_cap/utils.py``, loaded from the installed lmms-eval and run unchanged) against the same
seven metrics of ``capeval_coco2017_cap_val`` (:mod:`capeval.integrations.lmms_eval.caption_tasks`), on the same
items: the dicts both tasks' ``process_results`` give (``answer``, ``pred``, ``image_id``, ``id``). lmms-eval's each
build a COCO index, run pycocoevalcap's Java PTB tokenizer on the references and the captions (two JVMs) and score
their one metric (METEOR in a third JVM that loads its paraphrase table), so the split is tokenized seven times;
capeval's first aggregation scores the split once in one ``capeval.evaluate`` call (pure Python, no Java) and the
other six read that result.

The captions are one system's 5,000 Karpathy-test captions and their ~5 references each, bundled with capeval
(SMURF's golden set), each caption its own image id. Each side runs in a fresh Python process: ``cold`` is its first
pass of the seven (imports, METEOR's resources: capeval reads its cached paraphrase table, the jar loads it in its
JVM), ``warm`` a second pass in the same process (capeval's split result is dropped first, so the split is scored
again; its cross-call caches of tokens and reference n-grams hit, as they do when a second model is evaluated on the
same split; lmms-eval starts new JVMs, as it does in every run). CPU time is the process's and its finished
children's (the JVMs). The seven values of both sides are printed with their largest difference.

Usage: python speed/bench_lmms_eval.py [--rows 5000] [--output JSON]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("CAPEVAL_PROGRESS", "0")

METRICS = ("Bleu_4", "Bleu_3", "Bleu_2", "Bleu_1", "METEOR", "ROUGE_L", "CIDEr")
LMMS_AGGREGATIONS = ("coco_bleu4", "coco_bleu3", "coco_bleu2", "coco_bleu1", "coco_meteor", "coco_rougel", "coco_cider")
CAPEVAL_AGGREGATIONS = ("bleu_4", "bleu_3", "bleu_2", "bleu_1", "meteor", "rouge_l", "cider")


def karpathy_items(rows: int) -> list[dict]:
    """lmms-eval's per-document items for the first ``rows`` Karpathy-test captions of SMURF's system 0."""
    from importlib import resources

    import pandas as pd

    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden[golden.system == 0].head(rows)
    return [{"answer": [str(r) for r in refs], "pred": caption, "image_id": 100000 + i, "id": i}
            for i, (caption, refs) in enumerate(zip(golden.candidate, golden.references))]


def cpu_seconds() -> float:
    usage = os.times()
    return usage.user + usage.system + usage.children_user + usage.children_system


def lmms_side(items: list[dict], output: str) -> list:
    import lmms_eval

    path = Path(lmms_eval.__file__).parent / "tasks" / "coco_cap" / "utils.py"
    spec = importlib.util.spec_from_file_location("coco_cap_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = SimpleNamespace(output_path=output)
    return [getattr(module, name)(items, args) for name in LMMS_AGGREGATIONS]


def capeval_side(items: list[dict], output: str) -> list:
    from capeval.integrations.lmms_eval import caption_tasks

    caption_tasks._RESULTS.clear()  # the split is scored again (warm: capeval's cross-call caches still hold its text)
    return [getattr(caption_tasks, name)(items) for name in CAPEVAL_AGGREGATIONS]


def run_side(side: str, items_path: str, output: str) -> None:
    """One side in this (fresh) process: a cold pass of the seven aggregations, then a warm one."""
    start = time.perf_counter()
    items = json.loads(Path(items_path).read_text())
    call = {"lmms-eval": lmms_side, "capeval": capeval_side}[side]
    passes = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(2):
            begin, begin_cpu = time.perf_counter(), cpu_seconds()
            values = call(items, folder)
            passes.append({"wall": time.perf_counter() - begin, "cpu": cpu_seconds() - begin_cpu, "values": values})
    Path(output).write_text(json.dumps({"passes": passes, "process_s": time.perf_counter() - start}))


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--output", help="write the figures here as JSON")
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--items", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        run_side(args.side, args.items, args.result)
        return
    with tempfile.TemporaryDirectory() as folder:
        items_path = Path(folder) / "items.json"
        items_path.write_text(json.dumps(karpathy_items(args.rows)))
        figures = {"rows": args.rows, "sides": {}, "load": {}}
        for side in ("lmms-eval", "capeval"):
            figures["load"][side] = load_average()
            result = Path(folder) / f"{side}.json"
            subprocess.run([sys.executable, __file__, "--side", side, "--items", str(items_path), "--result", str(result)], check=True)
            figures["sides"][side] = json.loads(result.read_text())
        figures["load"]["end"] = load_average()
    lmms, ours = figures["sides"]["lmms-eval"]["passes"], figures["sides"]["capeval"]["passes"]
    difference = max(abs(a - b) for a, b in zip(lmms[0]["values"], ours[0]["values"]))
    figures["largest_difference"] = difference
    print(f"{args.rows} captions; load average before lmms-eval {figures['load']['lmms-eval']}, before capeval "
          f"{figures['load']['capeval']}, at the end {figures['load']['end']}")
    print("| side | cold wall (s) | cold CPU incl. JVMs (s) | warm wall (s) | warm CPU incl. JVMs (s) |")
    print("|---|---|---|---|---|")
    for side, passes in (("lmms-eval's seven aggregations", lmms), ("capeval_coco2017_cap_val's seven", ours)):
        print(f"| {side} | {passes[0]['wall']:.2f} | {passes[0]['cpu']:.2f} | {passes[1]['wall']:.2f} | {passes[1]['cpu']:.2f} |")
    for kind, index in (("cold", 0), ("warm", 1)):
        print(f"{kind}: {lmms[index]['wall'] / ours[index]['wall']:.1f}x wall, {lmms[index]['cpu'] / ours[index]['cpu']:.1f}x CPU")
    print("values (lmms-eval / capeval): " + ", ".join(f"{name} {a:.6f} / {b:.6f}" for name, a, b in zip(METRICS, lmms[0]["values"], ours[0]["values"])))
    print(f"largest difference: {difference:.2e}")
    if args.output:
        Path(args.output).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
