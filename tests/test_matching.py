"""Greedy matching and IDF: hand-worked numbers, no model."""

import math

import pytest
import torch

from capeval.scoring.matching import (
    best_over_references,
    greedy_match,
    idf_weights,
    normalize_rows,
    token_weights,
)


def test_greedy_match_hand_worked():
    sim = torch.tensor([[1.0, 0.2, 0.0], [0.4, 0.6, 0.3]])
    precision, recall, f_score = greedy_match(sim, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 1.0, 2.0]))
    assert precision == pytest.approx((1.0 + 0.6) / 2)
    assert recall == pytest.approx((1.0 + 0.6 + 2 * 0.3) / 4)
    assert f_score == pytest.approx(2 * 0.8 * 0.55 / 1.35)


def test_special_token_can_win_the_max_with_zero_weight():
    # The reference's [SEP] embedding equals the candidate's token: that token's max is 1.
    token = normalize_rows(torch.tensor([[1.0, 2.0, 0.5]]))
    cls, other = normalize_rows(torch.tensor([[0.0, 0.0, 1.0], [1.0, -1.0, 0.0]]))
    candidate = torch.cat([cls[None], token, cls[None]])
    reference = torch.cat([cls[None], other[None], token])  # [CLS], piece, [SEP]=token
    weights_c = token_weights([101, 7, 102], [True, False, True], None)
    weights_r = token_weights([101, 9, 102], [True, False, True], None)
    precision, _, _ = greedy_match(candidate @ reference.T, weights_c, weights_r)
    assert precision == pytest.approx(1.0, abs=1e-6)


def test_empty_side_scores_zero():
    sim = torch.rand(2, 3)
    assert greedy_match(sim, torch.zeros(2), torch.ones(3)) == (0.0, 0.0, 0.0)
    assert greedy_match(sim, torch.ones(2), torch.zeros(3)) == (0.0, 0.0, 0.0)


def test_multi_reference_takes_each_maximum_independently():
    against_r1 = greedy_match(torch.tensor([[0.9, 0.1], [0.9, 0.1]]), torch.ones(2), torch.ones(2))
    against_r2 = greedy_match(torch.tensor([[0.7, 0.8], [0.2, 0.8]]), torch.ones(2), torch.ones(2))
    precision, recall, f_score = best_over_references([against_r1, against_r2])
    assert precision == against_r1[0] and recall == against_r2[1]
    assert f_score == max(against_r1[2], against_r2[2])
    assert f_score != pytest.approx(2 * precision * recall / (precision + recall))


def test_idf_vectors():
    # M = 3 references, token 5 in one of them: ln(4/2); unseen: ln 4; [CLS]/[SEP] in all: 0.
    idf = idf_weights([[101, 5, 102], [101, 6, 102], [101, 7, 7, 102]])
    assert idf[5] == pytest.approx(0.693147, abs=1e-6)
    assert idf[12345] == pytest.approx(1.386294, abs=1e-6)
    assert idf[101] == 0.0 and idf[102] == 0.0
    assert idf[7] == pytest.approx(math.log(4 / 2))  # counted once per document
    assert token_weights([101, 5, 102], [True, False, True], idf).tolist() == pytest.approx([0.0, 0.693147, 0.0], abs=1e-6)
