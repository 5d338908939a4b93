"""Visual-T5, QACE's abstractive VQA model, on transformers' own T5.

The released model (Lee et al., "QACE", Findings of EMNLP 2021; ``visual_t5.py`` of hwanheelee1993/QACE)
is T5-small plus one extra layer, ``encoder.img_emb`` = Linear(2054 → d_model), that embeds each of an
image's 36 bottom-up-attention regions (the 2048-d feature followed by the 6-d normalised box). Everything
else is exactly ``T5ForConditionalGeneration``, so the port is that class plus the Linear, with the encoder
fed ``inputs_embeds``:

* encoder input (102 positions for 36 regions): the question's T5 pieces **without** ``</s>``, truncated and
  right-padded with id 0 to 64 text slots; then the ids ``[1023, 10]`` (the code comment calls them
  "image :"); then one slot per region. The mask is 1 everywhere except the text padding;
* embeddings: T5's shared token embedding for the 66 ids, ``img_emb`` for the regions, concatenated; T5's
  relative position bias covers all positions (no extra position embedding or LayerNorm);
* attention: transformers' fused ``scaled_dot_product_attention`` path (``attn_implementation="sdpa"``), the same
  math as the released eager T5: softmax(q·kᵀ + position bias + mask)·v with no 1/√d scaling (``scale=1.0``; T5
  folds it into its initialisation), the relative position bias passed as the additive mask;
* decoding: greedy with ``max_length=20`` (transformers 4.4.1's default, which the released code relied on:
  the start token plus at most 19 new tokens); the answer is the decoded text with ``<pad>`` and ``</s>``
  removed and its first character (a space) cut off; the answerability is 1 − P(token 73) at the first
  decoding step (73 is the first piece of "unanswerable", the convention of QuestEval's QA models).

The checkpoint is an HF folder (config.json and weights, ``encoder.img_emb.*`` beside the T5 tensors), released
zipped at :data:`DEFAULT_CHECKPOINT`; :func:`load_visual_t5` takes that URL (downloaded once into capeval's
cache and unzipped, refusing unsafe member paths), a local ``.zip`` or a folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any, Sequence

import torch
from torch import nn
from transformers import LogitsProcessor, LogitsProcessorList, T5Config, T5ForConditionalGeneration

from ..checkpoints import is_url, resolve_checkpoint
from ..finite import require_finite
from ..models import ModelUnavailableError, cached, load_hf_tokenizer, load_pretrained, resolve_device
from ..progress import progress
from ..vision.regions import RegionFeatures
from .common import device_batch_size, pad_rows
from .precision import autocast_forward

#: The released checkpoint (a zip holding an HF folder) and the tokenizer it was trained with.
#: Neither its host nor the authors publish a SHA-256, and none is pinned here (the file could not be fetched to
#: compute one): a download is checked only for completeness and for an HTML page in its place.
DEFAULT_CHECKPOINT = "https://vqamodel.s3.us-east-2.amazonaws.com/t5vqa/ckpt.zip"
DEFAULT_TOKENIZER = "t5-small"
#: The QACE demo's prompt; the VQA demo used the bare question (prompt "").
DEFAULT_PROMPT = "visual answer: "
TEXT_SLOTS = 64
IMAGE_PREFIX_IDS = (1023, 10)
#: Per region: the 2048-d BUTD feature followed by the 6-d normalised box.
REGION_DIM = 2054
#: T5's first piece of "unanswerable"; answerability = 1 − P(this token) at decoding step 1.
UNANSWERABLE_TOKEN_ID = 73
#: transformers 4.4.1's default generation length (start token included), which the released code used.
MAX_LENGTH = 20
#: Sequences per generation batch (Visual-T5's questions, and QACE's text T5s). Every Visual-T5 input has the same
#: length, so its batches need no sorting. On a GPU a decoding step of a small batch is bound by kernel launches and
#: Python, not arithmetic, so larger batches do the same work in fewer steps: on an H100, QACE-Ref on 1,000 Karpathy
#: captions ran at 45 captions/s with 256 and 66 with 1,024 (T5-small stand-ins). 1,024 rows of T5-base
#: with 40-token inputs hold about 5.5 GB of attention caches (12 layers × self and cross keys and values).
GPU_BATCH_SIZE, CPU_BATCH_SIZE = 1024, 32
_IMAGE_PROJECTION = ("encoder.img_emb.weight", "encoder.img_emb.bias")


class FirstStepAnswerability(LogitsProcessor):
    """A pass-through logits processor that records 1 − softmax(scores)[73] at the first decoding step: the
    answerability ``generate(output_scores=True).scores[0]`` would give, without keeping every step's
    batch × vocabulary scores (2 GB for 512 rows of 32 steps of T5's 32k vocabulary)."""

    def __init__(self) -> None:
        self.values: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.values is None:
            self.values = 1.0 - scores.float().softmax(-1)[:, UNANSWERABLE_TOKEN_ID]
        return scores


def greedy_generate(model: T5ForConditionalGeneration, *, max_length: int, **inputs: Any) -> tuple[list[list[int]], list[float]]:
    """Greedy decoding of a T5 model: the generated ids per row (start token included) and the answerability
    1 − softmax(first-step scores)[73] per row. ``inputs`` are ``generate``'s (``input_ids`` or
    ``encoder_outputs``, ``attention_mask``)."""
    first_step = FirstStepAnswerability()
    sequences = model.generate(**inputs, do_sample=False, num_beams=1, max_length=max_length,
                               logits_processor=LogitsProcessorList([first_step]))
    assert first_step.values is not None  # generate refuses a max_length that leaves no decoding step
    return sequences.cpu().tolist(), first_step.values.cpu().tolist()


def decode_like_demo(tokenizer: Any, ids: Sequence[int], *, cut: int) -> str:
    """The demos' decoding: ``decode`` with special tokens, every ``<pad>`` and ``</s>`` removed, then the
    first ``cut`` characters dropped (1 for the leading space of answers, 11 for QG's " question: ")."""
    return tokenizer.decode(list(ids)).replace("<pad>", "").replace("</s>", "")[cut:]


def encoder_text_inputs(token_ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """The 66 text ids of the encoder input and their mask: the pieces (at most 64) right-padded with 0 to 64
    slots, then ``[1023, 10]``.

    >>> ids, mask = encoder_text_inputs([7, 8, 9])
    >>> len(ids), ids[:4], ids[-3:], mask[:4], mask[-3:]
    (66, [7, 8, 9, 0], [0, 1023, 10], [1, 1, 1, 0], [0, 1, 1])
    """
    body = list(token_ids)[:TEXT_SLOTS]
    padding = TEXT_SLOTS - len(body)
    return body + [0] * padding + list(IMAGE_PREFIX_IDS), [1] * len(body) + [0] * padding + [1] * len(IMAGE_PREFIX_IDS)


class VisualT5(nn.Module):
    """``T5ForConditionalGeneration`` plus the region projection ``img_emb`` of the released encoder.

    >>> config = T5Config(vocab_size=1100, d_model=16, d_kv=4, d_ff=32, num_layers=1, num_heads=4, decoder_start_token_id=0)
    >>> model = VisualT5.random(config, seed=0)
    >>> ids, mask = encoder_text_inputs([5, 6])
    >>> tuple(model.encoder_embeddings(torch.tensor([ids]), torch.zeros(1, 36, REGION_DIM)).shape)
    (1, 102, 16)
    """

    def __init__(self, t5: T5ForConditionalGeneration, img_emb: nn.Linear):
        super().__init__()
        if img_emb.out_features != t5.config.d_model:
            raise ValueError(f"img_emb maps to {img_emb.out_features} dimensions but the T5 model's d_model is {t5.config.d_model}")
        self.t5 = t5
        self.img_emb = img_emb

    @classmethod
    def random(cls, config: T5Config, *, region_dim: int = REGION_DIM, seed: int = 0) -> "VisualT5":
        """Random weights (transformers' T5 initialisation), for tests and offline examples."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return cls(T5ForConditionalGeneration(config), nn.Linear(region_dim, config.d_model)).eval()

    @property
    def region_dim(self) -> int:
        return int(self.img_emb.in_features)

    def encoder_embeddings(self, input_ids: torch.Tensor, regions: torch.Tensor) -> torch.Tensor:
        """concat(shared token embeddings of the 66 ids, img_emb(regions)): B × (66 + R) × d_model."""
        return torch.cat([self.t5.shared(input_ids), self.img_emb(regions)], dim=1)

    def generate(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, regions: torch.Tensor, *,
                 max_length: int = MAX_LENGTH) -> tuple[list[list[int]], list[float]]:
        """Greedy answers (ids) and answerabilities for a batch of encoder inputs (see the module docstring)."""
        encoder_outputs = self.t5.encoder(inputs_embeds=self.encoder_embeddings(input_ids, regions), attention_mask=attention_mask)
        return greedy_generate(self.t5, max_length=max_length, encoder_outputs=encoder_outputs, attention_mask=attention_mask)

    def save_pretrained(self, folder: str | os.PathLike) -> Path:
        """Write the released layout: an HF T5 folder whose weights also hold ``encoder.img_emb.{weight,bias}``."""
        from safetensors.torch import load_file, save_file

        folder = Path(folder)
        self.t5.save_pretrained(folder)
        weights = folder / "model.safetensors"
        state = load_file(weights)
        state.update({_IMAGE_PROJECTION[0]: self.img_emb.weight.detach().contiguous(),
                      _IMAGE_PROJECTION[1]: self.img_emb.bias.detach().contiguous()})
        save_file(state, weights, metadata={"format": "pt"})
        return folder


class _T5WithoutImageProjection(T5ForConditionalGeneration):
    """T5 loading a Visual-T5 folder without reporting ``encoder.img_emb`` as unexpected (it is read separately)."""

    _keys_to_ignore_on_load_unexpected = [*T5ForConditionalGeneration._keys_to_ignore_on_load_unexpected, r"encoder\.img_emb\."]


def _is_unsafe_member(info: zipfile.ZipInfo, root: Path) -> bool:
    name = info.filename.replace("\\", "/")
    is_link = (info.external_attr >> 16) & 0o170000 == 0o120000
    inside = (root / name).resolve().is_relative_to(root.resolve())
    return name.startswith("/") or ".." in name.split("/") or ":" in name.split("/")[0] or is_link or not inside


def extract_zip_safely(archive: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Unzip ``archive`` into the folder ``target`` (once: an existing ``target`` is reused).

    Members with absolute paths, ``..`` parts, drive letters or symlinks are refused with
    :class:`~capeval.models.ModelUnavailableError`; extraction goes to a temporary sibling folder renamed at
    the end, so an interrupted run never leaves a half-extracted ``target``.
    """
    target = Path(target)
    if target.is_dir():
        return target
    try:
        with zipfile.ZipFile(archive) as zipped:
            unsafe = [info.filename for info in zipped.infolist() if _is_unsafe_member(info, target)]
            if unsafe:
                raise ModelUnavailableError(f"Refusing to unzip {os.fspath(archive)!r}: unsafe member paths {unsafe[:5]}")
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
            try:
                zipped.extractall(partial)
                os.replace(partial, target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    except zipfile.BadZipFile as error:
        raise ModelUnavailableError(f"{os.fspath(archive)!r} is not a readable zip file ({error})") from error
    return target


def visual_t5_folder(source: str | os.PathLike) -> Path:
    """The HF folder of a Visual-T5 checkpoint given as a folder, a local ``.zip`` or a URL of a ``.zip``
    (downloaded once into capeval's cache); a zip is unzipped once into a folder beside it named like it without
    ``.zip``. The checkpoint is the shallowest folder holding a ``config.json`` (the released zip holds ``ckpt/``)."""
    path = Path(os.fspath(source)).expanduser()
    if is_url(source) or path.suffix == ".zip":
        archive = resolve_checkpoint(source, what="Visual-T5 checkpoint")
        path = extract_zip_safely(archive, archive.with_suffix(""))
    if not path.is_dir():
        raise ModelUnavailableError(f"The Visual-T5 checkpoint {os.fspath(source)!r} is neither a folder, a .zip nor a URL of one.")
    configs = sorted(path.rglob("config.json"), key=lambda p: len(p.parts))
    if not configs:
        raise ModelUnavailableError(f"The Visual-T5 checkpoint {os.fspath(source)!r} holds no config.json.")
    return configs[0].parent


def _weight_files(folder: Path) -> list[Path]:
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        index = folder / index_name
        if index.is_file():
            return [folder / name for name in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
    return [path for path in (folder / "model.safetensors", folder / "pytorch_model.bin") if path.is_file()]


def read_image_projection(folder: Path) -> nn.Linear:
    """``encoder.img_emb`` from the checkpoint's weight files (safetensors or a torch ``.bin``, read without
    running code)."""
    from safetensors import safe_open

    found: dict[str, torch.Tensor] = {}
    for path in _weight_files(folder):
        if path.suffix == ".safetensors":
            with safe_open(path, framework="pt") as weights:
                found.update({key: weights.get_tensor(key) for key in _IMAGE_PROJECTION if key in weights.keys()})
        else:
            state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            found.update({key: state[key] for key in _IMAGE_PROJECTION if key in state})
    if set(found) != set(_IMAGE_PROJECTION):
        raise ModelUnavailableError(f"{str(folder)!r} is a T5 checkpoint without Visual-T5's region projection "
                                    f"({', '.join(_IMAGE_PROJECTION)})")
    weight, bias = (found[key].float() for key in _IMAGE_PROJECTION)
    projection = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        projection.weight.copy_(weight)
        projection.bias.copy_(bias)
    return projection


def load_visual_t5(source: str | os.PathLike = DEFAULT_CHECKPOINT, *, device: str | torch.device | None = None,
                   attention: str = "sdpa") -> VisualT5:
    """A Visual-T5 (folder, ``.zip`` or URL; see :func:`visual_t5_folder`) in fp32 eval mode on ``device``,
    shared through capeval's process-wide model cache. ``attention``: transformers' ``attn_implementation``
    (``"sdpa"``, the fused kernel, or ``"eager"``, the released arithmetic step by step; the same math)."""
    target = resolve_device(device)

    def build() -> VisualT5:
        folder = visual_t5_folder(source)
        t5 = load_pretrained(_T5WithoutImageProjection, str(folder), what="Visual-T5 checkpoint", dtype=torch.float32,
                             attn_implementation=attention)
        return VisualT5(t5, read_image_projection(folder)).to(target).eval()

    return cached(("visual-t5", os.fspath(source), str(target), attention), build)


class VisualT5Answerer:
    """Answers questions about images with Visual-T5: one (answer, answerability) per (question, regions) pair.

    ``checkpoint``: see :func:`load_visual_t5`; ``tokenizer``: hub id or folder (the released model used
    ``t5-small``'s); ``prompt``: text put before each question (default the QACE demo's ``"visual answer: "``;
    ``""`` gives the VQA demo's bare question); ``dtype``: the precision of the forward passes (``torch.autocast``,
    :func:`~capeval.backbones.precision.autocast_forward`; the weights stay float32); ``attention``: see
    :func:`load_visual_t5`.
    """

    def __init__(self, checkpoint: str | os.PathLike = DEFAULT_CHECKPOINT, tokenizer: str = DEFAULT_TOKENIZER, *,
                 prompt: str = DEFAULT_PROMPT, device: str | torch.device | None = None, dtype: str = "float32",
                 attention: str = "sdpa"):
        self.device = resolve_device(device)
        self.dtype = dtype
        self.checkpoint = str(checkpoint)
        self.model = load_visual_t5(checkpoint, device=self.device, attention=attention)
        self.tokenizer = load_hf_tokenizer(str(tokenizer))
        self.prompt = prompt
        vocab = self.model.t5.config.vocab_size
        if len(self.tokenizer) > vocab:
            raise ValueError(f"the tokenizer {tokenizer!r} has {len(self.tokenizer)} entries but the checkpoint's vocabulary has {vocab}")

    def text_ids(self, questions: Sequence[str]) -> list[list[int]]:
        """The prompt + question pieces without special tokens; longer than 64 pieces is truncated (with a warning;
        the released code fails on such questions)."""
        ids = self.tokenizer([self.prompt + q for q in questions], add_special_tokens=False)["input_ids"] if questions else []
        if any(len(seq) > TEXT_SLOTS for seq in ids):
            warnings.warn(f"questions longer than {TEXT_SLOTS} T5 pieces were truncated to Visual-T5's {TEXT_SLOTS} text slots", stacklevel=2)
        return ids

    def encoder_inputs(self, questions: Sequence[str], regions: Sequence[RegionFeatures]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The batch's encoder inputs: text ids B × 66, attention mask B × (66 + R) and region inputs B × R × 2054
        (R the most regions in the batch; an image with fewer has its extra slots zero and masked)."""
        for i, region in enumerate(regions):
            if region.feature_dim + region.norm_bb.shape[1] != self.model.region_dim:
                raise ValueError(f"region features [{i}] have {region.feature_dim}-d features; Visual-T5 takes "
                                 f"{self.model.region_dim - 6}-d features plus the 6-d box (BUTD pool5, 36 boxes)")
        texts = [encoder_text_inputs(ids) for ids in self.text_ids(questions)]
        features, region_mask = pad_rows([region.visual_t5_input() for region in regions])
        text_mask = torch.tensor([mask for _, mask in texts])
        return torch.tensor([ids for ids, _ in texts]), torch.cat([text_mask, region_mask], dim=1), features

    def answer(self, questions: Sequence[str], regions: Sequence[RegionFeatures], *, batch_size: int | None = None,
               show_progress: bool | None = None) -> list[tuple[str, float]]:
        """(answer, answerability) per question, each asked about the image of the same index in ``regions``."""
        if len(questions) != len(regions):
            raise ValueError(f"got {len(questions)} questions but {len(regions)} region features; they must match")
        batch_size = device_batch_size(batch_size, self.device, gpu=GPU_BATCH_SIZE, cpu=CPU_BATCH_SIZE)
        results: list[tuple[str, float]] = []
        with torch.inference_mode():
            for start in progress(range(0, len(questions), batch_size), desc="Visual-T5", show=show_progress):
                chunk = slice(start, start + batch_size)
                inputs = self.encoder_inputs(questions[chunk], regions[chunk])
                with autocast_forward(self.device, self.dtype):
                    sequences, answerability = self.model.generate(*(t.to(self.device) for t in inputs))
                require_finite(answerability, items=questions[chunk], what="first-step answer scores", model=self.checkpoint)
                results += [(decode_like_demo(self.tokenizer, seq, cut=1), float(a)) for seq, a in zip(sequences, answerability)]
        return results


def tiny_t5_vocab(words: Sequence[str], size: int = 1100) -> list[tuple[str, float]]:
    """A T5-layout Unigram vocabulary (``<pad>``, ``</s>``, ``<unk>`` first) of exactly ``size`` pieces: ``▁word``
    for each word, single characters as a fallback, then filler pieces. For tests and offline examples: with
    ``size`` above 1023 the ids Visual-T5 uses (10, 73, 1023) all exist.

    >>> vocab = tiny_t5_vocab(["man", "horse"])
    >>> len(vocab), vocab[:5]
    (1100, [('<pad>', 0.0), ('</s>', 0.0), ('<unk>', 0.0), ('▁', -2.0), ('▁man', -3.0)])
    """
    chars = [chr(c) for c in (*range(ord("a"), ord("z") + 1), *range(ord("A"), ord("Z") + 1))] + list("0123456789:?.,'-")
    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    pieces += [(f"▁{word}", -3.0) for word in dict.fromkeys(words)]
    pieces += [(c, -8.0) for c in chars] + [(f"▁{c}", -9.0) for c in chars]
    pieces = list(dict(pieces).items())
    if len(pieces) > size:
        raise ValueError(f"{len(pieces)} pieces do not fit a vocabulary of {size}")
    return pieces + [(f"▁filler{i}", -20.0) for i in range(size - len(pieces))]


#: A tiny T5 for tests and offline examples (T5-small is d_model 512, d_kv 64, d_ff 2048, 6 layers, 8 heads).
TINY_T5 = {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4}


def save_random_t5(folder: str | os.PathLike, words: Sequence[str], *, visual: bool = False, vocab_size: int = 1100,
                   seed: int = 0, **config: Any) -> str:
    """Write a random-weight T5 (with ``visual=True`` a Visual-T5) and a word-level T5 tokenizer of ``vocab_size``
    pieces (:func:`tiny_t5_vocab`) into ``folder``. ``config`` overrides :data:`TINY_T5` and other ``T5Config``
    fields (e.g. ``initializer_factor``).

    For tests, benchmarks and offline examples: it loads through ``from_pretrained`` / :func:`load_visual_t5`
    like a real checkpoint, but its outputs mean nothing.

    >>> import tempfile
    >>> import numpy as np
    >>> folder = save_random_t5(tempfile.mkdtemp(), ["a", "man", "riding", "horse"], visual=True)
    >>> answerer = VisualT5Answerer(folder, folder, device="cpu")
    >>> regions = RegionFeatures.from_butd(np.zeros((36, 2048), np.float16), np.zeros((36, 6)))
    >>> [(type(text), 0.0 <= a <= 1.0) for text, a in answerer.answer(["What is the man riding?"], [regions])]
    [(<class 'str'>, True)]
    """
    from transformers import T5Tokenizer

    folder = Path(folder)
    T5Tokenizer(vocab=tiny_t5_vocab(words, vocab_size), extra_ids=0, model_max_length=512).save_pretrained(folder)
    settings = {**TINY_T5, **config}
    model = VisualT5.random(T5Config(vocab_size=vocab_size, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, **settings), seed=seed)  # type: ignore[call-arg]
    if visual:
        model.save_pretrained(folder)
    else:
        model.t5.save_pretrained(folder)
    return str(folder)
