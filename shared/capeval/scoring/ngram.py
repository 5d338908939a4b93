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

from ..text.idf import DocumentFrequencies, document_frequencies


def ngrams(tokens: list[str], n: int) -> Counter:
    """Counts of all 1..n-grams of ``tokens`` (as tuples)."""
    counts: Counter = Counter()
    for k in range(1, n + 1):
        counts.update(tuple(tokens[i:i + k]) for i in range(len(tokens) - k + 1))
    return counts


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


def bleu_statistics(candidates: list[str], references: list[list[str]], n: int = 4) -> list[list[float]]:
    """Per caption, the counts whose sums over a corpus give corpus BLEU: ``[test length, closest reference
    length, guessed 1..n-grams, correct (clipped) 1..n-grams]``.

    >>> bleu_statistics(["a dog runs"], [["a dog runs fast", "the dog"]], n=2)
    [[3, 2, 3, 2, 3, 2]]
    """
    rows = []
    cooked: dict[tuple, tuple] = {}  # a reference list's clipping counts and lengths, computed once
    for candidate, refs in zip(candidates, references):
        words = candidate.split()
        counts = ngrams(words, n)
        key = tuple(refs)
        if key not in cooked:
            max_ref: dict = {}
            for ref in refs:
                for gram, count in ngrams(ref.split(), n).items():
                    if count > max_ref.get(gram, 0):
                        max_ref[gram] = count
            cooked[key] = max_ref, [len(ref.split()) for ref in refs]
        max_ref, ref_lengths = cooked[key]
        test_len = len(words)
        ref_len = min((abs(length - test_len), length) for length in ref_lengths)[1]
        guess = [max(0, test_len - k) for k in range(n)]
        correct = [0] * n
        for gram, count in counts.items():
            correct[len(gram) - 1] += min(max_ref.get(gram, 0), count)
        rows.append([test_len, ref_len, *guess, *correct])
    return rows


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
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def rouge_l(candidates: list[str], references: list[list[str]], beta: float = 1.2) -> list[float]:
    """Per-caption ROUGE-L F (the toolkit's corpus score is their mean).

    >>> [round(s, 4) for s in rouge_l(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]])]
    [0.9242]
    """
    scores = []
    for candidate, refs in zip(candidates, references):
        cand = candidate.split(" ")
        best_precision = best_recall = 0.0
        for ref in refs:
            ref_tokens = ref.split(" ")
            lcs = lcs_length(ref_tokens, cand)
            best_precision = max(best_precision, lcs / len(cand))
            best_recall = max(best_recall, lcs / len(ref_tokens))
        if best_precision and best_recall:
            scores.append((1 + beta ** 2) * best_precision * best_recall / (best_recall + beta ** 2 * best_precision))
        else:
            scores.append(0.0)
    return scores


# --------------------------------------------------------------------------- CIDEr-D

def reference_ngrams(references: list[list[str]], n: int = 4) -> dict[str, Counter]:
    """The 1..n-gram counts of each distinct reference sentence."""
    counts_of: dict[str, Counter] = {}
    for sentence in (r for refs in references for r in refs):
        if sentence not in counts_of:
            counts_of[sentence] = ngrams(sentence.split(), n)
    return counts_of


def cider_document_frequencies(references: list[list[str]], n: int = 4,
                               counts_of: dict[str, Counter] | None = None) -> DocumentFrequencies:
    """CIDEr-D's corpus statistics: in how many items' references each 1..n-gram occurs, and the
    number of items. They add up over shards of a corpus (:meth:`DocumentFrequencies.merge`).

    >>> df = cider_document_frequencies([["a dog", "the dog"], ["a cat"]], n=1)
    >>> df.counts[("a",)], df.counts[("dog",)], df.documents
    (2, 1, 2)
    """
    counts_of = counts_of or reference_ngrams(references, n)
    return document_frequencies(chain.from_iterable(counts_of[r] for r in refs) for refs in references)


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
    counts_of = reference_ngrams(references, n)
    frequencies = frequencies or cider_document_frequencies(references, n, counts_of)
    document_frequency = frequencies.counts
    log_n = math.log(float(frequencies.documents))
    # A sentence's TF-IDF vector depends only on the corpus, so each distinct sentence is vectorised once.
    vector_of: dict[str, tuple] = {}

    def vector(sentence: str):
        if sentence in vector_of:
            return vector_of[sentence]
        counts = counts_of.get(sentence) or ngrams(sentence.split(), n)
        vec: list[dict] = [{} for _ in range(n)]
        norm = [0.0] * n
        for gram, tf in counts.items():
            value = tf * (log_n - math.log(max(1.0, document_frequency.get(gram, 0.0))))
            vec[len(gram) - 1][gram] = value
            norm[len(gram) - 1] += value * value
        # The toolkit's "length" counts bigrams (its index 1), a quirk kept for parity.
        bigrams = sum(tf for gram, tf in counts.items() if len(gram) == 2)
        vector_of[sentence] = result = (vec, [math.sqrt(x) for x in norm], bigrams)
        return result

    scores = []
    for candidate, refs in zip(candidates, references):
        vec, norm, length = vector(candidate)
        total = [0.0] * n
        for ref in refs:
            vec_ref, norm_ref, length_ref = vector(ref)
            penalty = math.exp(-((length - length_ref) ** 2) / (2 * sigma ** 2))
            for k in range(n):
                ref_k = vec_ref[k]
                value = sum(min(w, ref_k[g]) * ref_k[g] for g, w in vec[k].items() if g in ref_k)
                if norm[k] != 0 and norm_ref[k] != 0:
                    value /= norm[k] * norm_ref[k]
                total[k] += value * penalty
        # Each term is a clipped cosine (at most 1), so CIDEr-D is at most 10; rounding could exceed it by an ulp.
        scores.append(min(10.0, sum(total) / n / len(refs) * 10.0))
    return scores
