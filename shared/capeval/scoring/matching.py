"""Greedy cosine matching of token embeddings (the BERTScore core, which ViLBERTScore shares).

Pure functions over tensors and id lists; no model is involved. Embeddings passed
in are expected to be L2-normalised per row (:func:`capeval.finite.unit_rows`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch


def token_weights(ids: Sequence[int], special: Sequence[bool], idf: Mapping[int, float] | None) -> torch.Tensor:
    """BERTScore token weights: idf (or 1 without idf) and 0 for special tokens."""
    return torch.tensor([0.0 if s else (1.0 if idf is None else idf[t]) for t, s in zip(ids, special)], dtype=torch.float32)


def segment_max(matrix: np.ndarray, lengths: Sequence[int] | np.ndarray) -> np.ndarray:
    """Max over consecutive column segments of the given lengths; -inf for an empty segment.

    >>> segment_max(np.array([[1.0, 5.0, 2.0], [0.0, -1.0, 3.0]]), [2, 0, 1]).tolist()
    [[5.0, -inf, 2.0], [0.0, -inf, 3.0]]
    """
    sizes = np.asarray(lengths)
    out = np.full((matrix.shape[0], len(sizes)), -np.inf, dtype=matrix.dtype)
    nonempty = sizes > 0
    if nonempty.any():
        starts = (np.cumsum(sizes) - sizes)[nonempty]
        out[:, nonempty] = np.maximum.reduceat(matrix, starts, axis=1)
    return out


def segment_sum(values: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Sum over consecutive segments of the given lengths (0 for an empty segment).

    >>> segment_sum(np.array([1.0, 2.0, 4.0]), [2, 0, 1]).tolist()
    [3.0, 0.0, 4.0]
    """
    totals = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    ends = np.cumsum(lengths)
    return totals[ends] - totals[ends - np.asarray(lengths)]


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
