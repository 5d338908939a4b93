"""Speed of capeval's offline text metrics on Flickr8k-Expert's 16,992 rated rows, against pycocoevalcap.

Scores every row of protocol P2 (5,664 captions × 3 expert ratings, each row scored as the COCO toolkit
would score a list of 16,992 items) with
  1. capeval: pure-Python PTB tokenization + BLEU-1..4 + ROUGE-L + CIDEr-D, then SPARCS (SMURF),
  2. pycocoevalcap 1.2: the CoreNLP PTB tokenizer (Java) + Bleu(4) + Rouge + Cider on the same rows,
checks that the BLEU/ROUGE-L/CIDEr-D outputs are equal, and prints the times and the ratio
(SPARCS has no pycocoevalcap peer; it is timed on its own and counted in capeval's total).
Target: capeval's total under 60 s on 2 cores.

Usage: python speed/bench_text_metrics.py [--cores 2] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from capeval.benchmarks import prepare
from capeval.scoring.ngram import bleu
from capeval.scoring.ngram import cider_d
from capeval.scoring.ngram import rouge_l
from capeval.scoring.smurf import sparcs_scores
from capeval.text.ptb import tokenize_corpus
from capeval.text.tokenize import smurf_preprocess


def timed(label: str, times: dict, function, *args):
    start = time.perf_counter()
    value = function(*args)
    times[label] = time.perf_counter() - start
    return value


def capeval_run(candidates, references, times):
    tokens = timed("PTB tokenization (Python)", times, tokenize_corpus, candidates, references)
    scores = {"bleu": timed("BLEU-1..4", times, lambda: bleu(*tokens)[1])}
    scores["rouge_l"] = timed("ROUGE-L", times, rouge_l, *tokens)
    scores["cider_d"] = timed("CIDEr-D", times, cider_d, *tokens)
    return scores


def sparcs_run(candidates, references, times):
    def run():
        return sparcs_scores([smurf_preprocess(c) for c in candidates],
                             [[smurf_preprocess(r) for r in refs] for refs in references])

    return timed("SPARCS", times, run)


def pycocoevalcap_run(candidates, references, times):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    def tokenize():
        tokenizer = PTBTokenizer()
        gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(references)})
        res = tokenizer.tokenize({i: [{"caption": c}] for i, c in enumerate(candidates)})
        return gts, res

    gts, res = timed("PTB tokenization (Java)", times, tokenize)
    scores = {"bleu": timed("BLEU-1..4", times, lambda: Bleu(4).compute_score(gts, res, verbose=0)[1])}
    scores["rouge_l"] = timed("ROUGE-L", times, lambda: Rouge().compute_score(gts, res)[1])
    scores["cider_d"] = timed("CIDEr-D", times, lambda: Cider().compute_score(gts, res)[1])
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2, help="pin the process to this many cores (0: no pinning)")
    parser.add_argument("--limit", type=int, help="only the first N rows")
    args = parser.parse_args()
    if args.cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cores])
    bench = prepare("flickr8k_expert")
    rows = bench.correlations[1].item[:args.limit]  # P2: 16,992 rated rows
    candidates = [bench.items.candidates[i] for i in rows]
    references = [bench.items.references[i] for i in rows]
    print(f"Flickr8k-Expert P2: {len(rows):,} rows, {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'} cores")

    ours, peer = {}, {}
    our_scores = capeval_run(candidates, references, ours)
    sparcs_run(candidates, references, ours)
    peer_scores = pycocoevalcap_run(candidates, references, peer)

    for name in ("bleu", "rouge_l", "cider_d"):
        difference = np.abs(np.asarray(our_scores[name], float) - np.asarray(peer_scores[name], float)).max()
        print(f"max |capeval - pycocoevalcap| {name}: {difference:.1e}")
    print("\n| step | capeval (s) | pycocoevalcap (s) |\n|---|---|---|")
    for (ours_label, ours_time), (_, peer_time) in zip(list(ours.items())[:4], peer.items()):
        print(f"| {ours_label.replace(' (Python)', '')} | {ours_time:.2f} | {peer_time:.2f} |")
    print(f"| SPARCS | {ours['SPARCS']:.2f} | — |")
    shared = sum(t for label, t in ours.items() if label != "SPARCS")
    total = sum(ours.values())
    print(f"\ncapeval total ({', '.join(ours)}): {total:.1f} s (target < 60 s)")
    print(f"BLEU+ROUGE-L+CIDEr-D incl. tokenization, cold vs cold (each side's first run in this process; the Java "
          f"tokenizer starts a JVM every call): capeval {shared:.1f} s vs pycocoevalcap {sum(peer.values()):.1f} s "
          f"-> {sum(peer.values()) / shared:.1f}x faster; load average (1 min) {os.getloadavg()[0]:.1f}")
    print("Warm vs warm, and whole processes: python speed/bench_coco.py")


if __name__ == "__main__":
    main()
