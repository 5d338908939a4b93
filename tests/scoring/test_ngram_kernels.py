"""The COCO n-gram kernels (capeval.scoring.ngram): hand-computed values, and equality with a dictionary-based
implementation of the definitions (the one capeval used before the array kernels) on random captions, whole and in
shards."""

import math
import random
from collections import Counter

import numpy as np
import pytest

from capeval.models import clear_feature_caches
from capeval.scoring import ngram
from capeval.scoring.ngram import (NgramIndex, bleu, bleu_from_statistics, bleu_statistics, bleu_unsmoothed, cider_d,
                                   cider_document_frequencies, clipped_cosines, clipped_matches, item_frequencies, item_grams,
                                   matches, number_ascii_words, number_words, reference_maxima, rouge_l, rouge_l_alone,
                                   run_starts, weighted_references)
from capeval.text.call_cache import shared_text_work
from capeval.text.idf import DocumentFrequencies


def test_the_index_numbers_words_and_grams_per_sentence():
    index = NgramIndex(["b a b", "", "a b", "b a b"], 3)
    assert index.rows == {"b a b": 0, "": 1, "a b": 2} and index.lengths.tolist() == [3, 0, 2]
    assert index.words == ["b", "a"]
    unigrams, bigrams, trigrams = index.orders
    # "b a b": b twice, a once; "": nothing; "a b": a, b (gram ids ascending within a sentence).
    assert (unigrams.starts.tolist(), unigrams.grams.tolist(), unigrams.counts.tolist()) == ([0, 2, 2, 4], [0, 1, 0, 1], [2, 1, 1, 1])
    assert index.gram_tuples()[1] == [("b", "a"), ("a", "b")]
    assert (bigrams.starts.tolist(), bigrams.grams.tolist(), bigrams.counts.tolist()) == ([0, 2, 2, 3], [0, 1, 1], [1, 1, 1])
    assert index.gram_tuples()[2] == [("b", "a", "b")] and trigrams.starts.tolist() == [0, 1, 1, 1]
    # One word: one unigram and one bigram, ids 0 .. size - 1 with nothing beyond.
    unigrams, bigrams = NgramIndex(["a a a"], 2).orders
    assert (unigrams.size, unigrams.last.tolist(), unigrams.counts.tolist()) == (1, [0], [3])
    assert (bigrams.size, bigrams.prefix.tolist(), bigrams.last.tolist(), bigrams.counts.tolist()) == (1, [0], [0], [2])


def test_array_helpers():
    assert run_starts(np.array([2, 2, 2, 4, 9, 9])).tolist() == [0, 3, 4] and run_starts(np.array([7])).tolist() == [0]
    found, at = matches(np.array([0, 3, 4, 7]), np.array([3, 7]))
    assert found.tolist() == [False, True, False, True] and at.tolist() == [0, 1]
    found, at = matches(np.array([2, 7, 9]), np.array([7]))  # one sorted key: every position clipped to it
    assert found.tolist() == [False, True, False] and at.tolist() == [0]
    found, at = matches(np.array([1]), np.array([], dtype=int))
    assert found.tolist() == [False] and at.tolist() == []


def test_clipped_matches_and_item_frequencies_by_hand():
    index = NgramIndex(["a a b", "a b b", "a"], 2)
    candidates, references, items = np.array([0]), np.array([1, 2]), np.array([0, 0])
    unigrams, bigrams = index.orders
    # a: min(2 in the candidate, at most 1 in a reference) = 1; b: min(1, 2) = 1. Bigram "a b": 1.
    for table, clipped in ((unigrams, [2]), (bigrams, [1])):
        assert clipped_matches(table, candidates, reference_maxima(table, item_grams(table, references, items))).tolist() == clipped
    # Two items: ["a b b"] and ["a", "a a b"]; "a" is in both, "b" in both, "a a" only in the second.
    two_items = (np.array([1, 2, 0]), np.array([0, 1, 1]))
    assert item_frequencies(unigrams, item_grams(unigrams, *two_items)).tolist() == [2, 2]
    assert dict(zip(index.gram_tuples()[1], item_frequencies(bigrams, item_grams(bigrams, *two_items)).tolist())) == {
        ("a", "a"): 1, ("a", "b"): 2, ("b", "b"): 1}


def test_clipped_cosines_by_hand():
    table = NgramIndex(["a b", "a a c", "d"], 1).orders[0]
    idf = np.array([1.0, 2.0, 4.0, 0.0])  # a, b, c, d: "a b": a=1, b=2; "a a c": a=2, c=4; "d": 0
    weights = table.counts * idf[table.grams]
    references = weighted_references(table, item_grams(table, np.array([1, 0, 2]), np.array([0, 1, 2])), idf)
    cosines = clipped_cosines(table, weights, np.array([0, 1, 2]), references)
    # min(1, 2) * 2 / (√5 · √20); min(2, 1) * 1 / (√20 · √5); a zero norm: the sum, undivided.
    assert cosines.tolist() == pytest.approx([2 / 10, 1 / 10, 0.0], abs=1e-15)


def test_cider_d_by_hand():
    # N = 2: idf(a) = idf(b) = idf(d) = ln 2 (b: in no reference), idf(c) = 0 (in both items' references).
    # Item 1: candidate (ln2, ln2) on a, b; reference (ln2, 0) on a, c: ln2² / (√2 ln2 · ln2) = 1/√2, times 10.
    # Item 2: the candidate "c" has weight 0, so its norm is 0 and the product 0.
    assert cider_d(["a b", "c"], [["a c"], ["c d"]], n=1) == pytest.approx([10 / math.sqrt(2), 0.0], abs=1e-14)
    # Given frequencies: N = 4 documents, df(a) = 4, so only b (unseen: log 4) counts; the reference "a c" has no b.
    given = DocumentFrequencies(Counter({("a",): 4, ("c",): 1}), 4)
    assert cider_d(["a b"], [["a c"]], n=1, frequencies=given) == [0.0]
    assert cider_d(["a b"], [["a b"]], n=1, frequencies=given) == pytest.approx([10.0], abs=1e-14)
    # By default the frequencies are of the 1..4-grams, the orders CIDEr-D scores: 5 + 4 + 3 + 2 grams of 5 words.
    orders = Counter(map(len, cider_document_frequencies([["a b c d e"]]).counts))
    assert sorted(orders.items()) == [(1, 5), (2, 4), (3, 3), (4, 2)]


def test_bleu_statistics_by_hand():
    # Lengths 3 vs 4 and 2: both one away, the shorter wins. Clipped: a 1, b 1; "a b" 1; nothing longer.
    assert bleu_statistics(["a a b"], [["a b b c", "a b"]], n=3) == [[3, 2, 3, 2, 1, 2, 1, 0]]
    # BLEU-n = (∏ (correct_k + 1e-15) / (guess_k + 1e-9))^(1/n), times the brevity penalty (none: 5 > 4 words).
    row = bleu_statistics(["a b a b c"], [["a b c d"]])[0]
    assert row == [5, 4, 5, 4, 3, 2, 3, 2, 1, 0]
    assert bleu_from_statistics(row) == pytest.approx([3 / 5, math.sqrt(3 / 5 * 2 / 4), (3 / 5 * 2 / 4 * 1 / 3) ** (1 / 3),
                                                       (3 / 5 * 2 / 4 * 1 / 3 * 1e-15 / 2) ** (1 / 4)], rel=1e-9)
    # Without the epsilons (NLTK's unsmoothed sentence BLEU): the plain geometric mean, 0 once a precision is 0.
    assert bleu_unsmoothed(row, 3) == pytest.approx((3 / 5 * 2 / 4 * 1 / 3) ** (1 / 3), rel=1e-12)
    assert bleu_unsmoothed(row, 4) == 0.0
    assert bleu_unsmoothed(bleu_statistics(["a b"], [["a c d"]], n=1)[0], 1) == pytest.approx(math.exp(1 - 3 / 2) / 2, rel=1e-12)
    assert bleu_unsmoothed(bleu_statistics(["a b"], [["a b c d"]])[0], 2) == pytest.approx(math.exp(1 - 4 / 2), rel=1e-12)
    corpus, per_caption = bleu(["a b", "c"], [["a c"], ["c"]], n=1)  # BLEU-1 alone: 1 of 2, then 1 of 1
    assert corpus == pytest.approx([2 / 3], rel=1e-8) and per_caption == [pytest.approx([1 / 2, 1.0], rel=1e-8)]


def test_rouge_l_by_hand():
    # "a b" vs "a c": LCS 1, P = R = 1/2, F = (1 + 1.2²) P R / (R + 1.2² P) = 1/2. No common token: 0, in its place.
    # The best P and the best R may come from different references: P = 2/2 from "a x b", R = 1/1 from "b", so F = 1
    # although neither reference holds the candidate.
    assert rouge_l(["a b", "x y", "a b", "a"], [["a c"], ["p q"], ["a x b", "b"], ["a"]]) == pytest.approx(
        [0.5, 0.0, 1.0, 1.0], abs=1e-15)
    assert rouge_l(["", "a"], [[""], [""]]) == [1.0, 0.0], "split on single spaces: an empty caption is one empty token"


def test_every_candidate_needs_a_reference():
    assert cider_d([], []) == [] and bleu([], []) == ([0.0] * 4, [[]] * 4) and rouge_l([], []) == []
    with pytest.raises(ValueError, match="at least one reference"):
        cider_d(["a"], [[]])
    with pytest.raises(ValueError, match="at least one reference"):
        bleu_statistics(["a", "b"], [["a"], []])  # one item of several


# ----------------------------------------------------------------------- the dictionary-based definitions

def gram_counts(sentence: str, n: int) -> Counter:
    words = sentence.split()
    return Counter(tuple(words[i:i + k]) for k in range(1, n + 1) for i in range(len(words) - k + 1))


def dict_bleu_statistics(candidates, references, n):
    rows = []
    for candidate, refs in zip(candidates, references):
        counts, most = gram_counts(candidate, n), Counter()
        for ref in refs:
            most |= gram_counts(ref, n)  # the largest count of each gram in one reference
        test_len = len(candidate.split())
        ref_len = min((abs(len(r.split()) - test_len), len(r.split())) for r in refs)[1]
        correct = [0] * n
        for gram, count in counts.items():
            correct[len(gram) - 1] += min(count, most[gram])
        rows.append([test_len, ref_len, *[max(0, test_len - k) for k in range(n)], *correct])
    return rows


def dict_document_frequencies(references, n):
    return Counter(gram for refs in references for gram in set().union(*(gram_counts(r, n) for r in refs)))


def dict_cider_d(candidates, references, n, sigma, df, documents):
    log_n = math.log(documents)

    def vector(sentence):
        vec = {gram: tf * (log_n - math.log(max(1.0, df.get(gram, 0)))) for gram, tf in gram_counts(sentence, n).items()}
        norms = [math.sqrt(sum(v * v for g, v in vec.items() if len(g) == k)) for k in range(1, n + 1)]
        return vec, norms, max(0, len(sentence.split()) - 1) if n > 1 else 0

    scores = []
    for candidate, refs in zip(candidates, references):
        vec, norms, length = vector(candidate)
        total = 0.0
        for ref in refs:
            vec_ref, norms_ref, length_ref = vector(ref)
            penalty = math.exp(-((length - length_ref) ** 2) / (2 * sigma ** 2))
            for k in range(1, n + 1):
                value = sum(min(v, vec_ref[g]) * vec_ref[g] for g, v in vec.items() if len(g) == k and g in vec_ref)
                if norms[k - 1] and norms_ref[k - 1]:
                    value /= norms[k - 1] * norms_ref[k - 1]
                total += value * penalty
        scores.append(min(10.0, total / n / len(refs) * 10.0))
    return scores


def random_corpus(seed: int, items: int):
    generator = random.Random(seed)
    words = [f"w{i}" for i in range(generator.choice([3, 8, 40]))]  # few words: grams repeat and clip

    def sentence():
        return " ".join(generator.choice(words) for _ in range(generator.choice([0, 1, 2, 3, 5, 8, 13])))

    pool = [sentence() for _ in range(items)]  # some sentences recur across items
    pick = lambda: generator.choice(pool) if generator.random() < 0.2 else sentence()  # noqa: E731
    return [pick() for _ in range(items)], [[pick() for _ in range(generator.randint(1, 5))] for _ in range(items)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [1, 2, 4])
def test_kernels_equal_the_dictionary_definitions(seed, n):
    candidates, references = random_corpus(seed, 60)
    assert bleu_statistics(candidates, references, n) == dict_bleu_statistics(candidates, references, n)
    df = dict_document_frequencies(references, n)
    assert cider_document_frequencies(references, n) == DocumentFrequencies(df, len(references))
    sigma = [6.0, 2.5][seed % 2]
    assert cider_d(candidates, references, n, sigma) == pytest.approx(
        dict_cider_d(candidates, references, n, sigma, df, len(references)), abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(4))
def test_shards_merge_into_the_whole_corpus(seed):
    candidates, references = random_corpus(seed, 50)
    whole = cider_d(candidates, references)
    cuts = sorted(random.Random(seed).sample(range(1, 50), 3))
    shards = [slice(a, b) for a, b in zip([0, *cuts], [*cuts, 50])]
    counted = [cider_document_frequencies(references[shard]) for shard in shards]
    for order in (counted, counted[::-1]):  # merged in either order
        merged = DocumentFrequencies()
        for frequencies in order:
            merged.merge(DocumentFrequencies(Counter(frequencies.counts), frequencies.documents))
        assert merged == cider_document_frequencies(references)
        scored = [s for shard in shards for s in cider_d(candidates[shard], references[shard], frequencies=merged)]
        assert scored == pytest.approx(whole, abs=1e-12, rel=0)


@pytest.mark.parametrize("seed", range(3))
def test_kernels_equal_pycocoevalcap_on_random_captions(seed):
    pytest.importorskip("pycocoevalcap")
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    candidates, references = random_corpus(seed, 40)
    toolkit_bleu, toolkit_cider = BleuScorer(n=4), CiderScorer(n=4, sigma=6.0)
    for candidate, refs in zip(candidates, references):
        toolkit_bleu += (candidate, refs)
        toolkit_cider += (candidate, refs)
    _, per_caption = toolkit_bleu.compute_score(option="closest")
    for ours, theirs in zip(bleu(candidates, references)[1], per_caption, strict=True):  # BLEU-1 .. BLEU-4
        assert ours == pytest.approx(theirs, abs=1e-12, rel=0)
    assert cider_d(candidates, references) == pytest.approx(list(toolkit_cider.compute_score()[1]), abs=1e-12, rel=0)


# ----------------------------------------------------------------------- numbering words in numpy

def split_and_count(sentences):
    """number_words by its definition: words split on whitespace, numbered as they first occur in a dict."""
    number: dict = {}
    ids = [number.setdefault(word, len(number)) for sentence in sentences for word in sentence.split()]
    spaced = all(sentence == " ".join(sentence.split()) and sentence.isprintable() for sentence in sentences if sentence)
    return list(number), ids, [len(sentence.split()) for sentence in sentences], spaced


def assert_numbered_as_defined(sentences):
    words, ids, lengths, spaced = number_words(sentences)
    assert (words, ids.tolist(), lengths.tolist(), spaced) == split_and_count(sentences)


@pytest.mark.parametrize("sentences", [
    ["a dog", "", "the dog"], [""], ["", ""], [], [" a  dog ", "a"],
    ["skateboarder on a skateboard", "a skateboard", "skateboarders"],  # 8 bytes and more: two ints
    ["abcdefghijklmnopq abcdefghijklmnopr abcdefghijklmnopq", "abcdefghijklmnop"],  # over 16 bytes: a dict
    ["a\tdog", "a dog"], ["a\x1cdog"], ["a\x00b", "a"],  # control characters: the dict's numbering
    ["caf\u00e9 au lait", "caf\u00e9"], ["a\u2028b"],  # not ASCII: the dict's numbering
    ["a\x7fb c"],  # DEL is a word's byte and unprintable: not spaced
])
def test_words_are_numbered_as_split_and_counted(sentences):
    assert_numbered_as_defined(sentences)


@pytest.mark.parametrize("seed", range(5))
def test_random_words_are_numbered_as_split_and_counted(seed):
    generator = random.Random(seed)
    stems = ["a", "dog", "abcdefgh", "abcdefghi", "abcdefgh1", "abcdefghijklmnop", "abcdefghijklmnopq", "x" * 40, "x" * 41]
    sentences = [" ".join(generator.choice(stems) for _ in range(generator.randint(0, 9))) for _ in range(80)]
    sentences += [" " + sentences[0], sentences[1] + "  " + sentences[2]]  # blanks at an end, doubled
    assert_numbered_as_defined(sentences)


def test_words_that_hash_alike_fall_back_to_a_dict(monkeypatch):
    # With zero multipliers every word hashes alike: the check finds two words under one hash, and a dict numbers them.
    monkeypatch.setattr(ngram, "HASH_MULTIPLIERS", (0, 0))
    assert number_ascii_words("a dog a", 1) is None
    assert_numbered_as_defined(["a dog a", "dog"])
    # Words of the same first 8 bytes and another next 8 hash alike when only the first 8 count: the second int tells.
    monkeypatch.setattr(ngram, "HASH_MULTIPLIERS", (ngram.HASH_MULTIPLIERS[0] or 1, 0))
    assert number_ascii_words("abcdefghX abcdefghX", 1) is not None
    assert number_ascii_words("abcdefghX abcdefghY", 1) is None
    assert_numbered_as_defined(["abcdefghX abcdefghY abcdefghX"])


def test_an_index_too_large_for_32_bit_keys_packs_them_in_64():
    # 65,537 sentences of 65,536 distinct words: rows need 17 bits and words 16, one more than 32 together.
    sentences = [f"w{i}" for i in range(65_536)] + ["w1 w1 w2"]
    unigrams, bigrams = NgramIndex(sentences, 2).orders
    assert unigrams.starts[-3:].tolist() == [65_535, 65_536, 65_538]
    assert unigrams.grams[-2:].tolist() == [1, 2] and unigrams.counts[-2:].tolist() == [2, 1]
    assert (unigrams.grams[:65_536] == np.arange(65_536)).all()
    assert bigrams.size == 2 and bigrams.grams.tolist() == [0, 1] and bigrams.starts[-2:].tolist() == [0, 2]


def test_distinct_ids_too_large_to_pack_with_their_positions():
    # 62-bit keys and 2 bits of positions exceed 63 bits: numpy's unique numbers them.
    keys = np.array([2 ** 61 + 1, 7, 2 ** 61 + 1, 2 ** 61])
    assert [part.tolist() for part in ngram.distinct_ids(keys)] == [[7, 2 ** 61, 2 ** 61 + 1], [2, 0, 2, 1]]


def test_a_candidate_word_the_references_lack_matches_nothing():
    # "b" is numbered 1, after the references' one word: as an (item, gram) key it would read (item 1, "a").
    assert bleu_statistics(["b", "c"], [["a"], ["a"]], n=1) == [[1, 1, 1, 0], [1, 1, 1, 0]]
    # "c" is numbered 2, after "a" and "b": as a key it would read (item 1, "a") and give "a" its position in "c".
    assert rouge_l(["c", "b a"], [["a b"], ["a a"]]) == [0.0, 0.5]


def test_rouge_l_at_the_edges_of_the_64_bit_masks():
    candidates = [" ".join(f"w{i % 7}" for i in range(length)) for length in (63, 64, 65)] + ["", "a"]
    references = [[" ".join(f"w{i % 5}" for i in range(30)), "w3 w1"]] * 3 + [["a b"], ["", "a"]]
    expected = [rouge_l_alone(c, refs, 1.2) for c, refs in zip(candidates, references)]
    assert rouge_l(candidates, references) == pytest.approx(expected, abs=1e-15, rel=0)
    assert expected[3:] == [0.0, 1.0]


# ----------------------------------------------------------------------- work shared within and across calls

def test_bleu_and_cider_share_the_candidates_matches_within_a_call():
    candidates, references = random_corpus(7, 40)
    frequencies = cider_document_frequencies(references)
    clear_feature_caches()
    apart = (bleu_statistics(candidates, references), cider_d(candidates, references),
             cider_d(candidates, references, frequencies=frequencies))
    clear_feature_caches()
    with shared_text_work():
        together = (bleu_statistics(candidates, references), cider_d(candidates, references),
                    cider_d(candidates, references, frequencies=frequencies))
    assert together == apart


@pytest.mark.parametrize("seed", range(4))
def test_rouge_l_equals_the_one_by_one_lcs_cold_and_with_kept_references(seed):
    candidates, references = random_corpus(seed, 60)
    generator = random.Random(seed)
    others = [generator.choice(candidates) + " w0" for _ in candidates]
    expected = [[rouge_l_alone(c, refs, 1.2) for c, refs in zip(texts, references)] for texts in (candidates, others)]
    clear_feature_caches()
    assert rouge_l(candidates, references) == pytest.approx(expected[0], abs=1e-15, rel=0)
    assert rouge_l(others, references) == pytest.approx(expected[1], abs=1e-15, rel=0)  # the references' words kept
    clear_feature_caches()
    assert rouge_l(others, references) == rouge_l(others, references)


def test_bleu_of_another_order_reads_its_own_reference_maxima():
    # The maxima kept with the references are per gram order: BLEU-3 after BLEU-4 in one process (and the reverse)
    # reads the bigram maxima for its bigrams, not those of another order (keyed by its column, they were shifted).
    candidates, references = ["a dog runs on the grass", "a cat on a mat"], [["a dog runs on grass", "the dog runs"],
                                                                             ["a cat sits on a mat"]]
    expected = {n: dict_bleu_statistics(candidates, references, n) for n in (2, 3, 4, 5)}
    for orders in ((4, 3, 2, 5), (5, 2, 3, 4)):
        clear_feature_caches()
        assert {n: bleu_statistics(candidates, references, n) for n in orders} == expected
        clear_feature_caches()
        with shared_text_work():  # one call's index per order (5 holds one more table than the shared 4)
            assert {n: bleu_statistics(candidates, references, n) for n in orders} == expected
    clear_feature_caches()
    alone = bleu(candidates, references, n=3)
    clear_feature_caches()
    bleu(candidates, references, n=4)
    assert bleu(candidates, references, n=3) == alone


def test_the_same_references_grouped_two_ways_in_one_call():
    # One flat list of references, one index: the candidates' matches are per grouping (an (item, gram) key of one
    # grouping names another item in the other). Other references for the same candidates: another index.
    candidates = ["a dog runs", "a cat sits", "the bird"]
    grouped = ([["a dog runs", "a cat sits"], ["the bird"], ["a bird sings"]],
               [["a dog runs"], ["a cat sits", "the bird"], ["a bird sings"]],
               [["two dogs run"], ["a cat sits"], ["the bird sings"]], [["two cats run"], ["a dog sits"], ["the bird sings"]])
    expected = [(dict_bleu_statistics(candidates, references, 4),
                 dict_cider_d(candidates, references, 4, 6.0, dict_document_frequencies(references, 4), 3))
                for references in grouped]
    clear_feature_caches()
    with shared_text_work():
        for references, (bleu_expected, cider_expected) in zip(grouped, expected):
            assert bleu_statistics(candidates, references) == bleu_expected
            assert cider_d(candidates, references) == pytest.approx(cider_expected, abs=1e-12, rel=0)


# ----------------------------------------------------------------------- sorting by 16-bit digits

@pytest.mark.parametrize("bits", [0, 1, 15, 16, 17, 31, 32, 33, 48, 63])
def test_stable_order_is_numpys_stable_argsort(bits):
    generator = np.random.default_rng(bits)
    # Few distinct values (ties, kept in their order) spread over the whole width, the largest one included.
    values = generator.integers(0, 2 ** bits - 1, size=40, dtype=np.int64, endpoint=True) if bits else np.zeros(1, dtype=np.int64)
    keys = generator.choice(values, size=3000)
    keys[generator.integers(3000)] = values.max()
    assert ngram.stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()
    assert ngram.stable_order(np.array([], dtype=np.int64)).tolist() == []


def counted_per_sentence(index: NgramIndex, k: int) -> list[dict]:
    """Each sentence's k-grams and their counts, read from the index's table of order k."""
    table, grams = index.orders[k - 1], index.gram_tuples()[k - 1]
    return [dict(zip([grams[g] for g in table.grams[start:end].tolist()], table.counts[start:end].tolist()))
            for start, end in zip(table.starts[:-1].tolist(), table.starts[1:].tolist())]


@pytest.mark.parametrize("seed", range(4))
def test_the_index_tables_count_each_sentences_grams(seed):
    # Repeated grams, sentences shorter than n, empty ones, words not ASCII (the dict's numbering) and many words
    # (gram keys over 16 bits: sorted by two digits or more).
    candidates, references = random_corpus(seed, 80)
    sentences = candidates + [r for refs in references for r in refs] + ["caf\u00e9 au lait au lait", "\u00e9"]
    sentences += [" ".join(f"v{(i * 7 + j) % 300}" for j in range(6)) for i in range(seed * 200)]
    index = NgramIndex(sentences, 4)
    rows = list(index.rows)
    for k in range(1, 5):
        assert counted_per_sentence(index, k) == [Counter(zip(*(s.split()[i:] for i in range(k)))) for s in rows]
        table = index.orders[k - 1]
        for start, end in zip(table.starts[:-1].tolist(), table.starts[1:].tolist()):  # ascending within a sentence
            assert (np.diff(table.grams[start:end]) > 0).all()
