"""ViLBERTScore's edges: empty captions (the task-token row is scored, as released), features without pixel boxes,
fp16 features, which images count as the same, and the 512-position boundary of the clean mode."""

import numpy as np
import pytest

from capeval.vision.regions import RegionFeatures

REFERENCES = [["a man rides a brown horse", "two riders"]]
COLUMNS = ("precision", "recall", "f1")


def values(scores, row: int = 0) -> list[float]:
    return [scores[column][row] for column in COLUMNS]


def test_an_empty_caption_scores_its_task_token_row_as_released(tiny_vilbert, random_vilbert_features):
    """The scorer's own math (behind the input check of every surface, which refuses such captions: the card says so)
    keeps the released behaviour: code mode with the multi-task model scores the task-token output even with no word
    pieces, so an empty or blank candidate does not score 0; without a task token, or in clean mode, it scores 0."""
    features = [random_vilbert_features] * 3
    code = tiny_vilbert().score(["", "   ", "a man"], REFERENCES * 3, region_features=features)
    assert values(code, 0) == values(code, 1) == pytest.approx([0.9953231, 0.3934884, 0.5613735], abs=1e-6)
    for scorer in (tiny_vilbert("pretrained"), tiny_vilbert(mode="clean")):
        assert values(scorer.score(["", "  "], REFERENCES * 2, region_features=features[:2]), 1) == [0.0, 0.0, 0.0]


def test_features_without_pixel_boxes_score_as_the_same_boxes_in_pixels(tiny_vilbert, random_vilbert_features):
    """BUTD-style ``norm_bb`` gives ViLBERT's location from the normalised box: the same numbers as pixel boxes."""
    pixels = RegionFeatures.from_pixel_boxes(random_vilbert_features["features"], random_vilbert_features["bbox"], 640, 480)
    normalised = {"features": random_vilbert_features["features"], "norm_bb": pixels.norm_bb}
    assert np.allclose(RegionFeatures.from_butd(**normalised).vilbert_loc5(), pixels.vilbert_loc5(), atol=1e-6)
    scorer = tiny_vilbert()
    with_boxes = scorer.score(["a man riding"], REFERENCES, region_features=[random_vilbert_features])
    without = scorer.score(["a man riding"], REFERENCES, region_features=[normalised])
    assert values(without) == pytest.approx(values(with_boxes), abs=1e-6)
    assert without.inputs["features"].startswith("butd:") and with_boxes.inputs["features"].startswith("vilbert:")


def test_fp16_features_round_their_mean_only_in_code_mode(tiny_vilbert, random_vilbert_features):
    half = {**random_vilbert_features, "features": random_vilbert_features["features"].astype(np.float16)}
    widened = {**half, "features": half["features"].astype(np.float32)}
    for mode, equal in (("code", False), ("clean", True)):
        scorer = tiny_vilbert(mode=mode)
        from_half, from_float = (scorer.score(["a man riding"], REFERENCES, region_features=[f]) for f in (half, widened))
        difference = max(abs(a - b) for a, b in zip(values(from_half), values(from_float)))
        assert (difference == 0.0) == equal, (mode, difference)


def encoded_pairs(scorer, *args, **kwargs) -> int:
    """How many (caption, image) pairs ``scorer.score(*args, **kwargs)`` runs through ViLBERT."""
    rows = []
    hook = scorer.model.embeddings.register_forward_hook(lambda module, inputs, output: rows.append(output.shape[0]))
    try:
        scorer.score(*args, **kwargs)
    finally:
        hook.remove()
    return sum(rows)


def test_an_image_is_its_features_and_its_boxes(tiny_vilbert, random_vilbert_features):
    """Equal features with other boxes are another image (encoded apart); an equal copy is the same image."""
    moved = {**random_vilbert_features, "bbox": random_vilbert_features["bbox"][::-1].copy()}
    copy = {key: np.copy(value) for key, value in random_vilbert_features.items()}
    scorer = tiny_vilbert()
    assert encoded_pairs(scorer, ["a man riding"] * 2, REFERENCES * 2, region_features=[random_vilbert_features, moved]) == 6
    assert encoded_pairs(scorer, ["a man riding"] * 2, REFERENCES * 2, region_features=[random_vilbert_features, copy]) == 3


def test_clean_mode_takes_512_positions_and_refuses_513(tiny_vilbert, random_vilbert_features):
    scorer = tiny_vilbert(mode="clean")
    (pieces,) = scorer.word_pieces(["horse"])
    assert len(pieces) == 1
    longest = " ".join(["horse"] * 510)  # [CLS] + 510 pieces + [SEP] = 512 ids
    scores = scorer.score([longest], [["horse"]], region_features=[random_vilbert_features])
    assert scores["precision"][0] > 0.5
    with pytest.raises(ValueError, match=r"has 513 tokens; ViLBERT's position table holds 512"):
        scorer.score([longest + " horse"], [["horse"]], region_features=[random_vilbert_features])
