"""BLEU, ROUGE-L and CIDEr-D as the COCO caption toolkit (pycocoevalcap 1.2) computes them.

Inputs are captions already tokenized by :func:`capeval.text.ptb.ptb_tokenize` (space-joined
tokens). The toolkit's quirks are kept, since published numbers depend on them:

- BLEU: per-caption scores add 1e-15 / 1e-9 to every n-gram precision (so a zero precision
  gives ~0, not an error), the brevity penalty uses the *closest* reference length (the shorter
  one on a tie), BLEU-n is the geometric mean of the first n precisions; the corpus score is
  computed from summed counts, not averaged.
- ROUGE-L: the best LCS precision and the best LCS recall are taken over the references
  separately (possibly from different references), then F with β = 1.2; tokens are split on
  single spaces, so an empty caption counts as one empty token.
- CIDEr-D: IDF from the references of the scored corpus (``log N − log max(1, df)``, N = number
  of items), raw n-gram counts (no tf normalisation), clipping ``min(g_c, g_r) · g_r``, a Gaussian
  length penalty (σ = 6) on the difference of the *bigram* counts, mean over n = 1..4, mean over
  the references, times 10.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import chain
from typing import Iterable

import numpy as np

from ..text.call_cache import call_table, collection_paused
from ..text.idf import DocumentFrequencies


class NgramTable:
    """The k-grams of every sentence of an :class:`NgramIndex`, for one order k: the grams of sentence ``r`` are
    ``grams[starts[r]:starts[r + 1]]`` (ids ``0 .. size - 1``, ascending) and ``counts`` says how often each occurs
    in it. Gram ``g`` is the (k-1)-gram ``prefix[g]`` followed by the word ``last[g]``."""

    def __init__(self, starts, grams, counts, prefix, last):
        self.starts, self.grams, self.counts, self.prefix, self.last = starts, grams, counts, prefix, last
        self.size = len(last)

    def entries(self, rows):
        """For the sentences ``rows`` (an int array, repeats allowed), the entries of each in turn: which of
        ``rows`` each belongs to, and its position in ``grams`` and ``counts``. Within one row the grams ascend.

        >>> table = NgramIndex(["a b", "b c"], 1).orders[0]
        >>> [part.tolist() for part in table.entries(np.array([1, 1, 0]))]
        [[0, 0, 1, 1, 2, 2], [2, 3, 2, 3, 0, 1]]
        """
        begin = self.starts[rows]
        sizes = self.starts[rows + 1] - begin
        owner = np.repeat(np.arange(len(rows)), sizes)
        # An entry's position: its row's first entry plus its rank within the row.
        return owner, np.arange(len(owner)) + np.repeat(begin - (np.cumsum(sizes) - sizes), sizes)


class NgramIndex:
    """The distinct sentences of a call, their words and their 1..n-grams as integer ids: each n-gram occurrence
    is hashed once, in numpy, into the arrays that BLEU and CIDEr-D read (:func:`ngram_index`). Words are split on
    whitespace; ``rows`` numbers the distinct sentences in their first order.

    >>> index = NgramIndex(["a dog a dog", "a cat", "a dog a dog"], 2)
    >>> index.rows, index.lengths.tolist(), index.words
    ({'a dog a dog': 0, 'a cat': 1}, [4, 2], ['a', 'dog', 'cat'])
    >>> bigrams = index.orders[1]
    >>> index.gram_tuples()[1], bigrams.grams.tolist(), bigrams.counts.tolist(), bigrams.starts.tolist()
    ([('a', 'dog'), ('a', 'cat'), ('dog', 'a')], [0, 2, 1], [2, 1, 1], [0, 2, 3])
    """

    def __init__(self, sentences: Iterable[str], n: int):
        self.rows: dict[str, int] = {}
        for sentence in sentences:
            self.rows.setdefault(sentence, len(self.rows))
        tokens = [sentence.split() for sentence in self.rows]
        self.lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        word_ids: dict[str, int] = {}
        ids = np.fromiter((word_ids.setdefault(word, len(word_ids)) for words in tokens for word in words),
                          dtype=np.int64, count=int(self.lengths.sum()))
        del tokens
        self.words = list(word_ids)
        vocabulary = max(1, len(self.words))
        row_of_token = np.repeat(np.arange(len(self.lengths)), self.lengths)
        # Tokens from each one to the end of its sentence: a k-gram starts where at least k are left.
        left = np.cumsum(self.lengths)[row_of_token] - np.arange(len(ids))
        self.orders: list[NgramTable] = []
        gram_at = ids  # the (k-1)-gram starting at each token that starts one
        for k in range(1, n + 1):
            starts_at = np.flatnonzero(left >= k)
            if k == 1:
                gram_ids, prefix, last = ids, np.zeros(vocabulary, dtype=np.int64), np.arange(vocabulary)
            else:
                # A k-gram is a (k-1)-gram and one more word: the distinct pairs, numbered in ascending order.
                pairs, gram_ids = np.unique(gram_at[starts_at] * vocabulary + ids[starts_at + k - 1], return_inverse=True)
                prefix, last = pairs // vocabulary, pairs % vocabulary
                gram_at = np.zeros(len(ids), dtype=np.int64)
                gram_at[starts_at] = gram_ids
            self.orders.append(self.table(row_of_token[starts_at], gram_ids, prefix, last))

    def table(self, row_of_gram, gram_ids, prefix, last) -> NgramTable:
        """The :class:`NgramTable` of the grams ``gram_ids`` occurring in the sentences ``row_of_gram``."""
        size = max(1, len(last))
        keys, counts = np.unique(row_of_gram * size + gram_ids, return_counts=True)
        rows, grams = np.divmod(keys, size)
        starts = np.searchsorted(rows, np.arange(len(self.lengths) + 1))
        return NgramTable(starts, grams, counts, prefix, last)

    def row_ids(self, sentences: Iterable[str]):
        """The rows of ``sentences`` (each one of the indexed sentences), as an int array."""
        rows = self.rows
        return np.fromiter((rows[sentence] for sentence in sentences), dtype=np.int64)

    def gram_tuples(self) -> list[list[tuple[str, ...]]]:
        """Per order, every gram of the index as a tuple of words, in the order of its id."""
        words = self.words
        orders: list[list[tuple[str, ...]]] = [[(word,) for word in words]]
        for table in self.orders[1:]:
            shorter = orders[-1]
            orders.append([shorter[p] + (words[w],) for p, w in zip(table.prefix.tolist(), table.last.tolist())])
        return orders


def ngram_index(sentences: list[str], n: int) -> NgramIndex:
    """The :class:`NgramIndex` of ``sentences``, built once per call for the same sentences: BLEU and CIDEr-D of
    one call share it (:func:`capeval.text.call_cache.shared_text_work`)."""
    indexes = call_table(("ngram-index", n))
    key = tuple(sentences)
    if key not in indexes:
        with collection_paused():  # the sentences' word lists would trigger collections that find nothing: 15%
            indexes[key] = NgramIndex(key, n)
    return indexes[key]


def corpus_index(candidates: list[str], references: list[list[str]], n: int) -> tuple[NgramIndex, "np.ndarray", "np.ndarray", "np.ndarray"]:
    """The :func:`ngram_index` of candidates and references, the candidates' rows, and per reference its row and
    its item (``references`` each non-empty)."""
    if not all(references):
        raise ValueError("every candidate needs at least one reference")
    index = ngram_index([*candidates, *chain.from_iterable(references)], n)
    reference_rows = index.row_ids(chain.from_iterable(references))
    items = np.repeat(np.arange(len(references)), [len(refs) for refs in references])
    return index, index.row_ids(candidates), reference_rows, items


# --------------------------------------------------------------------------- BLEU

TINY = 1e-15
SMALL = 1e-9


def bleu(candidates: list[str], references: list[list[str]], n: int = 4) -> tuple[list[float], list[list[float]]]:
    """Corpus BLEU-1..n and per-caption BLEU-1..n (``per_caption[k][i]`` is BLEU-(k+1) of caption i).

    >>> corpus, per_caption = bleu(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]])
    >>> [round(s, 4) for s in corpus]
    [1.0, 0.7746, 0.6694, 0.5623]
    """
    statistics = bleu_statistics(candidates, references, n)
    per_caption = [list(column) for column in zip(*(bleu_from_statistics(row, n) for row in statistics))] or [[] for _ in range(n)]
    return bleu_from_statistics([sum(column) for column in zip(*statistics)] or [0] * (2 + 2 * n), n), per_caption


def bleu_statistics(candidates: list[str], references: list[list[str]], n: int = 4) -> list[list[int]]:
    """Per caption, the counts whose sums over a corpus give corpus BLEU: ``[test length, closest reference
    length, guessed 1..n-grams, correct (clipped) 1..n-grams]``.

    >>> bleu_statistics(["a dog runs"], [["a dog runs fast", "the dog"]], n=2)
    [[3, 2, 3, 2, 3, 2]]
    """
    if not candidates:
        return []
    index, candidate_rows, reference_rows, items = corpus_index(candidates, references, n)
    test_lengths = index.lengths[candidate_rows]
    reference_lengths = index.lengths[reference_rows]
    # The closest reference length, the shorter one on a tie: the least (distance, length), packed in one int.
    base = int(reference_lengths.max()) + 1
    packed = np.abs(reference_lengths - test_lengths[items]) * base + reference_lengths
    closest = np.minimum.reduceat(packed, np.searchsorted(items, np.arange(len(candidates)))) % base
    columns = [test_lengths, closest, *(np.maximum(0, test_lengths - k) for k in range(n))]
    columns += [clipped_matches(table, candidate_rows, reference_rows, items) for table in index.orders]
    return np.stack(columns, axis=1).tolist()


def clipped_matches(table: NgramTable, candidate_rows, reference_rows, items):
    """Per candidate, its k-grams that its references hold, each counted at most as often as the reference that
    holds it most often (BLEU's clipped counts)."""
    owner, positions = table.entries(reference_rows)
    keys = items[owner] * table.size + table.grams[positions]  # (item, gram), once per reference holding it
    order = np.argsort(keys)
    keys = keys[order]
    first = run_starts(keys)
    most = np.maximum.reduceat(table.counts[positions][order], first)  # the largest count of each (item, gram)
    owner, positions = table.entries(candidate_rows)
    held, at = matches(owner * table.size + table.grams[positions], keys[first])
    clipped = np.minimum(table.counts[positions][held], most[at])
    return np.bincount(owner[held], clipped, minlength=len(candidate_rows)).astype(np.int64)


def matches(keys, sorted_keys):
    """Where ``keys`` occur in the ascending distinct ``sorted_keys``: a mask over ``keys`` and, for the keys
    found, their positions in ``sorted_keys``.

    >>> [part.tolist() for part in matches(np.array([3, 5, 9]), np.array([1, 5, 9]))]
    [[False, True, True], [1, 2]]
    """
    at = np.minimum(np.searchsorted(sorted_keys, keys), max(0, len(sorted_keys) - 1))
    found = sorted_keys[at] == keys if len(sorted_keys) else np.zeros(len(keys), dtype=bool)
    return found, at[found]


def bleu_from_statistics(statistics, n: int = 4) -> list[float]:
    """BLEU-1..n from one caption's :func:`bleu_statistics` row, or from their sums over a corpus."""
    test_len, ref_len = statistics[0], statistics[1]
    return bleu_from_counts(list(statistics[2 + n:2 + 2 * n]), list(statistics[2:2 + n]), test_len, ref_len)


def bleu_from_counts(correct: list[int], guess: list[int], test_len: int, ref_len: float) -> list[float]:
    scores, product = [], 1.0
    for k in range(len(correct)):
        product *= (float(correct[k]) + TINY) / (float(guess[k]) + SMALL)
        scores.append(product ** (1.0 / (k + 1)))
    ratio = (test_len + TINY) / (ref_len + SMALL)
    if ratio < 1:
        scores = [s * math.exp(1 - 1 / ratio) for s in scores]
    return scores


def bleu_unsmoothed(statistics, order: int) -> float:
    """BLEU-``order`` of one caption without the toolkit's epsilons, as NLTK's ``sentence_bleu`` gives it with
    no smoothing: 0 as soon as one n-gram precision up to ``order`` is 0 (so most short captions get BLEU-4 = 0).

    >>> round(bleu_unsmoothed(bleu_statistics(["a dog runs"], [["a dog runs fast"]])[0], 2), 4)
    0.7165
    >>> bleu_unsmoothed(bleu_statistics(["a dog runs"], [["a cat runs"]])[0], 2)
    0.0
    """
    n = (len(statistics) - 2) // 2
    test_len, ref_len = statistics[0], statistics[1]
    guess, correct = statistics[2:2 + n], statistics[2 + n:2 + 2 * n]
    if min(correct[:order]) == 0:
        return 0.0
    score = math.exp(sum(math.log(correct[k] / guess[k]) for k in range(order)) / order)
    return score * math.exp(1 - ref_len / test_len) if test_len < ref_len else score


# --------------------------------------------------------------------------- ROUGE-L

def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Hyyrö 2004): one pass over ``b``.

    >>> lcs_length("a b c d e".split(), "a c e f".split())
    3
    """
    return lcs_length_with(match_masks(a), len(a), b)


def match_masks(tokens: list[str]) -> dict[str, int]:
    """Per distinct token, the bits of its positions in ``tokens``: what :func:`lcs_length_with` needs of them.

    >>> match_masks(["a", "b", "a"])
    {'a': 5, 'b': 2}
    """
    masks: dict[str, int] = {}
    for i, token in enumerate(tokens):
        masks[token] = masks.get(token, 0) | (1 << i)
    return masks


def lcs_length_with(masks: dict[str, int], length: int, other: list[str]) -> int:
    """The LCS length of ``other`` and the ``length`` tokens whose :func:`match_masks` are ``masks``."""
    full = (1 << length) - 1
    v = full
    for token in other:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return length - bin(v).count("1")


def rouge_l(candidates: list[str], references: list[list[str]], beta: float = 1.2) -> list[float]:
    """Per-caption ROUGE-L F (the toolkit's corpus score is their mean).

    >>> [round(s, 4) for s in rouge_l(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]])]
    [0.9242]
    """
    scores = []
    for candidate, refs in zip(candidates, references):
        cand = candidate.split(" ")
        # The LCS is symmetric: the candidate's masks serve all its references.
        masks, length = match_masks(cand), len(cand)
        best_precision = best_recall = 0.0
        for ref in refs:
            ref_tokens = ref.split(" ")
            lcs = lcs_length_with(masks, length, ref_tokens)
            best_precision = max(best_precision, lcs / length)
            best_recall = max(best_recall, lcs / len(ref_tokens))
        if best_precision and best_recall:
            scores.append((1 + beta ** 2) * best_precision * best_recall / (best_recall + beta ** 2 * best_precision))
        else:
            scores.append(0.0)
    return scores


# --------------------------------------------------------------------------- CIDEr-D

def cider_document_frequencies(references: list[list[str]], n: int = 4) -> DocumentFrequencies:
    """CIDEr-D's corpus statistics: in how many items' references each 1..n-gram occurs, and the
    number of items. They add up over shards of a corpus (:meth:`DocumentFrequencies.merge`).

    >>> df = cider_document_frequencies([["a dog", "the dog"], ["a cat"]], n=1)
    >>> df.counts[("a",)], df.counts[("dog",)], df.documents
    (2, 1, 2)
    """
    index, _, reference_rows, items = corpus_index([], references, n)
    counts: Counter = Counter()
    for table, grams in zip(index.orders, index.gram_tuples()):
        # Every gram of the index is in some reference (df >= 1), and the orders' tuples differ: a plain dict update.
        dict.update(counts, zip(grams, item_frequencies(table, reference_rows, items).tolist()))
    return DocumentFrequencies(counts, len(references))


def item_frequencies(table: NgramTable, reference_rows, items):
    """Per gram of ``table``, how many items hold it in at least one of their references."""
    owner, positions = table.entries(reference_rows)
    held = distinct(items[owner] * table.size + table.grams[positions])
    return np.bincount(held % table.size, minlength=table.size)


def distinct(keys):
    """The distinct values of an int array, ascending (a sort: numpy's hashing ``unique`` is slower here).

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    keys = np.sort(keys)
    return keys[run_starts(keys)]


def run_starts(sorted_keys):
    """Where each run of equal values starts in an ascending int array.

    >>> run_starts(np.array([1, 1, 2, 5, 5])).tolist(), run_starts(np.array([], dtype=int)).tolist()
    ([0, 2, 3], [])
    """
    return np.flatnonzero(np.diff(sorted_keys, prepend=sorted_keys[:1] - 1))


def cider_d(candidates: list[str], references: list[list[str]], n: int = 4, sigma: float = 6.0,
            frequencies: DocumentFrequencies | None = None) -> list[float]:
    """Per-caption CIDEr-D; IDF comes from the references of this whole call (the toolkit's corpus
    score is the mean), or from ``frequencies`` (:func:`cider_document_frequencies` of another reference
    corpus, or of a whole corpus scored in shards). With the call's own references a corpus of one item
    scores 0, since log N = 0.

    >>> refs = [["a dog runs on grass", "the dog is running"], ["a cat sits on a mat", "a cat on a mat"]]
    >>> [round(s, 4) for s in cider_d(["a dog runs on the grass", "a cat on the mat"], refs)]
    [3.7008, 3.1598]
    """
    if not candidates:
        return []
    index, candidate_rows, reference_rows, items = corpus_index(candidates, references, n)
    documents = len(references) if frequencies is None else frequencies.documents
    log_n = math.log(float(documents))
    # The toolkit's "length" counts the bigrams (its index 1), a quirk kept for parity: one fewer than the words.
    bigrams = np.maximum(0, index.lengths - 1) if n > 1 else np.zeros_like(index.lengths)
    delta = (bigrams[candidate_rows][items] - bigrams[reference_rows]).astype(float)
    penalty = np.exp(-(delta ** 2) / (2 * sigma ** 2))
    total = np.zeros(len(items))
    grams = None if frequencies is None else index.gram_tuples()
    for k, table in enumerate(index.orders):
        if frequencies is not None and grams is not None:
            df = np.array([frequencies.counts.get(gram, 0) for gram in grams[k]], dtype=np.float64)
        else:
            df = item_frequencies(table, reference_rows, items).astype(float)
        # log N - log max(1, df): a gram no reference holds gets log N.
        weights = table.counts * (log_n - np.log(np.maximum(1.0, df)))[table.grams]
        total += clipped_cosines(table, weights, candidate_rows[items], reference_rows) * penalty
    per_item = np.bincount(items, total, minlength=len(references)) / n / np.bincount(items, minlength=len(references)) * 10.0
    # Each term is a clipped cosine (at most 1), so CIDEr-D is at most 10; rounding could exceed it by an ulp.
    return np.minimum(10.0, per_item).tolist()


def clipped_cosines(table: NgramTable, weights, hypothesis_rows, reference_rows):
    """CIDEr-D's term of one order for each pair ``(hypothesis_rows[p], reference_rows[p])``: the sum over the
    grams both hold of ``min(w_h, w_r) * w_r`` (``weights``: the tf-idf of each entry of ``table``), over the two
    vectors' norms where neither is 0.

    >>> table = NgramIndex(["a b", "a a c"], 1).orders[0]
    >>> weights = np.array([1.0, 2.0, 4.0, 3.0])  # "a b": a=1, b=2; "a a c": a=4, c=3
    >>> clipped_cosines(table, weights, np.array([0, 1]), np.array([1, 1])).tolist()  # min(1, 4) * 4 / (√5 · 5)
    [0.35777087639996635, 1.0]
    """
    row_of_entry = np.repeat(np.arange(len(table.starts) - 1), np.diff(table.starts))
    norms = np.sqrt(np.bincount(row_of_entry, weights * weights, minlength=len(table.starts) - 1))
    owner, positions = table.entries(reference_rows)
    reference_keys = owner * table.size + table.grams[positions]
    reference_weights = weights[positions]
    owner, positions = table.entries(hypothesis_rows)
    found, at = matches(owner * table.size + table.grams[positions], reference_keys)
    shared = reference_weights[at]
    products = np.bincount(owner[found], np.minimum(weights[positions][found], shared) * shared,
                           minlength=len(reference_rows)).astype(float)  # int when nothing matches
    norm = norms[hypothesis_rows] * norms[reference_rows]
    return np.divide(products, norm, out=products, where=norm != 0)
