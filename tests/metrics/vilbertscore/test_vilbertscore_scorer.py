"""The ViLBERTScore scorer: options, lazy loading, input errors, encoding each (caption, image) pair once,
batch and order invariance, box and reference counts, the clean mode and the images/extractor path."""

import numpy as np
import pytest

from capeval.models import ModelUnavailableError
from capeval.scoring.vilbertscore import MULTI_TASK_CHECKPOINT, VilbertScoreScorer
from capeval.vision.extractors import RegionExtractor
from capeval.vision.regions import RegionFeatureError, as_region_features

PREDICTIONS = ["two men riding horses", "A horse in an arena.", "a dog"]
REFERENCES = [["men on horses", "a rodeo", "two riders"], ["a horse", "men on horses"], ["a horse"]]


@pytest.fixture()
def images(sample_vilbert_features, random_vilbert_features):
    return [sample_vilbert_features, dict(sample_vilbert_features), random_vilbert_features]


def test_default_options_construct_offline_without_loading(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CAPEVAL_CACHE", "/nonexistent-capeval-cache")
    scorer = VilbertScoreScorer()
    assert scorer.options() == {"checkpoint": MULTI_TASK_CHECKPOINT, "config": "bert_base_6layer_6conect",
                                "tokenizer": "bert-base-uncased", "layer": 6, "mode": "code"}
    assert scorer.name == "vilbertscore" and scorer.primary == "f1" and scorer.needs_images and scorer.value_range == (-1.0, 1.0)
    with pytest.raises(ModelUnavailableError, match="offline"):
        scorer.score(["a horse"], [["a horse"]], region_features=[{"features": np.ones((2, 2048)), "norm_bb": np.zeros((2, 6))}])


@pytest.mark.parametrize("options, message", [
    ({"mode": "paper"}, r"mode must be one of \('code', 'clean'\), got 'paper' \(str\)"),
    ({"layer": 0}, r"layer must be a co-attention block in 1\.\.6"),
    ({"layer": 7}, r"layer must be a co-attention block in 1\.\.6"),
    ({"layer": "6"}, "layer must be"),
    ({"layer": True}, "layer must be"),
    ({"config": "/nonexistent/config.json"}, "config: cannot read the ViLBERT config"),
])
def test_bad_options_fail_at_construction(options, message):
    with pytest.raises(ValueError, match=message):
        VilbertScoreScorer(**options)


def test_extractor_must_be_a_region_extractor():
    with pytest.raises(TypeError, match="RegionExtractor"):
        VilbertScoreScorer(extractor="detectron2")


def test_options_name_local_files_by_content(tiny_vilbert):
    options = tiny_vilbert(layer=3, mode="clean").options()
    assert options["checkpoint"].startswith("multi_task_tiny.bin@") and options["config"].startswith("tiny_6layer_6conect.json@")
    assert (options["layer"], options["mode"]) == (3, "clean")


def test_identical_caption_scores_one(tiny_vilbert, images):
    for kind in ("multi_task", "pretrained"):
        for mode in ("code", "clean"):
            scores = tiny_vilbert(kind, mode=mode).score(["two men riding horses"], [["Two men riding horses"]], region_features=images[:1])
            assert [scores[c][0] for c in ("precision", "recall", "f1")] == pytest.approx([1.0] * 3, abs=1e-6), (kind, mode)


@pytest.mark.slow
def test_batching_and_order_do_not_change_scores(tiny_vilbert, images):
    scorer = tiny_vilbert()
    together = scorer.score(PREDICTIONS, REFERENCES, region_features=images)
    one_pair_per_batch = scorer.score(PREDICTIONS, REFERENCES, region_features=images, batch_size=1)
    reversed_order = scorer.score(PREDICTIONS[::-1], REFERENCES[::-1], region_features=images[::-1], batch_size=2)
    alone = [scorer.score([p], [r], region_features=[i]) for p, r, i in zip(PREDICTIONS, REFERENCES, images)]
    for column in ("precision", "recall", "f1"):
        assert together[column] == pytest.approx(one_pair_per_batch[column], abs=1e-6)
        assert together[column] == pytest.approx(reversed_order[column][::-1], abs=1e-6)
        assert together[column] == pytest.approx([s[column][0] for s in alone], abs=1e-6)
    assert together.corpus["f1"] == pytest.approx(np.mean(together["f1"]))


def test_each_caption_image_pair_is_encoded_once(tiny_vilbert, images):
    scorer = tiny_vilbert()
    encoded_rows = []
    hook = scorer.model().embeddings.register_forward_hook(lambda module, args, output: encoded_rows.append(output.shape[0]))
    try:
        scorer.score(PREDICTIONS, REFERENCES, region_features=images)
    finally:
        hook.remove()
    # Predictions 0 and 1 share an image (given as two equal dicts): "men on horses" is encoded once for it,
    # and "a horse" once with it and once with the third image.
    distinct = {("two men riding horses", 0), ("men on horses", 0), ("a rodeo", 0), ("two riders", 0),
                ("A horse in an arena.", 0), ("a horse", 0), ("a dog", 2), ("a horse", 2)}
    assert sum(encoded_rows) == len(distinct)


def test_layers_and_modes_give_different_scores(tiny_vilbert, images):
    code = tiny_vilbert().score(PREDICTIONS, REFERENCES, region_features=images)
    clean = tiny_vilbert(mode="clean").score(PREDICTIONS, REFERENCES, region_features=images)
    first = tiny_vilbert(layer=1).score(PREDICTIONS, REFERENCES, region_features=images)
    assert not np.allclose(code["f1"], clean["f1"], atol=1e-4) and not np.allclose(code["f1"], first["f1"], atol=1e-4)


def test_clean_mode_has_no_window(tiny_vilbert, images):
    long_caption = " ".join(["a man riding a brown horse"] * 8)  # 48 words
    longer = long_caption + " in a dusty arena"
    code = tiny_vilbert().score([long_caption], [[longer]], region_features=images[:1])
    clean = tiny_vilbert(mode="clean").score([long_caption], [[longer]], region_features=images[:1])
    assert code["f1"][0] == pytest.approx(1.0, abs=1e-6)  # both cut to the same 35 pieces
    assert clean["f1"][0] < 1.0 - 1e-4
    with pytest.raises(ValueError, match="position table holds 512"):
        tiny_vilbert(mode="clean").score(["horse " * 600], [["a horse"]], region_features=images[:1])


def test_any_number_of_boxes_and_references_is_recorded(tiny_vilbert, sample_features, sample_vilbert_features):
    scorer = tiny_vilbert()
    butd = as_region_features(sample_features)  # 36 boxes, fp16, BUTD's norm_bb
    scores = scorer.score(["a horse", "a man"], [["a horse"] * 5, ["a man", "men"]], region_features=[butd, sample_vilbert_features])
    assert scores.inputs == {"features": "butd,vilbert:precomputed", "boxes": "36-100", "references": "2-5"}
    assert "boxes=36-100,references=2-5" in scorer.hashcode(scores)


@pytest.mark.parametrize("features, message", [
    ({"features": np.ones((100, 1024), np.float32), "bbox": np.zeros((100, 4)), "image_width": 10, "image_height": 10},
     r"region_features\[0\] has 1024-d features; this ViLBERT takes 2048-d"),
    ({"features": np.ones((2, 100, 2048), np.float32), "bbox": np.zeros((2, 4)), "image_width": 10, "image_height": 10},
     r"region_features\[0\]: features must be a non-empty N×D array"),
    ({"features": np.full((100, 2048), np.nan, np.float32), "bbox": np.zeros((100, 4)), "image_width": 10, "image_height": 10},
     r"region_features\[0\]: features contains NaN"),
    ({"features": np.ones((100, 2048), np.float32), "bbox": np.zeros((100, 4))}, r"region_features\[0\]: need .*'image_width'"),
    ({"features": np.ones((100, 2048), np.float32), "bbox": np.zeros((99, 4)), "image_width": 10, "image_height": 10},
     r"region_features\[0\]: boxes must be 100×4 to match 100 feature rows, got shape \(99, 4\)"),
])
def test_bad_region_features_raise_clear_errors(tiny_vilbert, features, message):
    with pytest.raises(ValueError, match=message):
        tiny_vilbert().score(["a horse"], [["a horse"]], region_features=[features])


def test_missing_inputs_raise_clear_errors(tiny_vilbert, images):
    scorer = tiny_vilbert()
    with pytest.raises(ValueError, match="ViLBERTScore needs references"):
        scorer.score(["a horse"], None, region_features=images[:1])
    with pytest.raises(ValueError, match="pass region_features"):
        scorer.score(["a horse"], [["a horse"]])
    with pytest.raises(ValueError, match="got 2 predictions but 1 region features"):
        scorer.score(["a horse", "a dog"], [["a horse"], ["a dog"]], region_features=images[:1])
    with pytest.raises(RegionFeatureError, match="one entry per caption"):
        scorer.score(["a horse"], [["a horse"]], region_features=images[0])


def test_tokenizer_larger_than_the_vocabulary_is_rejected(tmp_path, images, vilbert_tokenizer_dir):
    import json

    from capeval.backbones.vilbert import read_vilbert_config, save_random_checkpoint

    from fixtures.vilbert import tiny_config_values

    small = tmp_path / "small_vocab.json"
    small.write_text(json.dumps(tiny_config_values(100)))
    checkpoint = save_random_checkpoint(tmp_path / "small_vocab.bin", read_vilbert_config(small))
    with pytest.raises(ValueError, match="the model's vocabulary has 100"):
        VilbertScoreScorer(checkpoint, config=str(small), tokenizer=vilbert_tokenizer_dir).score(
            ["a horse"], [["a horse"]], region_features=images[:1])


class FixedExtractor(RegionExtractor):
    """Stands in for a detector: the same regions for every image."""

    name = "fixed"

    def __init__(self, regions):
        self.regions, self.calls = regions, 0

    def config(self):
        return {"boxes": self.regions.num_boxes}

    def extract(self, image):
        self.calls += 1
        return self.regions


def test_images_go_through_the_extractor_with_a_cache(tmp_path, tiny_vilbert, sample_image, sample_vilbert_features):
    regions = as_region_features(sample_vilbert_features)
    extractor = FixedExtractor(regions)
    scorer = tiny_vilbert(extractor=extractor, feature_cache_dir=str(tmp_path / "features"))
    from_images = scorer.score(["a horse", "a dog"], [["a horse"], ["two men"]], images=[sample_image, sample_image])
    from_features = scorer.score(["a horse", "a dog"], [["a horse"], ["two men"]], region_features=[regions, regions])
    assert from_images["f1"] == pytest.approx(from_features["f1"], abs=1e-6)
    assert extractor.calls == 1 and from_images.inputs["features"] == 'vilbert:fixed({"boxes": 100})'
    scorer.score(["a horse"], [["a horse"]], images=[sample_image])
    assert extractor.calls == 1  # read back from feature_cache_dir


@pytest.mark.gpu
def test_cuda_scores_match_cpu(tiny_vilbert, images):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cpu = tiny_vilbert().score(PREDICTIONS, REFERENCES, region_features=images)
    cuda = tiny_vilbert(device="cuda").score(PREDICTIONS, REFERENCES, region_features=images)
    for column in ("precision", "recall", "f1"):
        assert cuda[column] == pytest.approx(cpu[column], abs=1e-5)
