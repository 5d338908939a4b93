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
from functools import cached_property
from itertools import chain, count, repeat
from typing import Any, Callable, Hashable, Iterable, NamedTuple

import numpy as np

from ..text.call_cache import call_table, collection_paused, kept
from ..text.idf import DocumentFrequencies


class NgramTable:
    """The k-grams of every sentence of an :class:`NgramIndex`, for one order k: the grams of sentence ``r`` are
    ``grams[starts[r]:starts[r + 1]]`` (ids ``0 .. size - 1``, distinct; ascending in an index built from sentences)
    and ``counts`` says how often each occurs in it. Gram ``g`` is the (k-1)-gram ``prefix[g]`` followed by the word
    ``last[g]``."""

    def __init__(self, starts, grams, counts, prefix, last):
        self.starts, self.grams, self.counts, self.prefix, self.last = starts, grams, counts, prefix, last
        self.size = len(last)

    @cached_property
    def pair_keys(self):
        """Each gram's (prefix, last word) packed in one int (the module's :func:`pair_keys`), computed once."""
        return pair_keys(self.prefix, self.last)

    def entries(self, rows):
        """For the sentences ``rows`` (an int array, repeats allowed), the entries of each in turn: which of
        ``rows`` each belongs to, and its position in ``grams`` and ``counts``.

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
    is hashed once, in numpy, into the arrays that BLEU and CIDEr-D read (:func:`corpus_index`). Words are split on
    whitespace; ``rows`` numbers the distinct sentences in their first order.

    >>> index = NgramIndex(["a dog a dog", "a cat", "a dog a dog"], 2)
    >>> index.rows, index.lengths.tolist(), index.words
    ({'a dog a dog': 0, 'a cat': 1}, [4, 2], ['a', 'dog', 'cat'])
    >>> bigrams = index.orders[1]
    >>> index.gram_tuples()[1], bigrams.grams.tolist(), bigrams.counts.tolist(), bigrams.starts.tolist()
    ([('a', 'dog'), ('a', 'cat'), ('dog', 'a')], [0, 2, 1], [2, 1, 1], [0, 2, 3])
    """

    #: The row of each sentence of the input, for an index built by :func:`ngram_block`.
    input_rows: np.ndarray
    #: Whether every sentence but the empty ones is its words joined by single spaces (so that splitting it on
    #: spaces, as ROUGE-L does, gives its words).
    spaced: bool

    def __init__(self, sentences: Iterable[str], n: int):
        self.rows: dict[str, int] = {}
        for sentence in sentences:
            self.rows.setdefault(sentence, len(self.rows))
        self.words, ids, self.lengths, self.spaced = number_words(list(self.rows))
        self.tokens = ids  # the word ids of the sentences in turn
        vocabulary = max(1, len(self.words))
        word_bits = (vocabulary - 1).bit_length()
        row_of_token = np.repeat(np.arange(len(self.lengths)), self.lengths)
        # Tokens from each one to the end of its sentence: a k-gram starts where at least k are left.
        left = np.cumsum(self.lengths)[row_of_token] - np.arange(len(ids))
        self.orders: list[NgramTable] = [self.table(row_of_token, ids, stable_order(ids), np.zeros(vocabulary, dtype=np.int64),
                                                    np.arange(vocabulary))]
        starts_at = np.flatnonzero(left >= 2)
        gram_at = ids[starts_at]  # the (k-1)-gram starting at each of starts_at
        for k in range(2, n + 1):
            # A k-gram is a (k-1)-gram and one more word: the distinct pairs, numbered in ascending order.
            keys = gram_at << word_bits
            keys |= ids[k - 1:][starts_at]
            by_key = stable_order(keys)
            pairs, gram_ids = ids_in_order(keys, by_key)
            self.orders.append(self.table(row_of_token[starts_at], gram_ids, by_key, pairs >> word_bits,
                                          pairs & ((1 << word_bits) - 1)))
            if k < n:
                longer = left[starts_at] > k
                starts_at, gram_at = starts_at[longer], gram_ids[longer]

    def table(self, row_of_gram, gram_ids, by_gram, prefix, last) -> NgramTable:
        """The :class:`NgramTable` of the grams ``gram_ids`` occurring in the sentences ``row_of_gram``, given
        ``by_gram``, the :func:`stable_order` of ``gram_ids``: a stable sort of that order by row (of rows alone, few
        digits) orders the occurrences by (row, gram), and each run of one (row, gram) is an entry."""
        order = by_gram[stable_order(row_of_gram[by_gram])]
        rows, grams = row_of_gram[order], gram_ids[order]
        new = np.empty(len(order), dtype=bool)
        new[:1] = True
        np.not_equal(rows[1:], rows[:-1], out=new[1:])
        new[1:] |= grams[1:] != grams[:-1]
        first = np.flatnonzero(new)
        return NgramTable(row_starts(rows[first], len(self.lengths)), grams[first], np.diff(first, append=len(order)),
                          prefix, last)

    def row_ids(self, sentences: Iterable[str]):
        """The rows of ``sentences`` (each one of the indexed sentences), as an int array."""
        return np.fromiter(map(self.rows.__getitem__, sentences), dtype=np.int64)

    def gram_tuples(self) -> list[list[tuple[str, ...]]]:
        """Per order, every gram of the index as a tuple of words, in the order of its id."""
        words = self.words
        orders: list[list[tuple[str, ...]]] = [[(word,) for word in words]]
        for table in self.orders[1:]:
            shorter = orders[-1]
            orders.append([shorter[p] + (words[w],) for p, w in zip(table.prefix.tolist(), table.last.tolist())])
        return orders

    def renumbered(self, into: NgramIndex) -> NgramIndex:
        """This index with its words and grams numbered as in ``into`` (an index of the same n built from
        sentences), those ``into`` lacks numbered after its own; its words and its tables' ``prefix`` and ``last``
        are then ``into``'s followed by the new ones. Within a row the grams no longer ascend.

        >>> references, candidates = NgramIndex(["a dog", "a cat"], 2), NgramIndex(["the dog", "a dog"], 2)
        >>> both = candidates.renumbered(references)
        >>> both.words, both.gram_tuples()[1], [table.grams.tolist() for table in both.orders]
        (['a', 'dog', 'cat', 'the'], [('a', 'dog'), ('a', 'cat'), ('the', 'dog')], [[3, 1, 1, 0], [2, 0]])
        """
        index = object.__new__(type(self))
        index.rows, index.lengths, index.spaced = self.rows, self.lengths, self.spaced
        number = dict(into.word_numbers)
        index.words = into.words + [word for word in self.words if word not in number]
        number.update(zip(index.words[len(into.words):], range(len(into.words), len(index.words))))
        word_map = np.fromiter(map(number.__getitem__, self.words), dtype=np.int64, count=len(self.words))
        index.tokens = word_map[self.tokens]
        vocabulary = max(1, len(index.words))
        gram_map = word_map  # this index's ids of an order -> the new ids
        index.orders = []
        for k, (mine, theirs) in enumerate(zip(self.orders, into.orders)):
            if k == 0:
                prefix, last = np.zeros(vocabulary, dtype=np.int64), np.arange(vocabulary)
            else:
                # This index's grams as (prefix, last word) pairs of new ids, looked up (in ascending order: a faster
                # search) among ``into``'s ascending pairs where ``into`` holds the prefix.
                known_prefixes = into.orders[k - 1].size
                my_prefix, my_last = gram_map[mine.prefix], word_map[mine.last]
                candidates = np.flatnonzero(my_prefix < known_prefixes)
                pairs = pair_keys(my_prefix[candidates], my_last[candidates])
                ascending = np.argsort(pairs)
                found_ascending, at = matches(pairs[ascending], theirs.pair_keys)
                found = np.zeros(mine.size, dtype=bool)
                found[candidates[ascending[found_ascending]]] = True
                gram_map = np.empty(mine.size, dtype=np.int64)
                gram_map[candidates[ascending[found_ascending]]] = at
                gram_map[~found] = theirs.size + np.arange(len(found) - len(at))
                prefix = np.concatenate([theirs.prefix, my_prefix[~found]])
                last = np.concatenate([theirs.last, my_last[~found]])
            index.orders.append(NgramTable(mine.starts, gram_map[mine.grams], mine.counts, prefix, last))
        return index

    @cached_property
    def word_numbers(self) -> dict[str, int]:
        """Each word's id (computed once: an index of references numbers every new call's candidates)."""
        return dict(zip(self.words, range(len(self.words))))

    @cached_property
    def nbytes(self) -> int:
        """Estimated bytes of the index and of the sentences it was built from (what a cache of indexes counts;
        computed once)."""
        arrays = [self.lengths, self.tokens, *(array for table in self.orders
                                  for array in (table.starts, table.grams, table.counts, table.prefix, table.last))]
        text = sum(map(len, self.rows)) + sum(map(len, self.words))
        return sum(array.nbytes for array in arrays) + text + 150 * (len(self.rows) + len(self.words))


def pair_keys(prefix, last):
    """(prefix, last word) pairs packed in one int, ascending as the pairs are (ids below 2**31)."""
    return (prefix << 32) | last


SENTENCE_BREAK = "\x00"


def number_words(sentences: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, bool]:
    """The words of ``sentences`` (split on whitespace) in the order they first occur, the id of each word of the
    sentences in turn, each sentence's length, and whether every sentence but the empty ones is its words joined by
    single spaces. Printable ASCII text is numbered in numpy (:func:`number_ascii_words`); other text is split as one
    text, with a word that none holds between the sentences (or one by one where one does), and numbered in a dict.

    >>> words, ids, lengths, spaced = number_words(["a dog", "", "the dog"])
    >>> words, ids.tolist(), lengths.tolist(), spaced, number_words(["a  dog"])[3], number_words(["a\\tdog"])[3]
    (['a', 'dog', 'the'], [0, 1, 2, 1], [2, 0, 2], True, False, False)
    """
    text = "\n".join(sentences)
    numbered = number_ascii_words(text, len(sentences)) if text.isascii() else None
    if numbered is not None:
        return numbered
    text = f" {SENTENCE_BREAK} ".join(sentences)
    if text.count(SENTENCE_BREAK) == len(sentences) - 1:
        flat = text.split()
        numbered = dict.fromkeys(flat)
        numbered.pop(SENTENCE_BREAK, None)
        number = dict(zip(numbered, range(len(numbered))))
        number[SENTENCE_BREAK] = -1
        ids = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
        words, lengths = list(numbered), np.diff(np.flatnonzero(ids < 0), prepend=-1, append=len(ids)) - 1
        ids = ids[ids >= 0]
    else:
        tokens = [sentence.split() for sentence in sentences]
        flat = list(chain.from_iterable(tokens))
        number = dict(zip(dict.fromkeys(flat), count()))
        words, ids = list(number), np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    # Only spaces separate words (any other whitespace is unprintable) and each non-empty sentence has one fewer
    # spaces than words (an empty one none): then no space is doubled or at an end.
    spaces = sum(map(str.count, sentences, repeat(" ")))
    spaced = (spaces == len(ids) - int(np.count_nonzero(lengths))
              and all(map(str.isprintable, sentences)))
    return words, ids, lengths, spaced


#: Per word length 0..8 (longer: 8), the bits of its bytes in a little-endian int64 read at its start.
LOW_BYTES = np.array([(1 << (8 * size)) - 1 for size in range(8)] + [-1], dtype=np.int64)
#: Odd 64-bit multipliers that spread a word's first and next 8 bytes over the high bits of its hash.
HASH_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)


def number_ascii_words(text: str, count: int):
    """:func:`number_words` of ``count`` sentences joined by newlines into ``text`` (ASCII), or None where a sentence
    holds a control character (a newline, a tab) or two words hash alike. Every word is read as the int64 of its
    first 8 bytes (and of the next 8 where it is longer; a Python dict numbers the rare words over 16 bytes), hashed
    and a stable sort of the hashes (:func:`stable_order`) groups the words and orders each word's occurrences: the
    first is where it first occurs.

    >>> words, ids, lengths, spaced = number_ascii_words("a dog\\n\\nthe dog", 3)
    >>> words, ids.tolist(), lengths.tolist(), spaced, number_ascii_words("a\\tdog", 1)
    (['a', 'dog', 'the'], [0, 1, 2, 1], [2, 0, 2], True, None)
    """
    raw = (text + " " * 7).encode("ascii")  # every word's 8-byte window lies in the bytes
    data = np.frombuffer(raw, dtype=np.uint8, count=len(text))
    blanks = np.flatnonzero(data <= 32)
    breaks = blanks[data[blanks] != 32]
    if len(breaks) != count - 1:
        return None
    bounds = np.concatenate([[-1], blanks, [len(text)]])
    starts, ends = bounds[:-1] + 1, bounds[1:]
    if not (ends > starts).all():  # doubled blanks, blanks at an end, empty sentences
        nonempty = ends > starts
        starts, ends = starts[nonempty], ends[nonempty]
    lengths = np.diff(np.searchsorted(starts, breaks), prepend=0, append=len(starts))
    sizes = ends - starts
    window = np.ndarray((len(text),), dtype="<i8", buffer=raw, strides=(1,))
    first = window[starts] & np.take(LOW_BYTES, sizes, mode="clip")
    hashes = first.view(np.uint64) * np.uint64(HASH_MULTIPLIERS[0])
    longer = np.flatnonzero(sizes > 8)
    second = None
    if len(longer):
        second = np.zeros(len(starts), dtype=np.int64)
        second[longer] = window[starts[longer] + 8] & np.take(LOW_BYTES, sizes[longer] - 8, mode="clip")
        longest = longer[sizes[longer] > 16]
        if len(longest):  # numbered in a dict, as -1, -2, ... in the second int (no 8 bytes read as an int are < 0)
            strings = [text[start:end] for start, end in zip(starts[longest].tolist(), ends[longest].tolist())]
            number = dict(zip(dict.fromkeys(strings), range(-1, -len(strings) - 1, -1)))
            first[longest] = 0
            second[longest] = np.fromiter(map(number.__getitem__, strings), dtype=np.int64, count=len(strings))
        hashes[longer] ^= second[longer].view(np.uint64) * np.uint64(HASH_MULTIPLIERS[1])
    # The hash's high bits, as many as leave room for a position in 63 bits (what an earlier packed sort kept).
    shift = max(1, len(starts) - 1).bit_length()
    kept_hashes = (hashes >> np.uint64(shift + 1)).view(np.int64)
    positions = stable_order(kept_hashes)
    first_of_runs = run_starts(kept_hashes[positions])
    first_positions = positions[first_of_runs]  # of each distinct hash: where it first occurs
    word_order = np.argsort(first_positions)
    rank = np.empty(len(word_order), dtype=np.int64)
    rank[word_order] = np.arange(len(word_order))
    ids = np.empty(len(starts), dtype=np.int64)
    ids[positions] = rank[run_numbers(first_of_runs, len(positions))]
    at = first_positions[word_order]
    # Words of one hash are one word: each word's ints equal those of the word its id names.
    if not (np.array_equal(first, first[at][ids])
            and (second is None or np.array_equal(second[longer], second[at][ids[longer]]))):
        return None
    words = [text[start:end] for start, end in zip(starts[at].tolist(), ends[at].tolist())]
    # Printable (no control character but the breaks, no DEL), with one fewer spaces than words in each non-empty
    # sentence (none in an empty one): no space doubled or at an end.
    spaced = (len(blanks) - len(breaks) == len(ids) - int(np.count_nonzero(lengths))
              and not np.count_nonzero(data == 127))
    return words, ids, lengths, spaced


def distinct_ids(keys):
    """The distinct values of an array of non-negative ints, ascending, and the position of each key among them
    (``np.unique(keys, return_inverse=True)``), from the keys' :func:`stable_order`.

    >>> [part.tolist() for part in distinct_ids(np.array([7, 3, 7, 5]))]
    [[3, 5, 7], [2, 0, 2, 1]]
    """
    return ids_in_order(keys, stable_order(keys))


def ids_in_order(keys, order):
    """:func:`distinct_ids` of ``keys`` given ``order``, an order that sorts them."""
    sorted_keys = keys[order]
    first = run_starts(sorted_keys)
    ids = np.empty(len(keys), dtype=np.int64)
    ids[order] = run_numbers(first, len(keys))
    return sorted_keys[first], ids


#: The bits of a digit of :func:`stable_order`: numpy's stable sort of 16-bit ints is a radix sort.
DIGIT_BITS = 16


def stable_order(keys):
    """The order that sorts an array of non-negative ints, equal keys in their order (``np.argsort(keys,
    kind="stable")``): one stable sort per 16-bit digit of the keys, the lowest first (a radix sort). numpy sorts
    16-bit ints by radix, so two or three digits take less time than one sort of the 64-bit keys.

    >>> stable_order(np.array([70000, 3, 65539, 3, 2])).tolist()
    [4, 1, 3, 2, 0]
    """
    order = np.argsort(keys.astype(np.uint16), kind="stable")  # the lowest digit (the cast keeps the low 16 bits)
    for shift in range(DIGIT_BITS, int(keys.max()).bit_length() if len(keys) else 0, DIGIT_BITS):
        order = order[np.argsort((keys[order] >> shift).astype(np.uint16), kind="stable")]
    return order


def run_numbers(first, size: int):
    """For runs that start at ``first`` (ascending, the first at 0) in ``size`` elements, each element's run.

    >>> run_numbers(np.array([0, 2, 3]), 5).tolist()
    [0, 0, 1, 2, 2]
    """
    return np.repeat(np.arange(len(first)), np.diff(first, append=size))


def row_starts(rows, count: int):
    """Where each of ``count`` rows starts in an ascending array of row numbers, and where the last ends.

    >>> row_starts(np.array([0, 0, 2]), 4).tolist()
    [0, 2, 2, 3, 3]
    """
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=count), out=starts[1:])
    return starts


#: The least order an index is built for: BLEU, CIDEr-D and ROUGE-L (words alone) of one call share one index.
SHARED_ORDER = 4


def ngram_block(sentences: tuple[str, ...], order: int) -> NgramIndex:
    """The :class:`NgramIndex` of ``sentences`` for n-grams up to ``order``, kept across calls by the exact sentences
    and the order (:func:`capeval.text.call_cache.kept`); its ``input_rows`` are the rows of ``sentences`` in turn."""
    def build() -> NgramIndex:
        with collection_paused():  # the sentences' word lists would trigger collections that find nothing: 15%
            index = NgramIndex(sentences, order)
        # Without repeated sentences the rows are the input's order.
        index.input_rows = np.arange(len(sentences)) if len(index.rows) == len(sentences) else index.row_ids(sentences)
        return index

    return kept(("ngram-index", order, sentences), build)


class CorpusIndex(NamedTuple):
    """The n-grams of a call's candidates and references in one numbering: the references' :class:`NgramIndex`, the
    candidates' renumbered into it (:meth:`NgramIndex.renumbered`; its words and gram tuples are those of both), and
    the row of each candidate and of each reference."""

    references: NgramIndex
    candidates: NgramIndex
    candidate_rows: np.ndarray
    reference_rows: np.ndarray


class Corpus(NamedTuple):
    """A call's candidates and references as the n-gram metrics read them: their :class:`CorpusIndex`, the item of
    each reference, and what identifies the references and their grouping into items (what is computed from the
    references alone is kept by it: :meth:`kept`)."""

    indexed: CorpusIndex
    items: np.ndarray
    key: tuple

    def kept(self, name: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, a function of the references and their grouping alone, kept across calls with them."""
        return kept((name, *self.key), compute)

    def item_grams(self, k: int) -> ItemGrams:
        """:func:`item_grams` of the references' table of ``orders[k]`` (computed by each metric that keeps a value
        made from it: keeping them all would hold every order's sorted entries at once)."""
        return item_grams(self.indexed.references.orders[k], self.indexed.reference_rows, self.items)

    def candidate_entries(self, k: int, size: int, reference_keys) -> CandidateEntries:
        """:func:`candidate_entries` of the candidates' ``orders[k]`` against the references' distinct sorted keys
        ``item * size + gram``, computed once per call (:func:`capeval.text.call_cache.call_table`): BLEU's and
        CIDEr-D's references hold the same (item, gram) pairs."""
        computed = call_table(("ngram-candidate-entries", id(self.indexed), self.key[2]))
        if (k, size) not in computed:
            computed[k, size] = candidate_entries(self.indexed.candidates.orders[k], self.indexed.candidate_rows, size,
                                                  reference_keys)
        return computed[k, size]


class CandidateEntries(NamedTuple):
    """The entries of a candidates' table for one order, candidate ``i`` (of item ``i``) in turn: each one's candidate
    (``owner``) and position in the table (``positions``); of those whose (item, gram) a reference of the item holds,
    their index among all (``held``) and where their key is among the references' (``at``)."""

    owner: np.ndarray
    positions: np.ndarray
    held: np.ndarray
    at: np.ndarray


def candidate_entries(candidate_table: NgramTable, candidate_rows, size: int, reference_keys) -> CandidateEntries:
    """The :class:`CandidateEntries` of ``candidate_table`` (numbering grams as a reference table of ``size`` grams)
    for the candidates ``candidate_rows``, against the references' distinct ascending ``item * size + gram``.

    >>> table = NgramIndex(["a b", "b c"], 1).orders[0]
    >>> [list(map(int, part)) for part in candidate_entries(table, np.array([0, 1]), 3, np.array([1, 3 + 2]))]
    [[0, 0, 1, 1], [0, 1, 2, 3], [1, 3], [0, 1]]
    """
    owner, positions = candidate_table.entries(candidate_rows)
    grams = candidate_table.grams[positions]
    known = np.flatnonzero(grams < size)  # a gram numbered after the references' is in none of them
    found, at = matches(owner[known] * size + grams[known], reference_keys)
    return CandidateEntries(owner, positions, known[found], at)


def ngram_index(candidates: tuple[str, ...], references: tuple[str, ...], order: int) -> CorpusIndex:
    """The :class:`CorpusIndex` of candidates and references for n-grams up to ``order``, built once per call for
    the same sentences and order (BLEU, CIDEr-D and ROUGE-L of one call share it:
    :func:`capeval.text.call_cache.shared_text_work`) and kept across calls, as the references' and the candidates'
    indexes are on their own: a call with new candidates and the same references counts only the candidates'
    n-grams."""
    indexes = call_table(("ngram-index", order))
    key = (candidates, references)
    if key not in indexes:
        def build() -> CorpusIndex:
            reference_index, candidate_index = ngram_block(references, order), ngram_block(candidates, order)
            return CorpusIndex(reference_index, candidate_index.renumbered(reference_index),
                               candidate_index.input_rows, reference_index.input_rows)

        indexes[key] = kept(("ngram-index", order, candidates, references), build)
    return indexes[key]


def corpus_index(candidates: list[str], references: list[list[str]], n: int) -> Corpus:
    """The :class:`Corpus` of candidates and references: its index (:func:`ngram_index`) holds their 1..n-grams (of
    order ``n`` or :data:`SHARED_ORDER`, whichever is larger: read ``orders[:n]``); ``references`` each non-empty."""
    if not all(references):
        raise ValueError("every candidate needs at least one reference")
    flat, grouping = tuple(chain.from_iterable(references)), tuple(map(len, references))
    order = max(n, SHARED_ORDER)
    return Corpus(ngram_index(tuple(candidates), flat, order), np.repeat(np.arange(len(references)), grouping),
                  (order, flat, grouping))


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
    return bleu_from_statistics([sum(column) for column in zip(*statistics)] or [0] * (2 + 2 * n), n), bleu_columns(statistics, n)


def bleu_statistics(candidates: list[str], references: list[list[str]], n: int = 4) -> list[list[int]]:
    """Per caption, the counts whose sums over a corpus give corpus BLEU: ``[test length, closest reference
    length, guessed 1..n-grams, correct (clipped) 1..n-grams]``.

    >>> bleu_statistics(["a dog runs"], [["a dog runs fast", "the dog"]], n=2)
    [[3, 2, 3, 2, 3, 2]]
    """
    if not candidates:
        return []
    corpus = corpus_index(candidates, references, n)
    (references_index, candidates_index, candidate_rows, reference_rows), items = corpus.indexed, corpus.items
    test_lengths = candidates_index.lengths[candidate_rows]
    reference_lengths = references_index.lengths[reference_rows]
    # The closest reference length, the shorter one on a tie: the least (distance, length), packed in one int.
    base = int(reference_lengths.max()) + 1
    packed = np.abs(reference_lengths - test_lengths[items]) * base + reference_lengths
    closest = np.minimum.reduceat(packed, np.searchsorted(items, np.arange(len(candidates)))) % base
    columns = [test_lengths, closest, *(np.maximum(0, test_lengths - k) for k in range(n))]
    for k, (candidate_table, reference_table) in enumerate(zip(candidates_index.orders[:n], references_index.orders[:n])):
        maxima = corpus.kept(("bleu-maxima", k), lambda: reference_maxima(reference_table, corpus.item_grams(k)))
        columns.append(clipped_matches(candidate_table, candidate_rows, maxima,
                                       corpus.candidate_entries(k, maxima.size, maxima.keys)))
    return np.stack(columns, axis=1).tolist()


class ReferenceMaxima(NamedTuple):
    """For each (item, gram) that a reference of the item holds, ``item * size + gram`` (ascending, ``size``: the
    reference table's) and the largest count of the gram in one of the item's references."""

    keys: np.ndarray
    most: np.ndarray
    size: int


def reference_maxima(table: NgramTable, grams: ItemGrams) -> ReferenceMaxima:
    """The :class:`ReferenceMaxima` of the references whose entries in ``table`` are ``grams``."""
    return ReferenceMaxima(grams.keys, np.maximum.reduceat(table.counts[grams.positions], grams.first), table.size)


class ItemGrams(NamedTuple):
    """The entries of references in a table (:func:`item_grams`), reference ``r`` of item ``items[r]``, ordered by
    their (item, gram) key ``item * size + gram`` (``size``: the table's), those of one key in the references' order:
    each entry's reference (``owner``) and position in the table (``positions``), and the distinct keys, ascending
    (``keys``), whose entries start at ``first``. A reference's entries keep their order in the table (grams
    ascending). BLEU's maxima, CIDEr-D's document frequencies and its references' weights all read them."""

    items: np.ndarray
    owner: np.ndarray
    positions: np.ndarray
    keys: np.ndarray
    first: np.ndarray


def item_grams(table: NgramTable, reference_rows, items) -> ItemGrams:
    """The :class:`ItemGrams` of the references ``reference_rows`` of ``table`` (an index built from sentences: grams
    ascending within a row), reference ``r`` of item ``items[r]``.

    >>> grams = item_grams(NgramIndex(["a b", "b b a"], 1).orders[0], np.array([1, 0]), np.array([0, 0]))
    >>> [part.tolist() for part in grams[1:]]  # "b b a" holds b twice (one entry); both references hold a and b
    [[0, 1, 0, 1], [2, 0, 3, 1], [0, 1], [0, 2]]
    """
    owner, positions = table.entries(reference_rows)
    keys = items[owner] * table.size + table.grams[positions]  # (item, gram), once per reference holding it
    order = stable_order(keys)
    keys = keys[order]
    first = run_starts(keys)
    return ItemGrams(items, owner[order], positions[order], keys[first], first)


def clipped_matches(candidate_table: NgramTable, candidate_rows, maxima: ReferenceMaxima,
                    entries: CandidateEntries | None = None):
    """Per candidate (candidate ``i`` of item ``i``), its k-grams that its references hold, each counted at most as
    often as the reference that holds it most often (BLEU's clipped counts; ``maxima`` of a table that numbers grams
    as ``candidate_table`` does; ``entries``: their :func:`candidate_entries`, computed here if not given)."""
    if entries is None:
        entries = candidate_entries(candidate_table, candidate_rows, maxima.size, maxima.keys)
    clipped = np.minimum(candidate_table.counts[entries.positions[entries.held]], maxima.most[entries.at])
    return np.bincount(entries.owner[entries.held], clipped, minlength=len(candidate_rows)).astype(np.int64)


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


def bleu_columns(statistics, n: int = 4) -> list[list[float]]:
    """BLEU-1..n of every caption from its :func:`bleu_statistics` row (``columns[k][i]``: BLEU-(k+1) of caption i),
    equal to :func:`bleu_from_statistics` of each row: the same operations in the same order, numpy's (exact) on all
    rows at once, Python's ``pow`` and ``math.exp`` where numpy's may round otherwise.

    >>> rows = bleu_statistics(["a dog runs", "a cat"], [["a dog runs fast"], ["a cat sat"]], n=2)
    >>> bleu_columns(rows, 2) == [list(column) for column in zip(*(bleu_from_statistics(row, 2) for row in rows))]
    True
    """
    rows = np.asarray(statistics, dtype=np.int64).reshape(-1, 2 + 2 * n)
    ratio = (rows[:, 0] + TINY) / (rows[:, 1] + SMALL)
    short = np.flatnonzero(ratio < 1)
    brevity = np.array(list(map(math.exp, (1 - 1 / ratio[short]).tolist())))
    product, columns = np.ones(len(rows)), []
    for k in range(n):
        product = product * ((rows[:, 2 + n + k] + TINY) / (rows[:, 2 + k] + SMALL))
        scores = np.array(list(map(pow, product.tolist(), repeat(1.0 / (k + 1)))), dtype=np.float64)
        scores[short] *= brevity
        columns.append(scores.tolist())
    return columns


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
    """Per-caption ROUGE-L F (the toolkit's corpus score is their mean): the LCS of every (candidate, reference)
    pair at once (:func:`lcs_lengths`), and one by one for the items that split on spaces otherwise than into their
    words (an empty sentence, doubled spaces) or have a candidate over 64 words.

    >>> [round(s, 4) for s in rouge_l(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]])]
    [0.9242]
    """
    if not candidates:
        return []
    corpus = corpus_index(candidates, references, 1)
    (references_index, candidates_index, candidate_rows, reference_rows), items = corpus.indexed, corpus.items
    candidate_lengths = candidates_index.lengths[candidate_rows]
    reference_lengths = references_index.lengths[reference_rows]
    alone = (candidate_lengths == 0) | (candidate_lengths > 64)
    alone |= np.bincount(items, reference_lengths == 0, minlength=len(references)) > 0
    if not (candidates_index.spaced and references_index.spaced):
        alone[:] = True
    pairs = ~alone[items]
    lcs = lcs_lengths(candidate_lengths[items[pairs]], reference_lengths[pairs], reference_word_masks(corpus, alone))
    first = np.searchsorted(items[pairs], np.flatnonzero(~alone))
    scores = np.zeros(len(candidates))
    if len(lcs):
        precision = np.maximum.reduceat(lcs / candidate_lengths[items[pairs]], first)
        recall = np.maximum.reduceat(lcs / reference_lengths[pairs], first)
        with np.errstate(invalid="ignore"):
            f = (1 + beta ** 2) * precision * recall / (recall + beta ** 2 * precision)
        scores[~alone] = np.where((precision > 0) & (recall > 0), f, 0.0)
    for item in np.flatnonzero(alone).tolist():
        scores[item] = rouge_l_alone(candidates[item], references[item], beta)
    return scores.tolist()


def rouge_l_alone(candidate: str, references: list[str], beta: float) -> float:
    """ROUGE-L F of one candidate, its tokens and its references' split on single spaces."""
    cand = candidate.split(" ")
    # The LCS is symmetric: the candidate's masks serve all its references.
    masks, length = match_masks(cand), len(cand)
    best_precision = best_recall = 0.0
    for ref in references:
        ref_tokens = ref.split(" ")
        lcs = lcs_length_with(masks, length, ref_tokens)
        best_precision = max(best_precision, lcs / length)
        best_recall = max(best_recall, lcs / len(ref_tokens))
    if best_precision and best_recall:
        return (1 + beta ** 2) * best_precision * best_recall / (best_recall + beta ** 2 * best_precision)
    return 0.0


def reference_word_masks(corpus: Corpus, alone) -> np.ndarray:
    """For every reference of the items not ``alone`` (a mask over the items; their candidates of 1 to 64 words), each
    of its words' bits of positions in the candidate of its item (0 where the candidate has no such word), reference
    by reference: what :func:`lcs_lengths` reads. Each reference word's (item, word) among the distinct ones is kept
    with the references (:meth:`Corpus.kept`), so a call with new candidates looks up only the candidates' words."""
    (references_index, candidates_index, candidate_rows, reference_rows), items = corpus.indexed, corpus.items
    vocabulary = max(1, len(references_index.words))  # the candidates' other words are in no reference
    keys, key_of_word = corpus.kept("rouge-reference-words", lambda: distinct_ids(
        np.repeat(items, references_index.lengths[reference_rows]) * vocabulary
        + sentence_words(references_index, reference_rows)))
    # Each candidate's words by (item, word) ascending, with the bits of their positions.
    scored = np.flatnonzero(~alone)
    lengths = candidates_index.lengths[candidate_rows[scored]]
    position = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    words = sentence_words(candidates_index, candidate_rows[scored])
    known = words < vocabulary
    candidate_keys = np.repeat(scored, lengths)[known] * vocabulary + words[known]
    order = np.argsort(candidate_keys, kind="stable")
    candidate_keys = candidate_keys[order]
    first = run_starts(candidate_keys)
    masks = np.bitwise_or.reduceat(np.left_shift(np.uint64(1), position[known][order].astype(np.uint64)), first)
    found, at = matches(candidate_keys[first], keys)
    mask_of_key = np.zeros(len(keys), dtype=np.uint64)
    mask_of_key[at] = masks[found]
    return mask_of_key[key_of_word[np.repeat(~alone[items], references_index.lengths[reference_rows])]]


def sentence_words(index: NgramIndex, rows):
    """The word ids of the sentences ``rows`` of ``index``, one after the other."""
    lengths = index.lengths[rows]
    starts = (np.cumsum(index.lengths) - index.lengths)[rows]
    return index.tokens[np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))]


def lcs_lengths(hypothesis_lengths, reference_lengths, word_masks):
    """The LCS length of each pair of a hypothesis of ``hypothesis_lengths[p]`` words (1 to 64) and a reference of
    ``reference_lengths[p]`` words, as :func:`lcs_length_with` computes it, for all pairs at once in 64-bit masks:
    ``word_masks`` holds each reference word's bits of positions in its pair's hypothesis, pair by pair. One step per
    word position of the references, longest references first so that each step works on the pairs that still have
    a word.

    >>> masks = [match_masks("a b c d e".split()).get(word, 0) for word in "a c e f b b".split()]  # two references
    >>> lcs_lengths(np.array([5, 5]), np.array([4, 2]), np.array(masks, dtype=np.uint64)).tolist()
    [3, 1]
    """
    if not len(reference_lengths):
        return np.zeros(0, dtype=np.int64)
    word_starts = np.cumsum(reference_lengths) - reference_lengths
    longest_first = np.argsort(-reference_lengths, kind="stable")
    hypothesis_lengths = hypothesis_lengths[longest_first]
    full = np.uint64(2 ** 64 - 1) >> (64 - hypothesis_lengths).astype(np.uint64)
    v = full.copy()
    starts, still = word_starts[longest_first], np.bincount(reference_lengths, minlength=1)[::-1].cumsum()[::-1]
    for step in range(int(reference_lengths.max())):
        active = int(still[step + 1])  # pairs with a word at this step
        u = v[:active] & word_masks[starts[:active] + step]
        v[:active] = ((v[:active] + u) | (v[:active] - u)) & full[:active]
    lcs = np.empty(len(reference_lengths), dtype=np.int64)
    lcs[longest_first] = hypothesis_lengths - np.bitwise_count(v)
    return lcs


# --------------------------------------------------------------------------- CIDEr-D

def cider_document_frequencies(references: list[list[str]], n: int = 4) -> DocumentFrequencies:
    """CIDEr-D's corpus statistics: in how many items' references each 1..n-gram occurs, and the
    number of items. They add up over shards of a corpus (:meth:`DocumentFrequencies.merge`).

    >>> df = cider_document_frequencies([["a dog", "the dog"], ["a cat"]], n=1)
    >>> df.counts[("a",)], df.counts[("dog",)], df.documents
    (2, 1, 2)
    """
    if not all(references):
        raise ValueError("every candidate needs at least one reference")
    index = ngram_block(tuple(chain.from_iterable(references)), max(n, SHARED_ORDER))
    items = np.repeat(np.arange(len(references)), [len(refs) for refs in references])
    counts: Counter = Counter()
    for table, grams in zip(index.orders[:n], index.gram_tuples()):
        # Every gram of the index is in some reference (df >= 1), and the orders' tuples differ: a plain dict update.
        dict.update(counts, zip(grams, item_frequencies(table, item_grams(table, index.input_rows, items)).tolist()))
    return DocumentFrequencies(counts, len(references))


def item_frequencies(table: NgramTable, grams: ItemGrams):
    """Per gram of ``table``, how many items hold it in at least one of their references (whose entries in ``table``
    are ``grams``)."""
    return np.bincount(grams.keys % table.size, minlength=table.size)


def run_starts(sorted_keys):
    """Where each run of equal values starts in an ascending int array.

    >>> run_starts(np.array([1, 1, 2, 5, 5])).tolist(), run_starts(np.array([], dtype=int)).tolist()
    ([0, 2, 3], [])
    """
    starts = np.empty(len(sorted_keys), dtype=bool)
    starts[:1] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=starts[1:])
    return np.flatnonzero(starts)


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
    corpus = corpus_index(candidates, references, n)
    (references_index, candidates_index, candidate_rows, reference_rows), items = corpus.indexed, corpus.items
    documents = len(references) if frequencies is None else frequencies.documents
    log_n = math.log(float(documents))
    # The toolkit's "length" counts the bigrams (its index 1), a quirk kept for parity: one fewer than the words.
    delta = np.zeros(len(items))
    if n > 1:
        delta = (np.maximum(0, candidates_index.lengths[candidate_rows][items] - 1)
                 - np.maximum(0, references_index.lengths[reference_rows] - 1)).astype(float)
    penalty = np.exp(-(delta ** 2) / (2 * sigma ** 2))
    total = np.zeros(len(items))
    grams = None if frequencies is None else candidates_index.gram_tuples()
    for k, (candidate_table, reference_table) in enumerate(zip(candidates_index.orders[:n], references_index.orders[:n])):
        if grams is not None and frequencies is not None:
            df = np.array([frequencies.counts.get(gram, 0) for gram in grams[k]], dtype=np.float64)
            weighted = weighted_references(reference_table, corpus.item_grams(k), idf_of(df[:reference_table.size], log_n))
        else:
            weighted = corpus.kept(("cider-references", k),
                                   lambda: own_weighted_references(reference_table, corpus.item_grams(k), log_n))
            # A gram numbered after the references' is in none of them: df 0.
            df = np.zeros(candidate_table.size)
        idf = np.concatenate([weighted.idf, idf_of(df[len(weighted.idf):], log_n)])
        total += clipped_cosines(candidate_table, candidate_table.counts * idf[candidate_table.grams], candidate_rows,
                                 weighted, corpus.candidate_entries(k, len(weighted.idf), weighted.keys)) * penalty
    per_item = np.bincount(items, total, minlength=len(references)) / n / np.bincount(items, minlength=len(references)) * 10.0
    # Each term is a clipped cosine (at most 1), so CIDEr-D is at most 10; rounding could exceed it by an ulp.
    return np.minimum(10.0, per_item).tolist()


def own_weighted_references(table: NgramTable, grams: ItemGrams, log_n: float) -> WeightedReferences:
    """:func:`weighted_references` under the IDF of the references' own document frequencies."""
    return weighted_references(table, grams, idf_of(item_frequencies(table, grams), log_n))


def idf_of(df, log_n: float):
    """log N - log max(1, df): a gram no reference holds gets log N."""
    return log_n - np.log(np.maximum(1.0, df))


class WeightedReferences(NamedTuple):
    """The references of a call for one order of CIDEr-D (:func:`weighted_references`): ``idf`` of each gram of
    their table, the item of each reference and the norm of its vector of tf-idf weights (``norms``), and all their
    entries ordered by ``item * len(idf) + gram`` (the table's size), each with its reference (``pairs``) and its weight: the entries of
    the distinct ``keys[i]`` are ``starts[i]:starts[i + 1]``."""

    idf: np.ndarray
    items: np.ndarray
    norms: np.ndarray
    keys: np.ndarray
    starts: np.ndarray
    pairs: np.ndarray
    weights: np.ndarray


def weighted_references(table: NgramTable, grams: ItemGrams, idf) -> WeightedReferences:
    """The :class:`WeightedReferences` of the references whose entries in ``table`` are ``grams``, under ``idf`` (one
    per gram of the table)."""
    weights = table.counts[grams.positions] * idf[table.grams[grams.positions]]
    # Each norm sums its reference's entries in the table's order (grams ascending), as they come in ``grams``.
    norms = np.sqrt(np.bincount(grams.owner, weights * weights, minlength=len(grams.items)))
    return WeightedReferences(idf, grams.items, norms, grams.keys, np.append(grams.first, len(weights)), grams.owner, weights)


def clipped_cosines(candidate_table: NgramTable, candidate_weights, candidate_rows, references: WeightedReferences,
                    entries: CandidateEntries | None = None):
    """CIDEr-D's term of one order for each reference (of item ``items[r]``) and the candidate of its item
    (candidate ``i`` of item ``i``, row ``candidate_rows[i]`` of ``candidate_table``, which numbers grams as the
    references' table): the sum over the grams both hold of ``min(w_c, w_r) * w_r`` (``candidate_weights``: the
    tf-idf of each entry of ``candidate_table``), over the two vectors' norms where neither is 0. ``entries``: the
    candidates' :func:`candidate_entries` against the references' keys, computed here if not given.

    >>> table = NgramIndex(["a b", "a a c"], 1).orders[0]
    >>> idf = np.array([1.0, 2.0, 3.0])  # a, b, c: "a b" weighs a=1, b=2 and "a a c" a=2, c=3
    >>> references = weighted_references(table, item_grams(table, np.array([1, 1]), np.array([0, 1])), idf)  # items 0, 1: "a a c"
    >>> clipped_cosines(table, table.counts * idf[table.grams], np.array([0, 1]), references).round(15).tolist()  # min(1, 2) * 2 / (√5 · √13)
    [0.248069469178417, 1.0]
    """
    if entries is None:
        entries = candidate_entries(candidate_table, candidate_rows, len(references.idf), references.keys)
    weights = candidate_weights[entries.positions]
    norms = np.sqrt(np.bincount(entries.owner, weights * weights, minlength=len(candidate_rows)))
    # Each candidate entry meets the entries of the same (item, gram) in the item's references, one per reference.
    first = references.starts[entries.at]
    met = references.starts[entries.at + 1] - first
    at = np.repeat(first - (np.cumsum(met) - met), met) + np.arange(int(met.sum()))
    shared = references.weights[at]
    products = np.bincount(references.pairs[at], np.minimum(np.repeat(weights[entries.held], met), shared) * shared,
                           minlength=len(references.norms)).astype(float)  # int when nothing matches
    norm = norms[references.items] * references.norms
    return np.divide(products, norm, out=products, where=norm != 0)
