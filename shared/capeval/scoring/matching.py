"""Greedy cosine matching of token embeddings (the BERTScore core) and IDF weights.

Pure functions over tensors and id lists; no model is involved. Embeddings passed
in are expected to be L2-normalised per row (:func:`normalize_rows`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Sequence

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


def greedy_match(
    similarity: torch.Tensor, candidate_weights: torch.Tensor, reference_weights: torch.Tensor
) -> tuple[float, float, float]:
    """BERTScore P, R, F from one (candidate × reference) cosine matrix.

    P = Σ_i w_i max_j S_ij / Σ_i w_i over candidate tokens, R likewise over
    reference tokens, F = 2PR/(P+R). Zero-weight tokens (special tokens) still
    take part in the maxima, as in bert_score. A side whose weights sum to 0
    (an empty sentence) gives P = R = F = 0.

    >>> s = torch.tensor([[1.0, 0.2], [0.9, 0.6]])
    >>> [round(v, 4) for v in greedy_match(s, torch.ones(2), torch.ones(2))]
    [0.95, 0.8, 0.8686]
    """
    cand_total = float(candidate_weights.sum())
    ref_total = float(reference_weights.sum())
    if cand_total == 0.0 or ref_total == 0.0:
        return 0.0, 0.0, 0.0
    precision = float((similarity.max(dim=1).values * candidate_weights).sum()) / cand_total
    recall = float((similarity.max(dim=0).values * reference_weights).sum()) / ref_total
    f_score = 2 * precision * recall / (precision + recall) if precision + recall != 0 else 0.0
    return precision, recall, f_score


def best_over_references(scores: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """bert_score's multi-reference rule: the max of P, of R and of F, each independently.

    >>> best_over_references([(0.9, 0.5, 0.64), (0.6, 0.8, 0.69)])
    (0.9, 0.8, 0.69)
    """
    precision, recall, f_score = zip(*scores)
    return max(precision), max(recall), max(f_score)
