"""Speed of CLIP-S + RefCLIP-S on CPU (or --device cuda): capeval's scorer against a one-pair-per-forward loop.

A randomly initialised CLIP with ViT-B/32's sizes (vision 768 × 12 layers, text 512 × 12 layers, projection 512)
stands in for openai/clip-vit-base-patch32, which cannot be downloaded here; its BPE vocabulary is built from the
captions' words (so a caption costs about one token per word, as with the real vocabulary). Rows are the first
--limit Flickr8k-Expert rows: a candidate and the five references of its image, about six candidates per image.
The Flickr8k images are not bundled, so each image file gets its own synthetic 500 × 375 JPEG
(--distinct-images: each row its own, so that decoding weighs as it does with one caption per image).

Two ways to score the same rows, both with the released preprocessing (mode="code"):

* loop: what the released code's per-item work amounts to without batching: for every row, the image and the
  caption are encoded in their own forward passes (text padded to 77 ids, as clip.tokenize pads), then each
  reference in its own forward pass; nothing is reused;
* capeval: ClipScoreScorer.score on all rows: images and texts in batches (text padded to the batch's longest),
  each distinct image and text encoded once per call.

Each runs twice: cold (capeval's text and image caches empty) and warm (capeval's second call finds every text
and image in its caches, so it decodes no image; the loop has no cache, so its second run measures the same work). Printed: captions/s, seconds, the
speed-up of cold vs cold and warm vs warm, and the largest difference between the loop's and capeval's scores.

Then capeval alone, cold and warm, for each --num-workers (processes decoding images ahead of the forward pass)
and each --dtype (forward passes under torch.autocast), with the largest and mean per-caption difference of
CLIP-S and RefCLIP-S from float32.

Usage: python speed/bench_clip.py [--limit N] [--threads N] [--device cuda] [--num-workers 0 2] [--dtype float32 bfloat16]
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from capeval.backbones.clip import released_pixels, save_random_clip  # noqa: E402
from capeval.backbones.precision import DTYPES  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.finite import unit_rows  # noqa: E402
from capeval.scoring.clip import ClipScoreScorer, harmonic_mean  # noqa: E402
from capeval.vision.images import open_image  # noqa: E402
from timing import timed  # noqa: E402  (this folder is on sys.path when the script runs)


def synthetic_jpeg(seed: int) -> bytes:
    """A smooth random 500 × 375 image (upsampled noise), JPEG-encoded as a photo would be."""
    noise = np.random.default_rng(seed).integers(0, 256, (12, 16, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noise).resize((500, 375), Image.Resampling.BILINEAR).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def caption_words(rows) -> list[str]:
    texts = [row["candidate"] for row in rows] + [ref for row in rows for ref in row["references"]] + ["A photo depicts"]
    return sorted({word for text in texts for word in text.lower().split()})


@torch.inference_mode()
def one_pair_per_forward(scorer: ClipScoreScorer, captions, references, images) -> tuple[list[float], list[float]]:
    """CLIP-S and RefCLIP-S with one forward pass per image, caption and reference, texts padded to 77 ids."""
    encoder = scorer.encoder
    model = encoder.model

    def text(caption: str) -> np.ndarray:
        ids = encoder.token_ids([scorer.prefix + caption], "code")[0][0]
        padded = torch.tensor([ids + [0] * (encoder.context_length - len(ids))], device=encoder.device)
        hidden = model.text_model(input_ids=padded).last_hidden_state
        return model.text_projection(hidden[:, len(ids) - 1]).cpu().numpy()

    def unit(features: np.ndarray, caption: str) -> np.ndarray:
        return unit_rows(features, items=[caption], what="CLIP features", model=scorer.model_name)

    clip_s, refclip_s = [], []
    for caption, refs, image in zip(captions, references, images):
        pixels = torch.from_numpy(released_pixels(open_image(image))[None]).to(encoder.device)
        image_row = unit(model.visual_projection(model.vision_model(pixel_values=pixels).pooler_output).cpu().numpy(), caption)
        caption_row = unit(text(caption), caption)
        a = scorer.w * np.clip(np.sum(image_row * caption_row, axis=1), 0, None)
        b = np.array([max(float(caption_row[0].dot(unit(text(ref), ref)[0])) for ref in refs)], dtype=np.float32)
        clip_s.append(float(a[0]))
        refclip_s.append(float(harmonic_mean(a, b)[0]))
    return clip_s, refclip_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=60, help="Flickr8k-Expert rows scored (default 60)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--distinct-images", action="store_true", help="one synthetic image per row (default: per image file)")
    parser.add_argument("--num-workers", type=int, nargs="+", default=[], help="image-decoding workers to time capeval with")
    parser.add_argument("--dtype", nargs="+", default=[], choices=DTYPES, help="forward-pass precisions to time capeval with")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    rows = list(load_benchmark("flickr8k_expert").select(range(args.limit)))
    files = list(range(len(rows))) if args.distinct_images else list(dict.fromkeys(row["image_file"] for row in rows))
    jpegs = {name: synthetic_jpeg(seed) for seed, name in enumerate(files)}
    captions = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    images = list(jpegs.values()) if args.distinct_images else [jpegs[row["image_file"]] for row in rows]
    with tempfile.TemporaryDirectory() as folder:
        save_random_clip(folder, words=caption_words(rows), hidden_size=512, vision_width=768, layers=12, heads=8, projection_dim=512)
        scorer = ClipScoreScorer(model_name=folder, device=args.device)
        encoder = scorer.encoder
        where = torch.cuda.get_device_name() if scorer.device.type == "cuda" else "CPU"
        parameters = sum(p.numel() for p in encoder.model.parameters()) / 1e6
        print(f"CLIP-S + RefCLIP-S on {where}: random CLIP with ViT-B/32 sizes ({parameters:.0f}M parameters); "
              f"{len(rows)} Flickr8k-Expert rows, {len(files)} images, {sum(map(len, references))} references; "
              f"torch threads = {torch.get_num_threads()}")
        scorer.score(captions[:2], references[:2], images=images[:2])  # warm-up: oneDNN builds its kernels on first use
        encoder.clear_caches()

        loop_cold, t_loop_cold = timed(lambda: one_pair_per_forward(scorer, captions, references, images))
        ours_cold, t_ours_cold = timed(lambda: scorer.score(captions, references, images=images))
        loop_warm, t_loop_warm = timed(lambda: one_pair_per_forward(scorer, captions, references, images))
        ours_warm, t_ours_warm = timed(lambda: scorer.score(captions, references, images=images))

        n = len(rows)
        print("\n| run | cache | captions/s | seconds |")
        print("|---|---|---|---|")
        for label, cache, seconds in (("one pair per forward", "cold", t_loop_cold), ("capeval", "cold (caches empty)", t_ours_cold),
                                      ("one pair per forward", "warm (second run)", t_loop_warm), ("capeval", "warm (texts and images cached)", t_ours_warm)):
            print(f"| {label} | {cache} | {n / seconds:.2f} | {seconds:.1f} |")
        diff = max(max(abs(a - b) for a, b in zip(loop[0], ours["clip_s"])) for loop, ours in ((loop_cold, ours_cold), (loop_warm, ours_warm)))
        ref_diff = max(max(abs(a - b) for a, b in zip(loop[1], ours["refclip_s"])) for loop, ours in ((loop_cold, ours_cold), (loop_warm, ours_warm)))
        print(f"\ncold vs cold: capeval is {t_loop_cold / t_ours_cold:.1f}x faster; warm vs warm: {t_loop_warm / t_ours_warm:.1f}x")
        print(f"max |Δ CLIP-S| = {diff:.1e}, max |Δ RefCLIP-S| = {ref_diff:.1e} (loop vs capeval)")
        variants = [dict(num_workers=workers) for workers in args.num_workers] + [dict(dtype=dtype) for dtype in args.dtype]
        if variants:
            print("\n| capeval | cold captions/s | warm captions/s | max / mean |Δ CLIP-S| | max / mean |Δ RefCLIP-S| |")
            print("|---|---|---|---|---|")
        for options in variants:
            variant = ClipScoreScorer(model_name=folder, device=args.device, **options)
            variant.score(captions[:2], references[:2], images=images[:2])
            variant.encoder.clear_caches()
            cold, t_cold = timed(lambda: variant.score(captions, references, images=images))
            _, t_warm = timed(lambda: variant.score(captions, references, images=images))
            gaps = [np.abs(np.array(cold[column]) - np.array(ours_cold[column])) for column in ("clip_s", "refclip_s")]
            label = ", ".join(f"{key}={value}" for key, value in options.items())
            print(f"| {label} | {n / t_cold:.2f} | {n / t_warm:.2f} | "
                  + " | ".join(f"{gap.max():.1e} / {gap.mean():.1e}" for gap in gaps) + " |")


if __name__ == "__main__":
    main()
