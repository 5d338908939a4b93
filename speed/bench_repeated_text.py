"""Repeated evaluation of the COCO text metrics (BLEU-1..4, ROUGE-L, CIDEr-D) against the same references: what
capeval keeps across calls (``capeval.text.call_cache.kept_text_work``: tokenizations, n-gram indexes, the
references' BLEU maxima and CIDEr-D weights).

SMURF's Karpathy-test caption sets bundled with capeval hold four captioners' 5,000 captions for the same 5,000
images and references (``--rows``: how many images). In one process, through ``capeval.evaluate`` and through the
Trainer hook (``CaptionEvaluator``, as a training loop evaluates after every epoch):

  1. cold: nothing kept (``capeval.models.clear_feature_caches()``; modules imported, regexes compiled),
  2. warm, the same captions again (the scores must be identical),
  3. warm, another captioner's captions for the same references, as the next epoch's predictions (each of the other
     three captioners in turn, after the first one's; the scores must be identical to a cold call on them).

Each is the least CPU time (and the least wall time) of its runs (``--repeats`` for 1 and 2, three for 3); CPU time
moves less than wall time with the load of a shared machine.

Usage: python speed/bench_repeated_text.py [--rows 5000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time

from bench_coco import caption_rows

import capeval
from capeval.integrations.trainer import CaptionEvaluator
from capeval.models import clear_feature_caches

METRICS = ["bleu", "rouge", "cider"]


def least(function, repeats: int, cold: bool):
    """``(values, least CPU seconds, least wall seconds)`` of ``repeats`` runs, each after emptying what capeval
    keeps when ``cold``."""
    values, cpu, wall = [], [], []
    for _ in range(repeats):
        if cold:
            clear_feature_caches()
        start, start_cpu = time.perf_counter(), time.process_time()
        values.append(function())
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return values, min(cpu), min(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5000, help="images (and captions of each captioner) to score")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = caption_rows(4 * 5000)
    systems = [rows[start:start + args.rows] for start in range(0, 4 * 5000, 5000)]
    references = [row["references"] for row in systems[0]]
    if any(references != [row["references"] for row in system] for system in systems):
        raise SystemExit("the captioners' rows do not line up image by image")
    captions = [[row["candidate"] for row in system] for system in systems]
    print(f"{len(references):,} captions x {sum(map(len, references)) / len(references):.1f} references; "
          f"{', '.join(METRICS)}; load average {os.getloadavg()[0]:.1f}\n")

    def evaluate(texts):
        return lambda: capeval.evaluate(texts, references, metrics=METRICS).corpus

    evaluator = CaptionEvaluator(METRICS, references=references)

    def hook(texts):
        return lambda: evaluator.evaluate_texts(texts)

    print("| path | call | CPU (s) | wall (s) | CPU vs cold | identical scores |\n|---|---|---|---|---|---|")
    for path, call in (("capeval.evaluate", evaluate), ("Trainer hook", hook)):
        cold, cold_cpu, cold_wall = least(call(captions[0]), args.repeats, cold=True)
        next_cold, _, _ = least(call(captions[1]), 1, cold=True)
        least(call(captions[0]), 1, cold=True)  # keep the first captioner's work for the warm runs
        warm, warm_cpu, warm_wall = least(call(captions[0]), args.repeats, cold=False)
        others = iter(captions[1:])
        new, new_cpu, new_wall = least(lambda: call(next(others))(), 3, cold=False)
        for label, (cpu, wall, same) in {"cold (nothing kept)": (cold_cpu, cold_wall, "-"),
                                         "warm, same captions": (warm_cpu, warm_wall, warm == cold[:1] * len(warm)),
                                         "warm, new captions, same references": (new_cpu, new_wall, new[:1] == next_cold)}.items():
            print(f"| {path} | {label} | {cpu:.3f} | {wall:.3f} | {cold_cpu / cpu:.1f}x | {same} |")
    print(f"\nLoad average (1 min) at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
