"""BERT-TBR pure functions: stop list, IDF, combination, cut, stop-word recall, unigram variant."""

import hashlib
import math
from importlib import resources

import numpy as np
import pytest
import torch

from capeval.scoring.bert_tbr import (
    EncodedCaption,
    bert_tbr_score,
    combined_columns,
    stack_references,
    stopword_recall,
    thresholded_recall,
    unigram_score,
)
from capeval.finite import unit_rows
from capeval.text.idf import idf_weights
from capeval.text.stopwords import stopword_list, stopwords

STOP = stopwords("bert_tbr")


def caption(rows, pieces, ids=None):
    """An EncodedCaption from raw rows for [CLS], pieces..., [SEP]."""
    embeddings = unit_rows(torch.tensor(rows, dtype=torch.float32), items=lambda _: " ".join(pieces), what="rows", model="test").numpy()
    ids = ids or [101, *range(1000, 1000 + len(pieces)), 102]
    return EncodedCaption(embeddings, ids, list(pieces))


def test_stop_list_is_the_released_file():
    raw = resources.files("capeval").joinpath("resources", "bert_tbr_stop_words.txt").read_bytes()
    assert hashlib.md5(raw).hexdigest() == "76e7e07fa83bc9522fcc0066f95239e6"
    words = stopword_list("bert_tbr")
    assert len(words) == 1528 and len(set(words)) == 1186
    assert list(words[1:180]) == sorted(stopword_list("nltk179"))
    for present in ("A", "two", "front", "near", "next", "one", "."):
        assert present in STOP
    for absent in (",", "The", "Two"):
        assert absent not in STOP


def test_idf_over_two_samples():
    # N = 12 documents; a piece in 3 of them gets ln(13/4); an unseen piece ln 13.
    docs = [[101, 7, 102]] * 3 + [[101, 8, 102]] * 9
    idf = idf_weights(docs)
    assert idf[7] == pytest.approx(1.178655, abs=1e-6)
    assert idf[555] == pytest.approx(2.564949, abs=1e-6)
    assert idf[101] == 0.0


@pytest.mark.parametrize(
    "candidate, references, expected",
    [
        ("a man riding a horse", ["A man rides a brown horse .", "a man on a horse"], 0.5),
        ("The dog is running", ["The dog runs on the grass", "a dog running"], 0.6),
        ("two dogs in the snow", ["two dogs play in the snow", "Two dogs playing in snow"], 0.4),
        ("a the of", ["the a", "of"], 0.0),
    ],
)
def test_unigram_variant(candidate, references, expected):
    assert unigram_score(candidate, references, STOP) == pytest.approx(expected)


def two_reference_mock():
    # A = [CLS_A, a0, a1, SEP_A], B = [CLS_B, b0, b1, SEP_B] in 6 orthogonal-ish directions.
    eye = torch.eye(8).tolist()
    ref_a = caption([eye[0], eye[1], eye[2], eye[3]], ["a0", "a1"], [101, 11, 12, 102])
    # b0 points at a0 (matched), b1 is new (unmatched).
    ref_b = caption([eye[4], eye[1], eye[6], eye[7]], ["b0", "b1"], [101, 21, 22, 102])
    return ref_a, ref_b


def test_combine_appends_the_mismatched_piece_with_the_off_by_one_row():
    ref_a, ref_b = two_reference_mock()
    stacked = stack_references([ref_a, ref_b], beta=0.4)
    assert stacked.matches[0, 2:].tolist() == [True, False]  # match_A(B): b0 matched, b1 not
    # Stacked rows: A = 0..3 (CLS_A, a0, a1, SEP_A), B = 4..7 (CLS_B, b0, b1, SEP_B).
    rows, labels = combined_columns(0, stacked, "code")
    # Columns [a0, a1, SEP_A] labelled [a0, a1, b1]; b1's own vector is lost, B's row k=1 (b0) dropped last.
    assert rows.tolist() == [1, 2, 3]
    assert [stacked.pieces[i] for i in labels] == ["a0", "a1", "b1"] and stacked.ids[labels].tolist() == [11, 12, 22]
    rows, labels = combined_columns(0, stacked, "paper")
    assert rows.tolist() == [1, 2, 6] and [stacked.pieces[i] for i in labels] == ["a0", "a1", "b1"]


def test_duplicates_from_an_earlier_reference_are_not_appended_twice():
    eye = torch.eye(10).tolist()
    ref_a = caption([eye[0], eye[1], eye[9]], ["x"], [101, 11, 102])
    ref_b = caption([eye[0], eye[5], eye[9]], ["new"], [101, 15, 102])
    ref_c = caption([eye[0], eye[5], eye[9]], ["new"], [101, 15, 102])
    stacked = stack_references([ref_a, ref_b, ref_c], beta=0.4)
    _, labels = combined_columns(0, stacked, "code")
    assert [stacked.pieces[i] for i in labels] == ["x", "new"]  # C's "new" is matched by B (index 1 < 2), so it is a duplicate


def test_cut_zeroes_a_match_below_beta():
    maxima = np.array([0.9, 0.39, 0.5])
    weights = np.array([1.0, 5.0, 1.0])
    # The 0.39 column is cut: it leaves both numerator and denominator.
    assert thresholded_recall(maxima, weights, 0.4) == pytest.approx((0.9 + 0.5) / 2)
    assert thresholded_recall(np.array([0.1, 0.2]), np.ones(2), 0.4) == 0.0


def test_stopword_recall_denominator():
    maxima = np.array([0.9, 0.3, 0.5])
    assert stopword_recall(maxima, 0.4, "code") == pytest.approx(0.7)
    assert stopword_recall(maxima, 0.4, "paper") == pytest.approx(1.4 / 3)
    assert stopword_recall(np.array([]), 0.4, "code") == 0.0


def test_identity_scores_one_and_stopword_only_scores_zero():
    eye = torch.eye(6).tolist()
    ref = caption([eye[0], eye[1], eye[2], eye[5]], ["dog", "runs"], [101, 11, 12, 102])
    idf = idf_weights([[101, 11, 12, 102], [101, 30, 102], [101, 31, 102]])
    assert bert_tbr_score(ref, [ref, ref], idf, STOP) == pytest.approx(1.0)
    only_stop = caption([eye[0], eye[1], eye[5]], ["the"], [101, 11, 102])
    assert bert_tbr_score(only_stop, [only_stop, only_stop], idf, STOP) == 0.0


def test_empty_candidate_scores_zero():
    eye = torch.eye(6).tolist()
    ref = caption([eye[0], eye[1], eye[5]], ["dog"], [101, 11, 102])
    empty = caption([eye[0], eye[5]], [], [101, 102])
    assert bert_tbr_score(empty, [ref], idf_weights([[101, 11, 102], [101, 102]]), STOP) == 0.0


def released_code_loop(candidate, references, idf, beta=0.4):
    """A literal, loop-for-loop transcription of the released algorithm (spec §6), for parity."""
    def cos(u, v):
        return float(u @ v)

    marks = {}
    for a, ref_a in enumerate(references):
        for b, ref_b in enumerate(references):
            if a != b:
                row = []
                for k in range(len(ref_b.pieces)):
                    best = 0.0
                    for t in range(len(ref_a.pieces)):
                        best = max(cos(ref_b.embeddings[k + 1], ref_a.embeddings[t + 1]), best)
                    row.append(1 if best > beta else 0)
                marks[a, b] = row
    total = 0.0
    for a, base in enumerate(references):
        hid = [row for row in base.embeddings]
        toks = list(base.pieces)
        tok_ids = list(base.ids[1:-1])
        for b, other in enumerate(references):
            if b == a:
                continue
            for k, mark in enumerate(marks[a, b]):
                if mark == 0 and not any(c < b and c != a and marks[c, b][k] == 1 for c in range(len(references))):
                    hid.append(other.embeddings[k])
                    toks.append(other.pieces[k])
                    tok_ids.append(other.ids[k + 1])
        idf_vec = [idf[101]] + [idf[t] for t in tok_ids] + [idf[102]]
        cand_rows = candidate.embeddings[1:-1]
        columns = hid[1:-1]
        score_full = idf_full = 0.0
        for r, column in enumerate(columns):
            best = 0.0
            for g in range(len(cand_rows)):
                if cos(cand_rows[g], column) > best:
                    best = cos(cand_rows[g], column)
            if best > beta:
                score_full += best * idf_vec[r + 1]
                idf_full += idf_vec[r + 1]
        combined = score_full / idf_full if idf_full != 0 else 0.0
        kept_sum = kept_count = 0.0
        for r, column in enumerate(columns):
            if toks[r] in STOP:
                continue
            best = 0.0
            for g in range(len(cand_rows)):
                if candidate.pieces[g] not in STOP:
                    best = max(cos(cand_rows[g], column), best)
            if best > beta:
                kept_sum += best
                kept_count += 1
        removed = kept_sum / kept_count if kept_sum != 0 else 0.0
        total += combined * removed
    return total / len(references)


def test_vectorised_code_mode_equals_the_literal_loop():
    generator = torch.Generator().manual_seed(0)
    pieces_pool = ["a", "dog", "runs", "the", "grass", "on", "brown", "##s", "two", "park"]
    def random_caption(n):
        rows = torch.randn(n + 2, 16, generator=generator) + 0.8  # mostly positive cosines around β
        picks = torch.randint(0, len(pieces_pool), (n,), generator=generator).tolist()
        return caption(rows.tolist(), [pieces_pool[i] for i in picks], [101, *[2000 + i for i in picks], 102])
    for trial in range(8):
        candidate = random_caption(5 + trial % 3)
        references = [random_caption(3 + (trial + j) % 5) for j in range(5)]
        idf = idf_weights([c.ids for c in (candidate, *references)] + [[101, 2000, 102]] * 3)
        expected = released_code_loop(candidate, references, idf)
        assert bert_tbr_score(candidate, references, idf, STOP) == pytest.approx(expected, abs=1e-6)
        assert math.isfinite(bert_tbr_score(candidate, references, idf, STOP, mode="paper"))


def test_paper_mode_by_hand():
    """Two references on orthogonal word vectors. Base A = [the, dog] + B's unmatched [park]; base B = [dog, park]
    + A's unmatched [the]. Only "dog" passes β in either: R_comb = 1 (IDF-weighted over the passing columns), and
    paper R_rm = 1 passing maximum / 2 content columns (dog, park; "the" is a stop word) = 0.5, so BERT-TBR = 0.5.
    The released code divides R_rm by the passing columns instead (and keeps [SEP]): it must differ."""
    e = torch.eye(6).tolist()
    candidate = caption([e[5], e[0], e[1], e[5]], ["dog", "runs"], [101, 3000, 3001, 102])
    reference_a = caption([e[4], e[2], e[0], e[4]], ["the", "dog"], [101, 3002, 3000, 102])
    reference_b = caption([e[4], e[0], e[3], e[4]], ["dog", "park"], [101, 3000, 3003, 102])
    assert "the" in STOP and not {"dog", "runs", "park"} & STOP
    idf = {101: 0.1, 102: 0.1, 3000: 1.0, 3001: 2.0, 3002: 0.5, 3003: 3.0}
    assert bert_tbr_score(candidate, [reference_a, reference_b], idf, STOP, mode="paper") == pytest.approx(0.5)
    assert bert_tbr_score(candidate, [reference_a, reference_b], idf, STOP, mode="code") != pytest.approx(0.5)
