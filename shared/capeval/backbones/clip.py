"""CLIP as CLIPScore (Hessel et al., EMNLP 2021; jmhessel/clipscore), PAC-S (Sarto et al., CVPR 2023;
aimagelab/pacscore) and PAC-S++ (Sarto et al., IJCV 2025) run it, on transformers' ``CLIPModel``.

Both released scorers prepare inputs with OpenAI's ``clip`` package, which transformers' processor and tokenizer
do not reproduce. Mode ``"code"`` (:func:`released_token_ids`, :func:`released_pixels`) does what the released code
does:

* text: ftfy's ``fix_text``, HTML entities unescaped twice, whitespace collapsed, lower-cased, then CLIP's BPE;
  the ids framed by ``<|startoftext|>`` and ``<|endoftext|>``, cut to the text tower's context (its
  ``max_position_embeddings``: 77, LongCLIP's 248) with the last one forced to ``<|endoftext|>``
  (:func:`cut_to_context`; :meth:`ClipEncoder.truncated` says which texts were cut);
* images: opened as stored (no EXIF rotation), resized (bicubic, short side 224, long side truncated) and
  center-cropped (offset rounded half to even) **in the image's own mode**, only then converted to RGB (palette
  and 1-bit images are resized nearest-neighbour, RGBA premultiplied and its alpha then dropped), scaled to
  [0, 1] and normalised with CLIP's mean and std in float32 (:class:`PixelStatistics`: the image tower's input size,
  and open_clip's 0.5 for PAC-S's OpenCLIP ViT-L/14).

Mode ``"hf"`` feeds the same text and images to transformers' ``CLIPTokenizer`` and ``CLIPImageProcessor`` as they
are. Either way text features are pooled at the **first** ``<|endoftext|>`` (so one inside a caption ends it there),
as OpenAI's ``encode_text`` does.

:class:`ClipEncoder` encodes batches, each distinct image and text once per call, and keeps both text and image
features in bounded caches across calls (:class:`FeatureRowCache`), so a later call decodes and encodes only the images
and texts it has not seen. Images are decoded and preprocessed in a ``torch.utils.data.DataLoader``
(:class:`ImagePixels`), in worker processes when asked, so decoding overlaps the forward pass. The model's weights
stay float32; a reduced ``dtype`` runs the forward passes under ``torch.autocast``
(:func:`~capeval.backbones.precision.autocast_forward`) and features come back as float32.

:func:`openai_to_transformers` maps an OpenAI-layout state dict (the layout of PAC-S's
``clip_ViT-B-32.pth`` and of LongCLIP's ``longclip-L.pt``) onto ``CLIPModel``'s keys; :func:`transformers_to_openai` is
its inverse. :func:`fold_pac_lora` turns a PAC-S++ checkpoint (OpenAI's keys plus rank-4 LoRA factors) into the plain
weights that compute what the released loading path computes.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import multiprocessing
import os
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import regex
import torch

from ..checkpoints import load_checked, read_state_dict
from ..models import BoundedCache, ModelUnavailableError, cached, load_pretrained, resolve_device
from ..vision.images import ImageLoadError, image_digest, open_image
from .common import length_batches, pad_ids
from .precision import autocast_forward

#: OpenAI CLIP's context length: token ids per text, ``<|startoftext|>`` and ``<|endoftext|>`` included.
CONTEXT_LENGTH = 77
#: The input resolution of ViT-B/32.
IMAGE_SIZE = 224
#: The per-channel mean and standard deviation CLIP's preprocessing normalises with.
CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)
DEFAULT_MODEL = "openai/clip-vit-base-patch32"
START_OF_TEXT, END_OF_TEXT = "<|startoftext|>", "<|endoftext|>"
#: Text features kept across calls per encoder (512 floats each for ViT-B/32: ~100 MB), more than the 25,000 texts
#: (captions and references) of a COCO Karpathy test split call, which a smaller bound would evict in turn.
TEXT_CACHE_SIZE = 50_000
#: Image features kept across calls per encoder (512 floats each for ViT-B/32: ~40 MB), more than the 5,000 images
#: of COCO's Karpathy test split, so scoring several systems' captions of them decodes each image once.
IMAGE_CACHE_SIZE = 20_000
#: At most this many image-decoding workers by default on CUDA. On an H100, 4 took CLIP-S with one image per caption
#: from 176 to 283 captions/s (docs/speed.md); a cold call is bound by decoding and resizing JPEGs on the CPU, so the
#: default takes every core of a GPU host, up to this many.
MAX_DEFAULT_WORKERS = 32


def clean_text(text: str) -> str:
    """Text as OpenAI's CLIP tokenizer sees it before BPE.

    >>> clean_text("  A  caf\u00e9 &amp;amp; the \u201cDOG\u201d\\n")
    'a café & the "dog"'
    """
    try:
        import ftfy
    except ImportError as error:
        raise ImportError("CLIP-S and PAC-S clean text with ftfy as the released code does: pip install capeval[clip] "
                          "(or pass mode='hf')") from error
    # ftfy and html.unescape leave printable ASCII without "&" as it is (tested), so most captions need neither.
    if not (text.isascii() and text.isprintable() and "&" not in text):
        text = html.unescape(html.unescape(ftfy.fix_text(text)))
    # The `regex` module's \s, as the released tokenizer uses (Python's re counts a few more characters as space).
    return regex.sub(r"\s+", " ", text).strip().lower()


def released_token_ids(texts: Sequence[str], tokenizer: Any) -> list[list[int]]:
    """``clip.tokenize``'s ids before its cut to the context (:func:`cut_to_context`): cleaned text
    (:func:`clean_text`) through the BPE of ``tokenizer`` (a ``CLIPTokenizer``), framed by start and end ids."""
    start, end = tokenizer.convert_tokens_to_ids([START_OF_TEXT, END_OF_TEXT])
    # Unlimited here (cut by the encoder, which counts what it cuts), so no warning about lengths over the model's.
    pieces = tokenizer([clean_text(text) for text in texts], add_special_tokens=False, verbose=False)["input_ids"]
    return [[start, *ids, end] for ids in pieces]


def hf_token_ids(texts: Sequence[str], tokenizer: Any) -> list[list[int]]:
    """``CLIPTokenizer`` as it is (its own normalisation), before the cut to the context."""
    return tokenizer(list(texts), verbose=False)["input_ids"]


def cut_to_context(ids: Sequence[int], context_length: int) -> list[int]:
    """Framed ``ids`` cut as ``clip.tokenize(truncate=True)`` cuts them (and ``CLIPTokenizer`` with truncation):
    the first ``context_length``, the last of them replaced by the end id.

    >>> cut_to_context([1, 5, 6, 7, 2], 4), cut_to_context([1, 5, 2], 4)
    ([1, 5, 6, 2], [1, 5, 2])
    """
    return list(ids) if len(ids) <= context_length else [*ids[: context_length - 1], ids[-1]]


def released_pixels(image: Any, *, size: int = IMAGE_SIZE, mean: np.ndarray = CLIP_MEAN, std: np.ndarray = CLIP_STD) -> np.ndarray:
    """CLIP's preprocessing of an image opened as stored (a PIL image in any mode) at ``size`` pixels, normalised with
    ``mean`` and ``std``: 3 × size × size float32.

    >>> from PIL import Image
    >>> released_pixels(Image.new("P", (300, 7))).shape
    (3, 224, 224)
    """
    from PIL import Image

    width, height = image.size
    short, long = min(width, height), max(width, height)
    new_long = int(size * long / short)
    resized = (size, new_long) if width <= height else (new_long, size)
    if resized != image.size:
        image = image.resize(resized, Image.Resampling.BICUBIC)
    left, top = (int(round((side - size) / 2)) for side in resized)
    image = image.crop((left, top, left + size, top + size)).convert("RGB")
    scaled = np.asarray(image, dtype=np.uint8).astype(np.float32) / np.float32(255)
    return ((scaled - mean) / std).transpose(2, 0, 1)


# --------------------------------------------------------------------------- OpenAI <-> transformers layout


def _layer_pairs(openai_prefix: str, hf_prefix: str, layers: int) -> Iterator[tuple[str, str]]:
    """(OpenAI key, transformers key) of every residual block's parameters except the fused attention input."""
    for i in range(layers):
        block, layer = f"{openai_prefix}transformer.resblocks.{i}.", f"{hf_prefix}encoder.layers.{i}."
        for openai_name, hf_name in (("attn.out_proj", "self_attn.out_proj"), ("ln_1", "layer_norm1"),
                                     ("ln_2", "layer_norm2"), ("mlp.c_fc", "mlp.fc1"), ("mlp.c_proj", "mlp.fc2")):
            for kind in ("weight", "bias"):
                yield f"{block}{openai_name}.{kind}", f"{layer}{hf_name}.{kind}"


def _key_pairs(text_layers: int, vision_layers: int) -> list[tuple[str, str]]:
    """(OpenAI key, transformers key) of every tensor the two layouts store alike (projections are transposed,
    attention inputs fused in OpenAI's layout: see :func:`openai_to_transformers`)."""
    pairs = [("token_embedding.weight", "text_model.embeddings.token_embedding.weight"),
             ("positional_embedding", "text_model.embeddings.position_embedding.weight"),
             ("ln_final.weight", "text_model.final_layer_norm.weight"), ("ln_final.bias", "text_model.final_layer_norm.bias"),
             ("visual.class_embedding", "vision_model.embeddings.class_embedding"),
             ("visual.positional_embedding", "vision_model.embeddings.position_embedding.weight"),
             ("visual.conv1.weight", "vision_model.embeddings.patch_embedding.weight"),
             ("visual.ln_pre.weight", "vision_model.pre_layrnorm.weight"), ("visual.ln_pre.bias", "vision_model.pre_layrnorm.bias"),
             ("visual.ln_post.weight", "vision_model.post_layernorm.weight"), ("visual.ln_post.bias", "vision_model.post_layernorm.bias"),
             ("logit_scale", "logit_scale")]
    pairs += _layer_pairs("", "text_model.", text_layers)
    pairs += _layer_pairs("visual.", "vision_model.", vision_layers)
    return pairs


def _attention_blocks(text_layers: int, vision_layers: int) -> Iterator[tuple[str, str]]:
    """(OpenAI block prefix, transformers attention prefix) of every attention layer."""
    for openai_prefix, hf_prefix, layers in (("", "text_model.", text_layers), ("visual.", "vision_model.", vision_layers)):
        for i in range(layers):
            yield f"{openai_prefix}transformer.resblocks.{i}.attn.", f"{hf_prefix}encoder.layers.{i}.self_attn."


_PROJECTIONS = (("text_projection", "text_projection.weight"), ("visual.proj", "visual_projection.weight"))
#: Entries of an OpenAI state dict that are not weights (``clip.build_model`` drops them too).
_OPENAI_METADATA = ("input_resolution", "context_length", "vocab_size")


def _count_layers(keys: Sequence[str], prefix: str) -> int:
    indices = {int(key[len(prefix):].split(".")[0]) for key in keys if key.startswith(prefix)}
    return max(indices) + 1 if indices else 0


#: LongCLIP's text positions taken from its ``positional_embedding``; the later ones come from
#: ``positional_embedding_res`` (its ``encode_text`` adds both tables under complementary 0/1 masks).
LONGCLIP_KEPT_POSITIONS = 20


def openai_to_transformers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """An OpenAI CLIP (ViT) state dict with ``CLIPModel``'s keys: fused attention inputs split into q, k and v,
    projections transposed; LongCLIP's two position tables (``positional_embedding`` and
    ``positional_embedding_res``) become the one table its text tower adds (:data:`LONGCLIP_KEPT_POSITIONS`).
    Unknown keys are kept as they are, so :func:`~capeval.checkpoints.load_checked` reports them."""
    state = {key: value for key, value in state.items() if key not in _OPENAI_METADATA}
    residual = state.pop("positional_embedding_res", None)
    if residual is not None and "positional_embedding" in state:
        kept = LONGCLIP_KEPT_POSITIONS
        state["positional_embedding"] = torch.cat([state["positional_embedding"][:kept], residual[kept:]])
    text_layers = _count_layers(list(state), "transformer.resblocks.")
    vision_layers = _count_layers(list(state), "visual.transformer.resblocks.")
    mapped = {}
    for openai_key, hf_key in _key_pairs(text_layers, vision_layers):
        if openai_key in state:
            mapped[hf_key] = state.pop(openai_key)
    for openai_key, hf_key in _PROJECTIONS:
        if openai_key in state:
            mapped[hf_key] = state.pop(openai_key).t().contiguous()
    for block, attention in _attention_blocks(text_layers, vision_layers):
        for kind in ("weight", "bias"):
            fused = state.pop(f"{block}in_proj_{kind}", None)
            if fused is not None:
                for name, part in zip(("q_proj", "k_proj", "v_proj"), fused.chunk(3)):
                    mapped[f"{attention}{name}.{kind}"] = part.contiguous()
    return {**mapped, **state}


def transformers_to_openai(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``CLIPModel``'s state dict in OpenAI CLIP's layout (the inverse of :func:`openai_to_transformers`)."""
    text_layers = _count_layers(list(state), "text_model.encoder.layers.")
    vision_layers = _count_layers(list(state), "vision_model.encoder.layers.")
    converted = {openai_key: state[hf_key] for openai_key, hf_key in _key_pairs(text_layers, vision_layers)}
    converted.update({openai_key: state[hf_key].t().contiguous() for openai_key, hf_key in _PROJECTIONS})
    for block, attention in _attention_blocks(text_layers, vision_layers):
        for kind in ("weight", "bias"):
            converted[f"{block}in_proj_{kind}"] = torch.cat([state[f"{attention}{name}.{kind}"] for name in ("q_proj", "k_proj", "v_proj")])
    return converted


# --------------------------------------------------------------------------- PAC-S++'s LoRA checkpoints

#: PAC-S++'s LoRA rank: the released ``compute_correlations_pac++.py`` builds ``clip_lora.load(..., lora=4)``, whose
#: layers keep ``lora_alpha`` 1, so every factor product ``B @ A`` counts with the scaling 1 / 4.
LORA_RANK = 4
LORA_ALPHA = 1
#: Per residual block of either tower: (weight, factor A, factor B, whether the released loading path uses the factors)
#: of each LoRA layer. The attention's fused input and output projections add their factors inside every forward
#: pass. The MLP's are ``Linear`` layers that merged their (then zero) factors when ``build_model`` called ``eval()``
#: and stay marked merged after the checkpoint is loaded, so they run on the checkpoint's weights as stored.
_BLOCK_LORA = (("attn.in_proj_weight", "attn.in_proj_weight_lora_A", "attn.in_proj_weight_lora_B", True),
               ("attn.out_proj.weight", "attn.out_proj.lora_A", "attn.out_proj.lora_B", True),
               ("mlp.c_fc.weight", "mlp.c_fc.lora_A", "mlp.c_fc.lora_B", False),
               ("mlp.c_proj.weight", "mlp.c_proj.lora_A", "mlp.c_proj.lora_B", False))
#: The ViT's patch embedding: a LoRA ``Conv2d`` that merges only in its own ``eval()``, which the parent's ``eval()``
#: does not call, so its factors are added in every forward pass.
_PATCH_LORA = ("visual.conv1.weight", "visual.conv1.lora_A", "visual.conv1.lora_B", True)
_LORA_ADVICE = ("Pass a checkpoint saved from the released PAC-S++ model (aimagelab/pacscore's clip_lora.load(..., lora=4), "
                "e.g. PAC++_clip_ViT-B-32.pth), or variant='pac-s' for a plain CLIP state dict.")


def lora_layers(state: Mapping[str, torch.Tensor]) -> list[tuple[str, str, str, bool]]:
    """(weight, factor A, factor B, used) keys of every LoRA layer of the released PAC-S++ ViT model with the residual
    blocks of ``state`` (:data:`_BLOCK_LORA`, :data:`_PATCH_LORA`)."""
    layers = [_PATCH_LORA]
    for tower in ("", "visual."):
        for i in range(_count_layers(list(state), f"{tower}transformer.resblocks.")):
            block = f"{tower}transformer.resblocks.{i}."
            layers += [(block + weight, block + a, block + b, used) for weight, a, b, used in _BLOCK_LORA]
    return layers


def lora_factor_shapes(weight_shape: Sequence[int], rank: int = LORA_RANK) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shapes of factors A and B of a LoRA layer over a weight of ``weight_shape``: a linear layer's
    (out, in) takes r × in and out × r, a square-kernel convolution's (out, in, k, k) r·k × in·k and out·k × r·k.

    >>> lora_factor_shapes((96, 32)), lora_factor_shapes((64, 3, 14, 14))
    (((4, 32), (96, 4)), ((56, 42), (896, 56)))
    """
    out, inputs, *kernel = weight_shape
    k = kernel[0] if kernel else 1
    return (rank * k, inputs * k), (out * k, rank * k)


def fold_pac_lora(state: Mapping[str, torch.Tensor], *, what: str = "PAC-S++ checkpoint") -> dict[str, torch.Tensor]:
    """The plain OpenAI-layout weights that compute what the released PAC-S++ loading path computes from ``state``
    (the released model's state dict: OpenAI CLIP's keys plus rank-4 LoRA factors): the attention and
    patch-embedding weights with their factors added (``W + B @ A / 4``, as their forward passes add them), the MLP
    weights as stored, their factors dropped (:data:`_BLOCK_LORA`). So a checkpoint saved in train mode (MLP factors
    apart) and one saved after ``eval()`` (MLP factors already merged into the weights) both give the released
    numbers. Factors of another rank, or missing, extra or misshapen ones, raise
    :class:`~capeval.models.ModelUnavailableError` saying what to pass.

    >>> weights = {"visual.proj": torch.zeros(2, 2), "visual.conv1.weight": torch.zeros(2, 3, 1, 1)}
    >>> factors = {"visual.conv1.lora_A": torch.ones(4, 3), "visual.conv1.lora_B": torch.ones(2, 4)}
    >>> fold_pac_lora({**weights, **factors})["visual.conv1.weight"].flatten().tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    layers = lora_layers(state)
    expected = {}
    for weight, a, b, _ in layers:
        if weight in state:
            expected[a], expected[b] = lora_factor_shapes(state[weight].shape)
    factors = {key for key in state if "lora_" in key}
    first_a = next((layer[1] for layer in layers[1:] if layer[1] in state), None)
    if first_a is not None and state[first_a].ndim == 2 and state[first_a].shape[0] != LORA_RANK:
        raise ModelUnavailableError(f"The {what} holds LoRA factors of rank {state[first_a].shape[0]} ({first_a}: "
                                    f"{tuple(state[first_a].shape)}); PAC-S++ uses rank {LORA_RANK}. {_LORA_ADVICE}")
    missing = sorted(set(expected) - factors)
    unexpected = sorted(factors - set(expected))
    misshapen = sorted(key for key in factors & set(expected) if tuple(state[key].shape) != expected[key])
    if missing or unexpected or misshapen:
        found = "; ".join(f"{label}: {keys[:4]}{' …' if len(keys) > 4 else ''}"
                          for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", misshapen)) if keys)
        raise ModelUnavailableError(f"The {what} does not have PAC-S++'s LoRA layout (rank-{LORA_RANK} factors of every "
                                    f"attention, MLP and patch-embedding layer; {found}). {_LORA_ADVICE}")
    folded = {key: value for key, value in state.items() if key not in factors}
    for weight, a, b, used in layers:
        if used and weight in folded:
            delta = (state[b].double() @ state[a].double()).reshape(folded[weight].shape) * (LORA_ALPHA / LORA_RANK)
            folded[weight] = (folded[weight].double() + delta).float()
    return folded


def check_vit_layout(state: Mapping[str, torch.Tensor], *, what: str, lora: bool) -> None:
    """:class:`~capeval.models.ModelUnavailableError` for an OpenAI-layout state dict that ``CLIPModel`` cannot hold as
    asked: a ResNet CLIP (transformers has ViT towers only), or LoRA factors where none are expected (``lora``
    False: a PAC-S++ checkpoint loaded as a plain CLIP)."""
    if any(key.startswith("visual.layer1.") for key in state):
        raise ModelUnavailableError(f"The {what} is a ResNet CLIP (visual.layer1… keys); capeval runs CLIP on transformers' "
                                    "CLIPModel, which has ViT image towers only: use a ViT checkpoint (ViT-B/32, ViT-L/14).")
    positions = state.get("positional_embedding")
    if positions is not None and (positions.ndim != 2 or positions.shape[0] < 2):
        raise ModelUnavailableError(f"The {what}'s positional_embedding has shape {tuple(positions.shape)}: the text tower "
                                    "needs one row per position, at least 2 (the start and the end of a text).")
    if not lora and any("lora_" in key for key in state):
        raise ModelUnavailableError(f"The {what} holds LoRA factors (lora_A / lora_B keys): it is a PAC-S++ checkpoint. "
                                    "Score it with pac_score and variant='pac-s++'.")


# --------------------------------------------------------------------------- the encoder


@dataclasses.dataclass(frozen=True)
class PixelStatistics:
    """The input size of a CLIP's image tower and the per-channel mean and std its preprocessing normalises with."""

    size: int = IMAGE_SIZE
    mean: tuple[float, ...] = tuple(CLIP_MEAN.tolist())
    std: tuple[float, ...] = tuple(CLIP_STD.tolist())


def preprocessed_pixels(image: Any, *, mode: str, image_processor: Any = None,
                        statistics: PixelStatistics = PixelStatistics()) -> np.ndarray:
    """3 × size × size float32 pixels of a PIL image: :func:`released_pixels` with ``statistics`` (mode ``"code"``)
    or ``image_processor`` (a ``CLIPImageProcessor``, mode ``"hf"``)."""
    if mode == "code":
        return released_pixels(image, size=statistics.size, mean=np.asarray(statistics.mean, dtype=np.float32),
                               std=np.asarray(statistics.std, dtype=np.float32))
    return np.asarray(image_processor(images=[image], return_tensors="np")["pixel_values"][0], dtype=np.float32)


class ImagePixels(torch.utils.data.Dataset):
    """Images decoded as stored and preprocessed (:func:`preprocessed_pixels`) when indexed, for a ``DataLoader``
    whose workers decode ahead of the forward pass (``rgb_first``: converted to RGB before the preprocessing, as
    Polos' released code receives them). An image that cannot be decoded gives its
    :class:`~capeval.vision.images.ImageLoadError` as the item, so the caller raises it as it is rather than wrapped
    in a worker's traceback.

    >>> from PIL import Image
    >>> pixels = ImagePixels([Image.new("RGB", (300, 200)), b"not an image"], ["images[0]", "images[1]"], mode="code")
    >>> pixels[0].shape, pixels[1]
    ((3, 224, 224), ImageLoadError('images[1]: could not decode a bytes as an image (UnidentifiedImageError: cannot identify image file <_io.BytesIO object at ...>)'))
    """

    def __init__(self, items: Sequence[Any], names: Sequence[str], *, mode: str, image_processor: Any = None,
                 rgb_first: bool = False, statistics: PixelStatistics = PixelStatistics()):
        self.items, self.names = list(items), list(names)
        self.mode, self.image_processor, self.rgb_first, self.statistics = mode, image_processor, rgb_first, statistics

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> np.ndarray | ImageLoadError:
        try:
            image = open_image(self.items[index], name=self.names[index])
        except ImageLoadError as error:
            return error
        if self.rgb_first:
            image = image.convert("RGB")
        return preprocessed_pixels(image, mode=self.mode, image_processor=self.image_processor, statistics=self.statistics)


def stack_pixels(batch: Sequence[np.ndarray | ImageLoadError]) -> torch.Tensor | ImageLoadError:
    """A DataLoader batch of :class:`ImagePixels` items: N × 3 × 224 × 224, or the first item's decoding error."""
    arrays = []
    for item in batch:
        if isinstance(item, ImageLoadError):
            return item
        arrays.append(item)
    return torch.from_numpy(np.stack(arrays))


def decoded(batch: torch.Tensor | ImageLoadError) -> torch.Tensor:
    """The pixels of a :func:`stack_pixels` batch; its decoding error raised."""
    if isinstance(batch, ImageLoadError):
        raise batch
    return batch


def default_image_workers(device: torch.device) -> int:
    """Image-decoding worker processes when none are asked for: on CUDA one per CPU core this process may run on but
    one (the main process feeds the GPU), at most :data:`MAX_DEFAULT_WORKERS`, so decoding overlaps the GPU's forward
    pass; none on CPU (workers would take cores from the forward pass) or inside a daemonic process (which cannot
    start children)."""
    if device.type != "cuda" or multiprocessing.current_process().daemon:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(0, min(MAX_DEFAULT_WORKERS, cores - 1))


class FeatureRowCache(BoundedCache):
    """Feature rows by key, at most ``max_rows`` of them (:class:`~capeval.models.BoundedCache`). Rows are stored as
    read-only copies, so a cached row is exactly the row that was put and holds no whole batch alive as a view.

    >>> cache = FeatureRowCache(max_rows=2)
    >>> cache.put_many({"a": np.zeros(3)})
    >>> cache.get("a").flags.writeable
    False
    """

    def __init__(self, max_rows: int):
        super().__init__(max_rows)

    def put_many(self, values: Mapping[Any, np.ndarray]) -> None:
        copies = {key: np.array(row) for key, row in values.items()}
        for row in copies.values():
            row.flags.writeable = False
        super().put_many(copies)


class ClipEncoder:
    """A ``CLIPModel`` with its tokenizer (and image processor for mode ``"hf"``) that turns captions and images into
    projected float32 features, batched. Features stay in bounded caches across calls: text features keyed by the
    text and ``mode`` (:data:`TEXT_CACHE_SIZE` rows), image features by the image's content, ``mode`` and
    ``rgb_first`` (:data:`IMAGE_CACHE_SIZE` rows), so a text or image seen before is neither tokenized, decoded nor
    encoded again.

    Texts are cut to the text tower's context (its ``max_position_embeddings``: 77 for OpenAI's CLIPs, 248 for
    LongCLIP) as the released code cuts them, and :meth:`truncated` says which were. Images are preprocessed at the
    image tower's input size, normalised with ``pixel_statistics``' mean and std (default: CLIP's).
    ``dtype``: the precision of the forward passes (``torch.autocast``; the weights stay as loaded)."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, *, image_processor: Any = None, dtype: str = "float32",
                 pixel_statistics: PixelStatistics | None = None):
        self.model: Any = model  # a CLIPModel: its text_projection and vision_model are called
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.end_id = tokenizer.convert_tokens_to_ids(END_OF_TEXT)
        self.device = next(model.parameters()).device
        self.dtype = dtype
        config: Any = model.config  # a CLIPConfig
        self.context_length: int = config.text_config.max_position_embeddings
        self.pixel_statistics = pixel_statistics or PixelStatistics(size=config.vision_config.image_size)
        self._text_cache = FeatureRowCache(TEXT_CACHE_SIZE)
        self._image_cache = FeatureRowCache(IMAGE_CACHE_SIZE)
        self._truncated = BoundedCache(TEXT_CACHE_SIZE)

    def clear_caches(self) -> None:
        """Forget every text and image feature kept from earlier calls (a cold start, e.g. for a benchmark)."""
        self._text_cache.clear()
        self._image_cache.clear()
        self._truncated.clear()

    def token_ids(self, texts: Sequence[str], mode: str) -> tuple[list[list[int]], list[bool]]:
        """The ids of each text cut to the context (:func:`cut_to_context`), and whether each was longer and cut."""
        framed = released_token_ids(texts, self.tokenizer) if mode == "code" else hf_token_ids(texts, self.tokenizer)
        return [cut_to_context(ids, self.context_length) for ids in framed], [len(ids) > self.context_length for ids in framed]

    def truncated(self, texts: Sequence[str], *, mode: str) -> list[bool]:
        """Whether each text is longer than the context and cut to it: remembered from :meth:`text_features` (texts
        it has not seen, or no longer remembers, are tokenized)."""
        keys = [(mode, text) for text in texts]
        found = self._truncated.get_many(dict.fromkeys(keys))
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            flags: dict[Any, bool] = dict(zip(missing, self.token_ids([text for _, text in missing], mode)[1]))
            self._truncated.put_many(flags)
            found.update(flags)
        return [found[key] for key in keys]

    @torch.inference_mode()
    def _encode_ids(self, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        ids, mask = pad_ids(id_lists)
        ids, mask = ids.to(self.device), mask.to(self.device)
        with autocast_forward(self.device, self.dtype):
            hidden = self.model.text_model(input_ids=ids, attention_mask=mask).last_hidden_state
            # Pooled at the first end-of-text id, wherever padding or a caption's own <|endoftext|> puts later ones.
            first_end = (ids == self.end_id).int().argmax(dim=1)
            pooled = hidden[torch.arange(len(ids), device=self.device), first_end]
            features = self.model.text_projection(pooled)
        return features.float().cpu().numpy()

    def text_features(self, texts: Sequence[str], *, mode: str, batch_size: int) -> np.ndarray:
        """One projected float32 feature row per text, each distinct text encoded once and remembered for later calls
        (by text and ``mode``, so a remembered text is not even tokenized again)."""
        keys = [(mode, text) for text in texts]
        found = self._text_cache.get_many(dict.fromkeys(keys))
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        ids: dict[tuple[str, str], list[int]] = {}
        if missing:
            cut_ids, flags = self.token_ids([text for _, text in missing], mode)
            ids = dict(zip(missing, cut_ids))
            self._truncated.put_many(dict(zip(missing, flags)))
        for batch in length_batches(missing, batch_size, lambda key: len(ids[key])):
            encoded = dict(zip(batch, self._encode_ids([ids[key] for key in batch])))
            self._text_cache.put_many(encoded)
            found.update(encoded)
        return np.stack([found[key] for key in keys])

    def image_features(self, images: Sequence[Any], *, mode: str, batch_size: int, rgb_first: bool = False,
                       num_workers: int | None = 0) -> np.ndarray:
        """One projected float32 feature row per image, each distinct image decoded and encoded once and remembered
        for later calls (``rgb_first``: see :class:`ImagePixels`). Only images not remembered go to the DataLoader,
        whose ``num_workers`` processes decode and preprocess them ahead of the forward pass (0: this process,
        between batches; ``None``: :func:`default_image_workers`); a call whose images are all remembered starts
        none. A remembered row is returned exactly as it was computed; the features do not depend on the workers."""
        keys = [(image_digest(item, name=f"images[{i}]"), mode, rgb_first) for i, item in enumerate(images)]
        found = self._image_cache.get_many(dict.fromkeys(keys))
        first_new: dict[tuple[str, str, bool], int] = {}
        for i, key in enumerate(keys):
            if key not in found:
                first_new.setdefault(key, i)
        if first_new:
            found.update(self._encode_images(images, first_new, mode=mode, batch_size=batch_size, rgb_first=rgb_first,
                                             num_workers=num_workers))
        return np.stack([found[key] for key in keys])

    @torch.inference_mode()
    def _encode_images(self, images: Sequence[Any], positions: Mapping[Any, int], *, mode: str, batch_size: int,
                       rgb_first: bool, num_workers: int | None) -> dict[Any, np.ndarray]:
        """Feature rows by cache key of the images at ``positions`` (key: index in ``images``), decoded in a
        DataLoader, each batch put in the image cache once encoded (a batch with an undecodable image raises its
        :class:`~capeval.vision.images.ImageLoadError` and caches nothing)."""
        keys = list(positions)
        workers = default_image_workers(self.device) if num_workers is None else num_workers
        dataset = ImagePixels([images[i] for i in positions.values()], [f"images[{i}]" for i in positions.values()],
                              mode=mode, image_processor=self.image_processor, rgb_first=rgb_first,
                              statistics=self.pixel_statistics)
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=min(workers, len(dataset)),
                                             collate_fn=stack_pixels, pin_memory=self.device.type == "cuda")
        rows: dict[Any, np.ndarray] = {}
        for start, pixels in zip(range(0, len(keys), batch_size), loader):
            with autocast_forward(self.device, self.dtype):
                pooled = self.model.vision_model(pixel_values=decoded(pixels).to(self.device, non_blocking=True)).pooler_output
                features = self.model.visual_projection(pooled)
            encoded = dict(zip(keys[start:start + batch_size], features.float().cpu().numpy()))
            self._image_cache.put_many(encoded)
            rows.update(encoded)
        return rows


def load_tokenizer(model_name: str) -> Any:
    from transformers import CLIPTokenizer

    return cached(("clip-tokenizer", str(model_name)), lambda: load_pretrained(CLIPTokenizer, model_name, what="CLIP tokenizer"))


def image_processor_class() -> Any:
    """transformers' CLIP image processor class: the torchvision one where torchvision is installed, else the PIL one
    (what transformers falls back to itself, but only after printing its advice to install torchvision)."""
    import transformers

    if importlib.util.find_spec("torchvision") is None and hasattr(transformers, "CLIPImageProcessorPil"):
        return transformers.CLIPImageProcessorPil
    return transformers.CLIPImageProcessor


def build_clip_encoder(model_name: str, *, openai_state: dict[str, torch.Tensor] | None = None, what: str = "CLIP weights",
                       mode: str = "code", dtype: str = "float32", device: str | torch.device | None = None,
                       pixel_statistics: PixelStatistics | None = None) -> ClipEncoder:
    """A :class:`ClipEncoder` (not cached) with the config and tokenizer of ``model_name`` (hub id or folder) and
    either its weights or, given ``openai_state``, that OpenAI-layout state dict's, which must replace every weight
    (``what`` names it in errors); the text context is then the state's number of positions (LongCLIP's 248 on
    ViT-B/16's or ViT-L/14's config). The weights are float32; ``dtype`` is the forward passes' precision."""
    from transformers import CLIPConfig, CLIPModel

    if openai_state is None:
        model = load_pretrained(CLIPModel, model_name, what="CLIP model", dtype=torch.float32)
    else:
        check_vit_layout(openai_state, what=what, lora=False)
        config = load_pretrained(CLIPConfig, model_name, what="CLIP config")
        positions = openai_state.get("positional_embedding")
        if positions is not None and positions.ndim == 2:
            config.text_config.max_position_embeddings = positions.shape[0]
        model = CLIPModel(config).float()
        load_checked(model, openai_to_transformers(openai_state), what=what)
    model = model.to(resolve_device(device)).eval()
    processor = load_pretrained(image_processor_class(), model_name, what="CLIP image processor") if mode == "hf" else None
    return ClipEncoder(model, load_tokenizer(model_name), image_processor=processor, dtype=dtype, pixel_statistics=pixel_statistics)


def load_clip_encoder(model_name: str, *, checkpoint: str | None = None, lora: bool = False,
                      pixel_statistics: PixelStatistics | None = None, mode: str = "code", dtype: str = "float32",
                      device: str | torch.device | None = None) -> ClipEncoder:
    """The :class:`ClipEncoder` of ``model_name`` (hub id or folder: config, tokenizer and, without ``checkpoint``,
    weights), cached process-wide. ``checkpoint`` is a ``torch.save`` file (path or URL) holding an OpenAI-layout
    state dict (itself or as its ``state_dict`` entry) that replaces every weight, as PAC-S's ``clip_ViT-B-32.pth``
    and LongCLIP's ``longclip-L.pt`` do; with ``lora``, PAC-S++'s, whose LoRA factors are applied as the released
    code applies them (:func:`fold_pac_lora`). ``pixel_statistics``: the images' normalisation (default CLIP's).
    Encoders of every ``dtype`` share one float32 model (each has its own text and image caches)."""
    target = resolve_device(device)
    key = ("clip-encoder", str(model_name), None if checkpoint is None else str(checkpoint), lora, pixel_statistics, mode, str(target))
    what = ("PAC-S++ checkpoint (the released clip_lora model's state_dict)" if lora else
            "CLIP checkpoint (an OpenAI-layout state dict, e.g. PAC-S's clip_ViT-B-32.pth or LongCLIP's longclip-L.pt)")

    def build() -> ClipEncoder:
        state = None
        if checkpoint is not None:
            state = read_state_dict(checkpoint, what=what, entry="state_dict", optional_entry=True)
            if lora:
                check_vit_layout(state, what=what, lora=True)
                state = fold_pac_lora(state, what=what)
        return build_clip_encoder(model_name, openai_state=state, what=what, mode=mode, device=target,
                                  pixel_statistics=pixel_statistics)

    exact = cached(key, build)
    if dtype == "float32":
        return exact
    return cached((*key, dtype), lambda: ClipEncoder(exact.model, exact.tokenizer, image_processor=exact.image_processor,
                                                     dtype=dtype, pixel_statistics=exact.pixel_statistics))


# --------------------------------------------------------------------------- small random CLIPs (tests, examples)


def byte_symbols() -> list[str]:
    """The printable character that byte-level BPE writes for each byte 0..255: printable Latin-1 bytes stand for
    themselves, the others for the characters from U+0100 on, in byte order."""
    printable = {*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)}
    shifted = iter(range(256, 512))
    return [chr(byte) if byte in printable else chr(next(shifted)) for byte in range(256)]


def bpe_files(words: Sequence[str]) -> tuple[dict[str, int], list[str]]:
    """A byte-level BPE vocabulary and merge list in OpenAI CLIP's layout (the 256 byte symbols, the same with
    ``</w>``, one entry per merge, then the two specials) whose merges spell each of ``words`` as one token.

    >>> vocab, merges = bpe_files(["dog"])
    >>> merges, len(vocab), vocab["dog</w>"], vocab["<|endoftext|>"]
    (['d o', 'do g</w>'], 516, 513, 515)
    """
    symbols = byte_symbols()
    merges: dict[tuple[str, str], None] = {}
    for word in dict.fromkeys(words):
        parts = list(word[:-1]) + [word[-1] + "</w>"]
        while len(parts) > 1:
            merges[(parts[0], parts[1])] = None
            parts = [parts[0] + parts[1], *parts[2:]]
    tokens = symbols + [s + "</w>" for s in symbols] + ["".join(pair) for pair in merges] + [START_OF_TEXT, END_OF_TEXT]
    return {token: i for i, token in enumerate(dict.fromkeys(tokens))}, [" ".join(pair) for pair in merges]


#: Words the small random CLIPs of tests and examples know as whole tokens.
SMALL_VOCABULARY = ("a", "photo", "depicts", "dog", "cat", "runs", "on", "the", "grass", "sits", "sofa", "man", "riding",
                    "horse", "two", "people", "street", "red", "car", "is", "and", "of", "in", "with")


def save_random_clip(folder: str | os.PathLike, *, words: Sequence[str] = SMALL_VOCABULARY, hidden_size: int = 32,
                     vision_width: int | None = None, layers: int = 2, heads: int = 4, projection_dim: int = 16,
                     patch_size: int = 32, context_length: int = CONTEXT_LENGTH, hidden_act: str = "quick_gelu",
                     seed: int = 0) -> str:
    """Save a randomly initialised CLIP with ViT-B/32's input layout (224 pixels, 77 ids) and a small BPE vocabulary
    (:func:`bpe_files`) to ``folder``, loadable like a hub checkpoint (model, tokenizer, image processor).
    ``vision_width`` (default ``hidden_size``) is the image tower's width, its heads as wide as the text's;
    ``patch_size`` 14 gives ViT-L/14's patch grid, ``context_length`` 248 LongCLIP's text positions, ``hidden_act``
    ``"gelu"`` OpenCLIP's activation (OpenAI's is ``"quick_gelu"``).

    >>> import tempfile
    >>> from transformers import CLIPModel
    >>> CLIPModel.from_pretrained(save_random_clip(tempfile.mkdtemp())).config.projection_dim
    16
    """
    import json

    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab, merges = bpe_files(words)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"), model_max_length=context_length)
    tokenizer.save_pretrained(folder)
    start, end = vocab[START_OF_TEXT], vocab[END_OF_TEXT]
    vision_width = vision_width or hidden_size

    def tower(width: int) -> dict:
        return dict(hidden_size=width, intermediate_size=4 * width, num_hidden_layers=layers,
                    num_attention_heads=heads * width // hidden_size, hidden_act=hidden_act)

    config = CLIPConfig(text_config=dict(tower(hidden_size), vocab_size=len(vocab), max_position_embeddings=context_length,
                                         bos_token_id=start, eos_token_id=end, pad_token_id=end),
                        vision_config=dict(tower(vision_width), image_size=IMAGE_SIZE, patch_size=patch_size),
                        projection_dim=projection_dim)
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(folder)
    image_processor_class()(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
                       image_mean=CLIP_MEAN.tolist(), image_std=CLIP_STD.tolist()).save_pretrained(folder)
    return str(folder)


def save_openai_checkpoint(model_folder: str | os.PathLike, path: str | os.PathLike) -> str:
    """Save the weights of the ``CLIPModel`` in ``model_folder`` as PAC-S ships its checkpoint: ``{"state_dict": ...}``
    in OpenAI CLIP's layout."""
    from transformers import CLIPModel

    model = CLIPModel.from_pretrained(model_folder, dtype=torch.float32)
    torch.save({"state_dict": transformers_to_openai(model.state_dict())}, path)
    return str(path)


def with_random_lora(state: Mapping[str, torch.Tensor], *, mlp_merged: bool = False, seed: int = 0,
                     scale: float = 0.2) -> dict[str, torch.Tensor]:
    """An OpenAI-layout ViT state dict as the released PAC-S++ model's state dict: the same weights plus random rank-4
    LoRA factors of every layer (:func:`lora_layers`), entries drawn from N(0, ``scale``²) with ``seed``, as training
    saves them (``mlp_merged=False``: every factor apart from its weight) or after the model's ``eval()``
    (``mlp_merged=True``: the MLP factors also added into their weights, as the released MLP layers merge them; the
    attention and patch-embedding factors stay apart, as their layers never merge there)."""
    state = dict(state)
    generator = torch.Generator().manual_seed(seed)
    for weight, a, b, used in lora_layers(state):
        shape_a, shape_b = lora_factor_shapes(state[weight].shape)
        state[a] = torch.randn(shape_a, generator=generator) * scale
        state[b] = torch.randn(shape_b, generator=generator) * scale
        if mlp_merged and not used:
            state[weight] = state[weight] + (state[b] @ state[a]).reshape(state[weight].shape) * (LORA_ALPHA / LORA_RANK)
    return state


def save_pac_lora_checkpoint(model_folder: str | os.PathLike, path: str | os.PathLike, *, mlp_merged: bool = False,
                             seed: int = 0) -> str:
    """Save the weights of the ``CLIPModel`` in ``model_folder`` with random LoRA factors (:func:`with_random_lora`) as
    PAC-S++ ships its checkpoints: ``{"state_dict": ...}``.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> state = torch.load(save_pac_lora_checkpoint(save_random_clip(folder), f"{folder}/pac++.pth"))["state_dict"]
    >>> tuple(state["visual.conv1.lora_A"].shape), tuple(state["transformer.resblocks.0.mlp.c_fc.lora_B"].shape)
    ((128, 96), (128, 4))
    """
    from transformers import CLIPModel

    state = transformers_to_openai(CLIPModel.from_pretrained(model_folder, dtype=torch.float32).state_dict())
    torch.save({"state_dict": with_random_lora(state, mlp_merged=mlp_merged, seed=seed)}, path)
    return str(path)
