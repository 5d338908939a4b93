"""Speed and peak memory of UMIC with precomputed region features (CPU, or --device cuda): batched vs one caption per forward.

A randomly initialised UNITER-base (the real architecture: 12 layers, hidden 768, vocabulary 28996) stands in
for umic.pt, which cannot be downloaded here, and a WordPiece vocabulary built from the captions stands in for
bert-base-cased (captions then cost about one piece per word, as with the real vocabulary). Captions are the
Flickr8k-Expert candidates; every caption is paired with region features of one of two kinds:

  * the real BUTD sample (tests/assets/qace_butd_sample.npz, 36 boxes), and
  * synthetic 100-box fp16 features (UMIC's img_dbs store 100 and use 10-100 of them).

Prints captions/s of capeval's batched scorer (length-sorted batches; --batch-size, default the scorer's CPU
default of 16; the released scorer used 128 on GPU) and of a
one-caption-per-forward loop (the released scorer's behaviour at batch size 1), their ratio, the largest score
difference between them, and peak resident memory. Peak memory is the process's high-water mark: the loop runs
first, so the batched run's figure includes anything extra it needs.

Then, per --dtype (the scorer's forward-pass precision under torch.autocast; default float32 only), the batched
scorer's captions/s on each kind of features and its largest score difference from float32; --token-budget packs
those batches to a padded size instead of --batch-size.

Usage: python speed/bench_umic.py [--limit N] [--loop N] [--threads N] [--device cuda] [--dtype float32 bfloat16 ...]
       [--token-budget N]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from capeval.backbones.precision import DTYPES  # noqa: E402
from capeval.backbones.uniter import save_random_checkpoint, uniter_config  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.scoring.umic import UmicScorer  # noqa: E402
from capeval.vision.regions import RegionFeatures, as_region_features  # noqa: E402
from bench_karpathy import caption_words, save_wordpiece_tokenizer  # noqa: E402  (this folder is on sys.path when the script runs)
from timing import timed  # noqa: E402

SAMPLE_FEATURES = Path(__file__).resolve().parents[1] / "tests" / "assets" / "qace_butd_sample.npz"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def synthetic_regions(count: int, seed: int) -> list[RegionFeatures]:
    rng = np.random.default_rng(seed)
    regions = []
    for _ in range(count):
        x1, y1 = rng.random((2, 100)) * 0.6
        w, h = rng.random((2, 100)) * 0.4
        norm_bb = np.stack([x1, y1, x1 + w, y1 + h, w, h], axis=1).astype(np.float16)
        conf = np.sort(rng.random(100))[::-1].astype(np.float16)
        regions.append(RegionFeatures.from_butd(rng.random((100, 2048), dtype=np.float32).astype(np.float16), norm_bb, conf))
    return regions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=512, help="captions scored by the batched scorer")
    parser.add_argument("--loop", type=int, default=96, help="captions scored one by one (its rate is per caption)")
    parser.add_argument("--batch-size", type=int, default=None, help="captions per batch (default: the scorer's default)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--layers", type=int, default=12, help="transformer layers (12: UNITER-base; fewer for a quick check)")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=DTYPES, help="forward-pass precisions to time (default float32)")
    parser.add_argument("--token-budget", type=int, default=None, help="padded positions per batch in the per-dtype runs (default: --batch-size)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    captions = [row["candidate"] for row in load_benchmark("flickr8k_expert")][: args.limit]
    real = as_region_features(SAMPLE_FEATURES)
    synthetic = synthetic_regions(8, seed=0)
    with tempfile.TemporaryDirectory() as folder:
        # UMIC lower-cases captions itself: lower-cased words in a cased vocabulary, as with bert-base-cased.
        save_wordpiece_tokenizer(Path(folder), caption_words(captions), cased=True)
        checkpoint = save_random_checkpoint(Path(folder) / "umic-random-base.pt", uniter_config(num_hidden_layers=args.layers), seed=0, std=0.02)
        before = peak_rss_mib()
        scorer = UmicScorer(checkpoint, folder, device=args.device)
        model_mib = peak_rss_mib() - before
        where = torch.cuda.get_device_name() if scorer.device.type == "cuda" else "CPU"
        print(f"UMIC on {where}: UNITER-base ({args.layers} layers) with random weights ({sum(p.numel() for p in scorer.model.parameters()) / 1e6:.0f}M parameters), "
              f"{len(captions)} Flickr8k-Expert captions, vocabulary {len(scorer.tokenizer)}; torch threads = {torch.get_num_threads()}; "
              f"model load raised peak RSS by {model_mib:.0f} MiB")
        print("\n| features | run | captions | captions/s | seconds | peak RSS (MiB) |")
        print("|---|---|---|---|---|---|")
        summary = []
        pools = {"BUTD sample, 36 boxes": [real], "synthetic, 100 boxes": synthetic}
        for label, pool in pools.items():
            regions = [pool[i % len(pool)] for i in range(len(captions))]
            k = min(args.loop, len(captions))
            scorer.score(captions[:8], region_features=regions[:8])  # warm-up: oneDNN builds its kernels on first use
            loop, t_loop = timed(lambda: [scorer.score([c], region_features=[r], batch_size=1)["umic"][0] for c, r in zip(captions[:k], regions[:k])])
            loop_peak = peak_rss_mib()
            batched, t_batch = timed(lambda: scorer.score(captions, region_features=regions, batch_size=args.batch_size)["umic"])
            batch_peak = peak_rss_mib()
            diff = max(abs(a - b) for a, b in zip(loop, batched[:k]))
            print(f"| {label} | one by one | {k} | {k / t_loop:.1f} | {t_loop:.1f} | {loop_peak:.0f} |")
            print(f"| {label} | batched ({args.batch_size or 'default'}) | {len(captions)} | {len(captions) / t_batch:.1f} | {t_batch:.1f} | {batch_peak:.0f} |")
            summary.append(f"{label}: batched / one-by-one (warm vs warm: both after a warm-up call) = {(len(captions) / t_batch) / (k / t_loop):.1f}x, max |Δscore| = {diff:.1e}")
        print("\n" + "\n".join(summary))
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
        print("\n| features | dtype | batches | captions/s | seconds | max |Δscore| vs float32 |")
        print("|---|---|---|---|---|---|")
        for label, pool in pools.items():
            regions = [pool[i % len(pool)] for i in range(len(captions))]
            baseline = None
            for dtype in dict.fromkeys(["float32", *args.dtype]):  # float32 first: the others are compared with it
                precise = UmicScorer(checkpoint, folder, device=args.device, dtype=dtype, token_budget=args.token_budget)
                # Warm-up: one whole pass, so that every padded shape's kernels (lazily loaded on a GPU, and chosen per
                # shape and precision) are in place before the timed pass.
                precise.score(captions, region_features=regions, batch_size=args.batch_size)
                scores, seconds = timed(lambda: precise.score(captions, region_features=regions, batch_size=args.batch_size)["umic"])
                baseline = baseline or scores
                batches = f"budget {args.token_budget}" if args.token_budget else f"{args.batch_size or 'default'}"
                if dtype in args.dtype:
                    difference = max(abs(a - b) for a, b in zip(scores, baseline))
                    print(f"| {label} | {dtype} | {batches} | {len(captions) / seconds:.1f} | {seconds:.1f} | {difference:.1e} |")


if __name__ == "__main__":
    main()
