"""Fixtures for the CLIP-S / PAC-S tests: a small random CLIP saved as transformers saves one (with a small BPE
vocabulary in OpenAI CLIP's layout), random weights written directly in OpenAI CLIP's key layout (as PAC-S's
checkpoint holds them), images in every PIL mode and captions that the released text cleaning changes."""

import io

import numpy as np
import pytest
import torch
from PIL import Image

from capeval.backbones.clip import save_random_clip

#: The small CLIP's sizes (save_random_clip's defaults).
WIDTH, LAYERS, HEADS, EMBED, PATCH = 32, 2, 4, 16, 32

CAPTIONS = [
    "A dog runs on the grass.",
    "the \u201cdog\u201d isn\u2019t on the sofa",          # curly quotes
    "a \ufb01eld of red \ufb02owers",                        # ligatures
    "a cat &amp;amp; a dog &lt;3 &quot;sofa&quot;",          # HTML entities, escaped twice
    "\uff24\uff2f\uff27 \uff49\uff4e the street",            # full-width letters
    "a dog \U0001F436 and a cat \U0001F431",                 # emoji
    "caf\u00c3\u00a9 on the street",                          # mojibake ftfy repairs
    " ".join(["two people riding a red horse"] * 16),        # over 77 tokens
    "a man <|endoftext|> riding a horse",                    # an embedded end-of-text
    "",
    "  A   MAN\triding\n a horse  ",
]


def random_rgb(width: int, height: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def exif_rotated_jpeg() -> bytes:
    """A 40 × 90 JPEG whose EXIF orientation (6) says to rotate it: the released code ignores that."""
    image = Image.fromarray(random_rgb(40, 90, 7))
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", exif=exif.tobytes(), quality=95)
    return buffer.getvalue()


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def image_zoo() -> dict[str, object]:
    """Images as users pass them: PIL images in every mode, encoded bytes, odd sizes."""
    rgb = Image.fromarray(random_rgb(64, 48, 1))
    rgba = np.dstack([random_rgb(50, 70, 2), np.random.default_rng(3).integers(0, 256, (70, 50), dtype=np.uint8)])
    return {
        "RGB": rgb,
        "L": Image.fromarray(random_rgb(33, 57, 4)[:, :, 0]),
        "RGBA": Image.fromarray(rgba, "RGBA"),
        "P": Image.fromarray(random_rgb(80, 60, 5)).convert("P", palette=Image.Palette.ADAPTIVE, colors=16),
        "CMYK": Image.fromarray(np.dstack([random_rgb(45, 45, 6), random_rgb(45, 45, 8)[:, :, :1]]), "CMYK"),
        "1": Image.fromarray(random_rgb(70, 30, 9)[:, :, 0] > 127),
        "1x1": Image.new("RGB", (1, 1), (200, 30, 90)),
        "wide": Image.fromarray(random_rgb(900, 3, 10)),
        # Resized to 299 × 224: the crop offset 37.5 rounds to 38 (not floor's 37).
        "odd-crop": Image.fromarray(random_rgb(301, 225, 11)),
        "png-bytes": png_bytes(Image.fromarray(random_rgb(120, 100, 12))),
        "exif-jpeg": exif_rotated_jpeg(),
    }


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory) -> str:
    return save_random_clip(tmp_path_factory.mktemp("tiny-clip"))


def random_openai_state(vocab_size: int, *, width: int = WIDTH, vision_width: int = WIDTH, layers: int = LAYERS,
                        embed: int = EMBED, patch: int = PATCH, positions: int = 77, seed: int = 1) -> dict[str, torch.Tensor]:
    """Random weights written directly in OpenAI CLIP's layout (a ViT at 224 pixels), wider than transformers'
    initialisation so that features and scores spread."""
    generator = torch.Generator().manual_seed(seed)

    def normal(*shape, std=0.05, mean=0.0):
        return torch.randn(*shape, generator=generator) * std + mean

    grid = (224 // patch) ** 2 + 1
    state = {"token_embedding.weight": normal(vocab_size, width, std=0.5), "positional_embedding": normal(positions, width, std=0.1),
             "ln_final.weight": normal(width, mean=1.0), "ln_final.bias": normal(width), "text_projection": normal(width, embed, std=0.2),
             "logit_scale": torch.tensor(4.6052), "visual.class_embedding": normal(vision_width, std=0.5),
             "visual.positional_embedding": normal(grid, vision_width, std=0.1),
             "visual.conv1.weight": normal(vision_width, 3, patch, patch, std=0.02),
             "visual.ln_pre.weight": normal(vision_width, mean=1.0), "visual.ln_pre.bias": normal(vision_width),
             "visual.ln_post.weight": normal(vision_width, mean=1.0), "visual.ln_post.bias": normal(vision_width),
             "visual.proj": normal(vision_width, embed, std=0.2)}
    for tower, w in (("", width), ("visual.", vision_width)):
        for i in range(layers):
            block = f"{tower}transformer.resblocks.{i}."
            state.update({f"{block}attn.in_proj_weight": normal(3 * w, w, std=0.2), f"{block}attn.in_proj_bias": normal(3 * w),
                          f"{block}attn.out_proj.weight": normal(w, w, std=0.2), f"{block}attn.out_proj.bias": normal(w),
                          f"{block}ln_1.weight": normal(w, mean=1.0), f"{block}ln_1.bias": normal(w),
                          f"{block}ln_2.weight": normal(w, mean=1.0), f"{block}ln_2.bias": normal(w),
                          f"{block}mlp.c_fc.weight": normal(4 * w, w, std=0.2), f"{block}mlp.c_fc.bias": normal(4 * w),
                          f"{block}mlp.c_proj.weight": normal(w, 4 * w, std=0.2), f"{block}mlp.c_proj.bias": normal(w)})
    return state


def vocabulary_size(folder: str) -> int:
    import json

    from pathlib import Path

    return len(json.loads(Path(folder, "vocab.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="session")
def openai_state(tiny_clip) -> dict[str, torch.Tensor]:
    """Random weights written directly in OpenAI CLIP's layout at the small CLIP's sizes."""
    return random_openai_state(vocabulary_size(tiny_clip))


@pytest.fixture(scope="session")
def pac_checkpoint(tmp_path_factory, openai_state) -> str:
    """``openai_state`` saved as PAC-S ships clip_ViT-B-32.pth: ``{"state_dict": ...}``."""
    path = tmp_path_factory.mktemp("pac") / "clip_ViT-B-32.pth"
    torch.save({"state_dict": openai_state}, path)
    return str(path)


@pytest.fixture(scope="session")
def spread_clip(tmp_path_factory, tiny_clip, openai_state) -> str:
    """The small CLIP's folder with ``openai_state``'s weights (wider than transformers' initialisation, so scores
    spread on both sides of CLIP-S's clip at 0)."""
    import shutil

    from transformers import CLIPModel

    from capeval.backbones.clip import openai_to_transformers
    from capeval.backbones.common import load_checked

    folder = tmp_path_factory.mktemp("spread-clip")
    shutil.copytree(tiny_clip, folder, dirs_exist_ok=True)
    model = CLIPModel.from_pretrained(tiny_clip, dtype=torch.float32)
    load_checked(model, openai_to_transformers(openai_state), what="test weights")
    model.save_pretrained(folder)
    return str(folder)
