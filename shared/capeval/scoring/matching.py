"""Building blocks of greedy cosine matching of token embeddings (the BERTScore core).

Pure functions over tensors and id lists; no model is involved. Embeddings passed
in are expected to be L2-normalised per row (:func:`normalize_rows`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch


def normalize_rows(embeddings: torch.Tensor) -> torch.Tensor:
    """Each row divided by its L2 norm."""
    return embeddings / embeddings.norm(dim=-1, keepdim=True)


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
