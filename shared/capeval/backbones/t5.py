"""Text-to-text T5 checkpoints (QACE's question generators and QA models, CAPTURE's scene-graph parser): loaded once
through capeval's model cache, prompted in a :class:`T5TextFormat`, and decoded greedily in length-sorted batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
from transformers import T5ForConditionalGeneration

from ..finite import require_finite
from ..models import cached, load_hf_tokenizer, load_pretrained, resolve_device
from ..progress import progress
from .common import device_batch_size, length_batches, pad_ids
from .precision import autocast_forward
from .visual_t5 import CPU_BATCH_SIZE, GPU_BATCH_SIZE, decode_like_demo, greedy_generate


@dataclass(frozen=True)
class T5TextFormat:
    """How a family of text T5 checkpoints is prompted and decoded.

    ``template`` is filled with ``answer``/``question`` and ``context``; ``max_length`` is ``generate``'s (start
    token included); ``cut`` set: the demos' decoding (special tokens kept, ``<pad>``/``</s>`` removed, ``cut``
    leading characters dropped), ``None``: ``skip_special_tokens=True`` (QuestEval); ``abstains``: the QA model
    was trained to answer "unanswerable", so its answerability is meaningful.
    """

    template: str
    max_length: int
    cut: int | None
    abstains: bool = False

    def render(self, fields: dict[str, str]) -> str:
        """The model input for one item.

        >>> T5TextFormat("answer: {answer}  context: {context} </s>", max_length=32, cut=11).render(
        ...     {"answer": "two men", "context": "Two men ride"})
        'answer: two men  context: Two men ride </s>'
        """
        return self.template.format(**fields)

    def decode(self, tokenizer: Any, ids: Sequence[int]) -> str:
        if self.cut is None:
            return tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=True)
        return decode_like_demo(tokenizer, ids, cut=self.cut)


def load_t5(name_or_path: str, *, device: str | torch.device | None = None) -> T5ForConditionalGeneration:
    """A T5 text-to-text model in fp32 eval mode on ``device``, shared through capeval's model cache, with
    transformers' fused attention (SDPA: the released eager arithmetic's math, see :mod:`capeval.backbones.visual_t5`)."""
    target = resolve_device(device)

    def build() -> T5ForConditionalGeneration:
        model = load_pretrained(T5ForConditionalGeneration, name_or_path, what="T5 model", dtype=torch.float32,
                                attn_implementation="sdpa")
        return model.to(target).eval()

    return cached(("t5-seq2seq", str(name_or_path), str(target)), build)


class T5TextGenerator:
    """Greedy text-to-text generation with one T5 checkpoint in a :class:`T5TextFormat`, batched over many inputs;
    ``dtype``: the precision of the forward passes (``torch.autocast``; the weights stay float32)."""

    def __init__(self, name_or_path: str, text_format: T5TextFormat, *, device: str | torch.device | None = None,
                 dtype: str = "float32"):
        self.device = resolve_device(device)
        self.dtype = dtype
        self.name_or_path = str(name_or_path)
        self.model = load_t5(name_or_path, device=self.device)
        self.tokenizer = load_hf_tokenizer(str(name_or_path))
        self.format = text_format

    def input_ids(self, fields: Sequence[dict[str, str]]) -> list[list[int]]:
        """Token ids per rendered input, with the tokenizer's special tokens (so the demo's literal "</s>" becomes EOS
        and the fast tokenizer appends another), truncated to its maximum length."""
        texts = [self.format.render(item) for item in fields]
        return self.tokenizer(texts, truncation=True)["input_ids"] if texts else []

    def generate(self, fields: Sequence[dict[str, str]], *, batch_size: int | None = None, show_progress: bool | None = None,
                 desc: str = "T5") -> list[tuple[str, float]]:
        """(decoded text, answerability) per input (:meth:`input_ids`), in input order. Each distinct input is generated
        once (the same question on the same reference, a caption given twice); batches group similar lengths, padding
        is masked."""
        ids = self.input_ids(fields)
        first: dict[tuple[int, ...], int] = {}  # each distinct input: its first index
        for i, seq in enumerate(ids):
            first.setdefault(tuple(seq), i)
        distinct = list(first.values())
        batch_size = device_batch_size(batch_size, self.device, gpu=GPU_BATCH_SIZE, cpu=CPU_BATCH_SIZE)
        batches = length_batches(distinct, batch_size, lambda i: len(ids[i]))
        results: dict[int, tuple[str, float]] = {}
        pad = self.tokenizer.pad_token_id or 0
        with torch.inference_mode():
            for batch in progress(batches, desc=desc, show=show_progress):
                input_ids, mask = pad_ids([ids[i] for i in batch], pad_id=pad)
                with autocast_forward(self.device, self.dtype):
                    sequences, answerability = greedy_generate(self.model, max_length=self.format.max_length,
                                                               input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device))
                require_finite(answerability, items=lambda row: self.format.render(fields[batch[row]]), what="first-step scores",
                               model=self.name_or_path)
                for i, seq, value in zip(batch, sequences, answerability):
                    results[i] = (self.format.decode(self.tokenizer, seq), float(value))
        return [results[first[tuple(seq)]] for seq in ids]
