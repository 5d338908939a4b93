"""IDF weights over tokenized documents: idf(t) = ln((N + 1) / (df(t) + 1)), as bert_score and BERT-TBR compute it."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import Hashable, Iterable, Mapping, Sequence


@dataclass
class DocumentFrequencies:
    """How many documents contain each term, and how many documents there are.

    Both add up over any split of the documents, so shards of a corpus can be counted apart and
    merged into exactly the counts of the whole (the corpus statistics of CIDEr-D and BERT-TBR).

    >>> whole = document_frequencies([[1, 2], [2, 2], [3]])
    >>> shards = document_frequencies([[1, 2]]).merge(document_frequencies([[2, 2], [3]]))
    >>> shards == whole, whole.counts[2], whole.documents
    (True, 2, 3)
    """

    counts: Counter = field(default_factory=Counter)
    documents: int = 0

    def merge(self, other: "DocumentFrequencies") -> "DocumentFrequencies":
        """Add ``other``'s counts into these (in place, so merging many shards stays linear) and return self."""
        self.counts.update(other.counts)
        self.documents += other.documents
        return self


def document_frequencies(documents: Iterable[Iterable[Hashable]]) -> DocumentFrequencies:
    """How many documents contain each term (token id, n-gram; once per document), and the number of documents."""
    term_sets = [set(terms) for terms in documents]
    return DocumentFrequencies(Counter(chain.from_iterable(term_sets)), len(term_sets))  # one counting pass


def idf_from_counts(counts: Mapping[int, int], num_documents: int) -> "IdfWeights":
    """idf(t) = ln((N + 1) / (df(t) + 1)); ids never seen get ln(N + 1).

    >>> idf = idf_from_counts({7: 1}, 3)
    >>> round(idf[7], 6), round(idf[99], 6)
    (0.693147, 1.386294)
    """
    return IdfWeights({t: math.log((num_documents + 1) / (c + 1)) for t, c in counts.items()}, math.log(num_documents + 1))


def idf_weights(documents: Iterable[Sequence[int]]) -> "IdfWeights":
    """IDF over token-id documents (see :func:`idf_from_counts`)."""
    frequencies = document_frequencies(documents)
    return idf_from_counts(frequencies.counts, frequencies.documents)


class IdfWeights(dict):
    """A token-id → idf mapping whose missing ids get ``default`` (the unseen-token weight)."""

    def __init__(self, weights: Mapping[int, float], default: float):
        super().__init__(weights)
        self.default = default

    def __missing__(self, token_id: int) -> float:
        return self.default
