"""Speed of Polos (CPU, or --device cuda): one call over a corpus vs one call per caption.

Random weights of the real sizes stand in for the released models, which cannot be downloaded here: a
RoBERTa-base (12 layers, hidden 768) with a byte-level BPE vocabulary trained on the captions, CLIP ViT-B/32
(transformers' default ``CLIPConfig``) and the released head (6144 → 2304 → 1152 → 1). Rows are the first
``--limit`` Flickr8k-Expert rows (candidates of one image share its five references), each with a synthetic
500 × 375 image per Flickr8k image.

Prints captions/s of capeval's scorer on the whole list (each distinct text and image encoded once, in batches)
and of a loop that scores one caption per call (what the released ``predict`` does at batch size 1, the
metric's definition), their ratio and the largest score difference.

Usage: python benchmarks/bench_polos.py [--limit N] [--threads N] [--device cuda]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from capeval.backbones.clip import save_random_clip  # noqa: E402
from capeval.backbones.polos import save_random_polos  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.scoring.polos import PolosScorer  # noqa: E402
from bench_karpathy import FULL, save_roberta  # noqa: E402  (this folder is on sys.path when the script runs)


def save_clip_b32(folder: Path) -> str:
    """transformers' default CLIPConfig (ViT-B/32 sizes) with the small tokenizer of :func:`save_random_clip`."""
    from transformers import CLIPConfig, CLIPModel

    save_random_clip(folder)
    CLIPModel(CLIPConfig()).eval().save_pretrained(folder)
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    benchmark = load_benchmark("flickr8k_expert")
    rows = [benchmark[i] for i in range(args.limit)]
    folder = Path(tempfile.mkdtemp())
    rng = np.random.default_rng(0)
    images = {}
    for row in rows:
        if row["image_file"] not in images:
            path = folder / row["image_file"]
            Image.fromarray(rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)).save(path)
            images[row["image_file"]] = str(path)
    captions = [row["candidate"] for row in rows]
    references = [list(row["references"]) for row in rows]
    caption_images = [images[row["image_file"]] for row in rows]

    roberta = save_roberta(folder / "roberta", [*captions, *(r for refs in references for r in refs)], **FULL["roberta_base"])
    clip = save_clip_b32(folder / "clip")
    checkpoint = save_random_polos(folder / "reprod", roberta, clip, hidden_sizes=(2304, 1152))
    scorer = PolosScorer(checkpoint, clip_model=clip, device=args.device)
    scorer.score(captions[:1], references[:1], images=caption_images[:1])  # load the models first

    start = time.perf_counter()
    one_call = scorer.score(captions, references, images=caption_images)["polos"]
    corpus_seconds = time.perf_counter() - start
    start = time.perf_counter()
    per_caption = [scorer.score([c], [r], images=[i])["polos"][0] for c, r, i in zip(captions, references, caption_images)]
    loop_seconds = time.perf_counter() - start

    texts = len(set(captions) | {r for refs in references for r in refs})
    print(f"{len(rows)} captions, {sum(map(len, references))} references ({texts} distinct texts), {len(images)} images; "
          f"device {args.device}, {args.threads} threads")
    print(f"one call:         {len(rows) / corpus_seconds:8.2f} captions/s ({corpus_seconds:.2f} s)")
    print(f"one per caption:  {len(rows) / loop_seconds:8.2f} captions/s ({loop_seconds:.2f} s)")
    # Polos keeps nothing across calls, so both runs are warm only in that the models were loaded beforehand.
    print(f"speed-up (warm vs warm: models loaded by a first call, nothing cached across calls): {loop_seconds / corpus_seconds:.1f}x; "
          f"largest score difference {np.abs(np.subtract(one_call, per_caption)).max():.2e}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
