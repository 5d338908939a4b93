"""BERTScore matching and IDF: hand-worked numbers, no model."""

import math

import numpy as np
import pytest
import torch

from capeval.finite import unit_rows
from capeval.scoring.matching import match_one_candidate, padding_floors, segment_max, segment_sum, token_weights
from capeval.text.idf import idf_weights

NO_FLOOR = np.array([-np.inf])


def match(candidate, references, cand_w=None, ref_ws=None, floors=(None, None)):
    """P, R, F of a candidate against references given as lists of rows."""
    cand = np.asarray(candidate, dtype=np.float64)
    refs = [np.asarray(r, dtype=np.float64) for r in references]
    cand_w = np.ones(len(cand)) if cand_w is None else np.asarray(cand_w, dtype=np.float64)
    ref_ws = [np.ones(len(r)) for r in refs] if ref_ws is None else [np.asarray(w, dtype=np.float64) for w in ref_ws]
    p_floor = np.full(len(refs), -np.inf) if floors[0] is None else np.asarray(floors[0])
    r_floor = np.full(len(refs), -np.inf) if floors[1] is None else np.asarray(floors[1])
    return match_one_candidate(cand, cand_w, np.concatenate(refs), np.concatenate(ref_ws), [len(r) for r in refs], p_floor, r_floor)


def test_greedy_match_hand_worked():
    # Similarity [[1.0, 0.2, 0.0], [0.9, 0.6, 0.3]] built from unit vectors.
    e = np.eye(3)
    candidate = [e[0], 0.9 * e[0] + 0.6 * e[1] + 0.3 * e[2]]
    reference = [e[0], 0.2 * e[0] + np.sqrt(1 - 0.04) * e[1], e[2]]
    sim = np.asarray(candidate) @ np.asarray(reference).T
    precision, recall, f_score = match(candidate, [reference], ref_ws=[[1.0, 1.0, 2.0]])
    assert precision[0] == pytest.approx((sim[0].max() + sim[1].max()) / 2)
    assert recall[0] == pytest.approx((sim[:, 0].max() + sim[:, 1].max() + 2 * sim[:, 2].max()) / 4)
    assert f_score[0] == pytest.approx(2 * precision[0] * recall[0] / (precision[0] + recall[0]))


def test_special_token_can_win_the_max_with_zero_weight():
    # The reference's [SEP] embedding equals the candidate's token: that token's max is 1.
    token = unit_rows(torch.tensor([[1.0, 2.0, 0.5]]), items=["token"], what="rows", model="test").numpy()[0]
    cls = np.array([0.0, 0.0, 1.0])
    other = unit_rows(torch.tensor([[1.0, -1.0, 0.0]]), items=["other"], what="rows", model="test").numpy()[0]
    weights_c = token_weights([101, 7, 102], [True, False, True], None).numpy()
    weights_r = token_weights([101, 9, 102], [True, False, True], None).numpy()
    precision, _, _ = match([cls, token, cls], [[cls, other, token]], weights_c, [weights_r])
    assert precision[0] == pytest.approx(1.0, abs=1e-6)


def test_empty_side_scores_zero():
    e = np.eye(2)
    precision, recall, f_score = match([e[0], e[1]], [[e[0]], [e[1]]], cand_w=[0.0, 0.0])
    assert precision.tolist() == recall.tolist() == f_score.tolist() == [0.0, 0.0]
    precision, recall, f_score = match([e[0]], [[e[0]], [e[1]]], ref_ws=[[0.0], [1.0]])
    assert (precision[0], recall[0], f_score[0]) == (0.0, 0.0, 0.0) and f_score[1] == 0.0


def test_each_reference_is_scored_separately():
    e = np.eye(3)
    precision, recall, _ = match([e[0], e[1]], [[e[0]], [e[0], e[1], e[2]]])
    assert precision.tolist() == pytest.approx([0.5, 1.0])
    assert recall.tolist() == pytest.approx([1.0, 2 / 3])


def test_padding_floor_replaces_a_negative_best_match():
    e = np.eye(2)
    candidate, reference = [e[0]], [-e[0]]  # cosine -1
    assert match(candidate, [reference])[0][0] == pytest.approx(-1.0)
    # Padded on both sides in its bert_score batch: padding zeros join the maxima.
    assert match(candidate, [reference], floors=([0.0], [0.0]))[0][0] == 0.0


def test_padding_floors_per_batch():
    assert padding_floors([4, 4, 6, 2, 2], 2).tolist() == [-np.inf, -np.inf, -np.inf, 0.0, -np.inf]


def test_segment_helpers():
    m = np.array([[1.0, 4.0, 2.0, 3.0]])
    assert segment_max(m, [1, 0, 3]).tolist() == [[1.0, -np.inf, 4.0]]
    assert segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), [3, 1, 0]).tolist() == [6.0, 4.0, 0.0]


def test_idf_vectors():
    # M = 3 references, token 5 in one of them: ln(4/2); unseen: ln 4; [CLS]/[SEP] in all: 0.
    idf = idf_weights([[101, 5, 102], [101, 6, 102], [101, 7, 7, 102]])
    assert idf[5] == pytest.approx(0.693147, abs=1e-6)
    assert idf[12345] == pytest.approx(1.386294, abs=1e-6)
    assert idf[101] == 0.0 and idf[102] == 0.0
    assert idf[7] == pytest.approx(math.log(4 / 2))  # counted once per document
    assert token_weights([101, 5, 102], [True, False, True], idf).tolist() == pytest.approx([0.0, 0.693147, 0.0], abs=1e-6)
