"""IDF weights over tokenized documents: idf(t) = ln((N + 1) / (df(t) + 1)), as bert_score and BERT-TBR compute it."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Sequence


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
