"""CLIP as CLIPScore (Hessel et al., EMNLP 2021; jmhessel/clipscore) and PAC-S (Sarto et al., CVPR 2023;
aimagelab/pacscore) run it, on transformers' ``CLIPModel``.

Both released scorers prepare inputs with OpenAI's ``clip`` package, which transformers' processor and tokenizer
do not reproduce. Mode ``"code"`` (:func:`released_token_ids`, :func:`released_pixels`) does what the released code
does:

* text: ftfy's ``fix_text``, HTML entities unescaped twice, whitespace collapsed, lower-cased, then CLIP's BPE;
  the ids framed by ``<|startoftext|>`` and ``<|endoftext|>``, cut to 77 with the last one forced to ``<|endoftext|>``;
* images: opened as stored (no EXIF rotation), resized (bicubic, short side 224, long side truncated) and
  center-cropped (offset rounded half to even) **in the image's own mode**, only then converted to RGB (palette
  and 1-bit images are resized nearest-neighbour, RGBA premultiplied and its alpha then dropped), scaled to
  [0, 1] and normalised with CLIP's mean and std in float32.

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
``clip_ViT-B-32.pth``) onto ``CLIPModel``'s keys; :func:`transformers_to_openai` is its inverse.
"""

from __future__ import annotations

import html
import multiprocessing
import os
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import regex
import torch

from ..models import BoundedCache, cached, load_pretrained, resolve_device
from ..vision.images import ImageLoadError, image_digest, open_image
from .common import length_batches, load_checked, pad_ids, read_state_dict
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
    """``clip.tokenize(texts, truncate=True)`` without its padding: cleaned text (:func:`clean_text`) through the
    BPE of ``tokenizer`` (a ``CLIPTokenizer``), framed by start and end ids, at most 77 ids ending in the end id."""
    start, end = tokenizer.convert_tokens_to_ids([START_OF_TEXT, END_OF_TEXT])
    # Unlimited here (cut below as released), so no warning about lengths over the model's.
    pieces = tokenizer([clean_text(text) for text in texts], add_special_tokens=False, verbose=False)["input_ids"]
    framed = []
    for ids in pieces:
        ids = [start, *ids, end]
        if len(ids) > CONTEXT_LENGTH:
            ids = ids[:CONTEXT_LENGTH]
            ids[-1] = end
        framed.append(ids)
    return framed


def hf_token_ids(texts: Sequence[str], tokenizer: Any) -> list[list[int]]:
    """``CLIPTokenizer`` as it is: its own normalisation, truncated to 77 ids."""
    return tokenizer(list(texts), truncation=True, max_length=CONTEXT_LENGTH)["input_ids"]


def released_pixels(image: Any) -> np.ndarray:
    """CLIP's preprocessing of an image opened as stored (a PIL image in any mode): 3 × 224 × 224 float32.

    >>> from PIL import Image
    >>> released_pixels(Image.new("P", (300, 7))).shape
    (3, 224, 224)
    """
    from PIL import Image

    width, height = image.size
    short, long = min(width, height), max(width, height)
    new_long = int(IMAGE_SIZE * long / short)
    size = (IMAGE_SIZE, new_long) if width <= height else (new_long, IMAGE_SIZE)
    if size != image.size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    left, top = (int(round((side - IMAGE_SIZE) / 2)) for side in size)
    image = image.crop((left, top, left + IMAGE_SIZE, top + IMAGE_SIZE)).convert("RGB")
    scaled = np.asarray(image, dtype=np.uint8).astype(np.float32) / np.float32(255)
    return ((scaled - CLIP_MEAN) / CLIP_STD).transpose(2, 0, 1)


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


def openai_to_transformers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """An OpenAI CLIP (ViT) state dict with ``CLIPModel``'s keys: fused attention inputs split into q, k and v,
    projections transposed. Unknown keys are kept as they are, so :func:`~capeval.backbones.common.load_checked`
    reports them."""
    state = {key: value for key, value in state.items() if key not in _OPENAI_METADATA}
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


# --------------------------------------------------------------------------- the encoder


def preprocessed_pixels(image: Any, *, mode: str, image_processor: Any = None) -> np.ndarray:
    """3 × 224 × 224 float32 pixels of a PIL image: :func:`released_pixels` (mode ``"code"``) or ``image_processor``
    (a ``CLIPImageProcessor``, mode ``"hf"``)."""
    if mode == "code":
        return released_pixels(image)
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
                 rgb_first: bool = False):
        self.items, self.names = list(items), list(names)
        self.mode, self.image_processor, self.rgb_first = mode, image_processor, rgb_first

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> np.ndarray | ImageLoadError:
        try:
            image = open_image(self.items[index], name=self.names[index])
        except ImageLoadError as error:
            return error
        if self.rgb_first:
            image = image.convert("RGB")
        return preprocessed_pixels(image, mode=self.mode, image_processor=self.image_processor)


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
    ``dtype``: the precision of the forward passes (``torch.autocast``; the weights stay as loaded)."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, *, image_processor: Any = None, dtype: str = "float32"):
        self.model: Any = model  # a CLIPModel: its text_projection and vision_model are called
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.end_id = tokenizer.convert_tokens_to_ids(END_OF_TEXT)
        self.device = next(model.parameters()).device
        self.dtype = dtype
        self._text_cache = FeatureRowCache(TEXT_CACHE_SIZE)
        self._image_cache = FeatureRowCache(IMAGE_CACHE_SIZE)

    def clear_caches(self) -> None:
        """Forget every text and image feature kept from earlier calls (a cold start, e.g. for a benchmark)."""
        self._text_cache.clear()
        self._image_cache.clear()

    def token_ids(self, texts: Sequence[str], mode: str) -> list[list[int]]:
        return released_token_ids(texts, self.tokenizer) if mode == "code" else hf_token_ids(texts, self.tokenizer)

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
        ids = dict(zip(missing, self.token_ids([text for _, text in missing], mode))) if missing else {}
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
                              mode=mode, image_processor=self.image_processor, rgb_first=rgb_first)
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


def build_clip_encoder(model_name: str, *, openai_state: dict[str, torch.Tensor] | None = None, what: str = "CLIP weights",
                       mode: str = "code", dtype: str = "float32", device: str | torch.device | None = None) -> ClipEncoder:
    """A :class:`ClipEncoder` (not cached) with the config and tokenizer of ``model_name`` (hub id or folder) and
    either its weights or, given ``openai_state``, that OpenAI-layout state dict's, which must replace every weight
    (``what`` names it in errors). The weights are float32; ``dtype`` is the forward passes' precision."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    if openai_state is None:
        model = load_pretrained(CLIPModel, model_name, what="CLIP model", dtype=torch.float32)
    else:
        model = CLIPModel(load_pretrained(CLIPConfig, model_name, what="CLIP config")).float()
        load_checked(model, openai_to_transformers(openai_state), what=what)
    model = model.to(resolve_device(device)).eval()
    processor = load_pretrained(CLIPImageProcessor, model_name, what="CLIP image processor") if mode == "hf" else None
    return ClipEncoder(model, load_tokenizer(model_name), image_processor=processor, dtype=dtype)


def load_clip_encoder(model_name: str, *, checkpoint: str | None = None, mode: str = "code", dtype: str = "float32",
                      device: str | torch.device | None = None) -> ClipEncoder:
    """The :class:`ClipEncoder` of ``model_name`` (hub id or folder: config, tokenizer and, without ``checkpoint``,
    weights), cached process-wide. ``checkpoint`` is a ``torch.save`` file (path or URL) holding an OpenAI-layout
    ``state_dict`` that replaces every weight, as PAC-S's ``clip_ViT-B-32.pth`` does. Encoders of every ``dtype``
    share one float32 model (each has its own text and image caches)."""
    target = resolve_device(device)
    key = ("clip-encoder", str(model_name), None if checkpoint is None else str(checkpoint), mode, str(target))
    what = "CLIP checkpoint (an OpenAI-layout state_dict, e.g. PAC-S's clip_ViT-B-32.pth)"

    def build() -> ClipEncoder:
        state = None if checkpoint is None else read_state_dict(checkpoint, what=what, entry="state_dict")
        return build_clip_encoder(model_name, openai_state=state, what=what, mode=mode, device=target)

    exact = cached(key, build)
    if dtype == "float32":
        return exact
    return cached((*key, dtype),
                  lambda: ClipEncoder(exact.model, exact.tokenizer, image_processor=exact.image_processor, dtype=dtype))


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
                     patch_size: int = 32, seed: int = 0) -> str:
    """Save a randomly initialised CLIP with ViT-B/32's input layout (224 pixels, 77 ids) and a small BPE vocabulary
    (:func:`bpe_files`) to ``folder``, loadable like a hub checkpoint (model, tokenizer, image processor).
    ``vision_width`` (default ``hidden_size``) is the image tower's width, its heads as wide as the text's.

    >>> import tempfile
    >>> from transformers import CLIPModel
    >>> CLIPModel.from_pretrained(save_random_clip(tempfile.mkdtemp())).config.projection_dim
    16
    """
    import json

    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab, merges = bpe_files(words)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"), model_max_length=CONTEXT_LENGTH)
    tokenizer.save_pretrained(folder)
    start, end = vocab[START_OF_TEXT], vocab[END_OF_TEXT]
    vision_width = vision_width or hidden_size

    def tower(width: int) -> dict:
        return dict(hidden_size=width, intermediate_size=4 * width, num_hidden_layers=layers,
                    num_attention_heads=heads * width // hidden_size)

    config = CLIPConfig(text_config=dict(tower(hidden_size), vocab_size=len(vocab), max_position_embeddings=CONTEXT_LENGTH,
                                         bos_token_id=start, eos_token_id=end, pad_token_id=end),
                        vision_config=dict(tower(vision_width), image_size=IMAGE_SIZE, patch_size=patch_size),
                        projection_dim=projection_dim)
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
                       image_mean=CLIP_MEAN.tolist(), image_std=CLIP_STD.tolist()).save_pretrained(folder)
    return str(folder)


def save_openai_checkpoint(model_folder: str | os.PathLike, path: str | os.PathLike) -> str:
    """Save the weights of the ``CLIPModel`` in ``model_folder`` as PAC-S ships its checkpoint: ``{"state_dict": ...}``
    in OpenAI CLIP's layout."""
    from transformers import CLIPModel

    model = CLIPModel.from_pretrained(model_folder, dtype=torch.float32)
    torch.save({"state_dict": transformers_to_openai(model.state_dict())}, path)
    return str(path)
