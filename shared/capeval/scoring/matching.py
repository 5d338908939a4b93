"""Greedy cosine matching of token embeddings (the BERTScore core) and IDF weights.

Pure functions over tensors and id lists; no model is involved. Embeddings passed
in are expected to be L2-normalised per row (:func:`normalize_rows`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np
import torch


def normalize_rows(embeddings: torch.Tensor) -> torch.Tensor:
    """Each row divided by its L2 norm."""
    return embeddings / embeddings.norm(dim=-1, keepdim=True)


def document_frequencies(documents: Iterable[Sequence[int]]) -> tuple[Counter, int]:
    """How many documents contain each token id (once per document), and the number of documents."""
    counts: Counter = Counter()
    total = 0
    for ids in documents:
        counts.update(set(ids))
        total += 1
    return counts, total


def idf_from_counts(counts: Mapping[int, int], num_documents: int) -> "IdfWeights":
    """idf(t) = ln((N + 1) / (df(t) + 1)); ids never seen get ln(N + 1).

    >>> idf = idf_from_counts({7: 1}, 3)
    >>> round(idf[7], 6), round(idf[99], 6)
    (0.693147, 1.386294)
    """
    return IdfWeights({t: math.log((num_documents + 1) / (c + 1)) for t, c in counts.items()}, math.log(num_documents + 1))


def idf_weights(documents: Iterable[Sequence[int]]) -> "IdfWeights":
    """IDF over token-id documents (see :func:`idf_from_counts`)."""
    counts, total = document_frequencies(documents)
    return idf_from_counts(counts, total)


class IdfWeights(dict):
    """A token-id → idf mapping whose missing ids get ``default`` (the unseen-token weight)."""

    def __init__(self, weights: Mapping[int, float], default: float):
        super().__init__(weights)
        self.default = default

    def __missing__(self, token_id: int) -> float:
        return self.default


def token_weights(ids: Sequence[int], special: Sequence[bool], idf: Mapping[int, float] | None) -> torch.Tensor:
    """BERTScore token weights: idf (or 1 without idf) and 0 for special tokens."""
    return torch.tensor([0.0 if s else (1.0 if idf is None else idf[t]) for t, s in zip(ids, special)], dtype=torch.float32)


def segment_max(matrix: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Max over consecutive column segments of the given lengths; -inf for an empty segment.

    >>> segment_max(np.array([[1.0, 5.0, 2.0], [0.0, -1.0, 3.0]]), [2, 0, 1]).tolist()
    [[5.0, -inf, 2.0], [0.0, -inf, 3.0]]
    """
    lengths = np.asarray(lengths)
    out = np.full((matrix.shape[0], len(lengths)), -np.inf, dtype=matrix.dtype)
    nonempty = lengths > 0
    if nonempty.any():
        starts = (np.cumsum(lengths) - lengths)[nonempty]
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
