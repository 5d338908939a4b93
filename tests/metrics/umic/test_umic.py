"""UMIC: text and box rules, the whole pipeline on the real sample features with a tiny random UNITER,
the evaluate module and its Space handler."""

from pathlib import Path

import numpy as np
import pytest

from capeval.models import ModelUnavailableError, load_pretrained
from capeval.scoring.umic import (UmicScorer, caption_token_ids, umic_from_logit, umic_num_boxes, umic_region_batch,
                                  umic_stored_inputs)
from capeval.vision.regions import RegionFeatures, as_region_features

from fixtures import ASSETS
from fixtures.vision import MeanColourExtractor, tiny_cased_vocab


def umic_scores(scorer, captions, regions, **options):
    """UMIC per caption through the scorer protocol (captions first, region features by keyword)."""
    return scorer.score(captions, region_features=regions, **options)["umic"]


CAPTIONS = ["Two men riding horses on the ground.", "a horse in a field", "a calf", "two men", "", "the arena"]


def with_conf(conf) -> RegionFeatures:
    n = len(conf)
    return RegionFeatures.from_butd(np.zeros((n, 2048), np.float16), np.zeros((n, 6)), np.float16(conf))


def umic_image_inputs(regions):
    """One image's region features and 7-d positions as UMIC feeds them to UNITER (numpy, float32)."""
    features, norm_bb, _ = umic_region_batch([regions])
    stored_features, positions = umic_stored_inputs(features, norm_bb)
    return stored_features[0].numpy(), positions[0].numpy()


def test_box_count_rule():
    assert umic_num_boxes(with_conf([0.9] * 7 + [0.1] * 93)) == 10
    assert umic_num_boxes(with_conf([0.9] * 55 + [0.1] * 45)) == 55
    assert umic_num_boxes(with_conf([0.9] * 100)) == 100
    assert umic_num_boxes(with_conf([0.9] * 120)) == 100
    assert umic_num_boxes(with_conf([0.2] * 30)) == 10, "fp16 0.2 is 0.19995…, not above the threshold"
    assert umic_num_boxes(with_conf([0.9] * 5)) == 5, "never more than are stored"
    assert umic_num_boxes(RegionFeatures.from_butd(np.zeros((36, 4)), np.zeros((36, 6)))) == 36, "without conf: all stored"


def test_sample_image_inputs(sample_features):
    feat, pos = umic_image_inputs(as_region_features(sample_features))
    assert feat.shape == (36, 2048) and feat.dtype == np.float32 and pos.shape == (36, 7)  # all 36 sample boxes have conf > 0.2
    stored = np.load(sample_features)
    assert np.array_equal(feat, stored["features"].astype(np.float32))
    assert np.array_equal(pos[:, 6], stored["norm_bb"][:, 4].astype(np.float32) * stored["norm_bb"][:, 5].astype(np.float32))
    # float32 inputs are quantised to fp16 like the released img_dbs; beyond the fp16 range is an error.
    feat32, pos32 = umic_image_inputs(RegionFeatures.from_butd(np.float32([[1 / 3] * 2048] * 12), np.full((12, 6), 0.1, np.float32)))
    assert feat32[0, 0] == np.float32(np.float16(1 / 3)) and pos32[0, 6] == np.float32(np.float16(0.1)) ** 2
    with pytest.raises(ValueError, match="fp16"):
        umic_image_inputs(RegionFeatures.from_butd(np.full((12, 2048), 1e6, np.float32), np.zeros((12, 6))))


def test_a_single_value_beyond_fp16_is_an_error_naming_its_field():
    features, norm_bb = np.zeros((12, 2048), np.float32), np.full((12, 6), 0.5, np.float32)
    features[3, 5] = 65504.0  # the largest fp16: stored as is
    feat, pos = umic_image_inputs(RegionFeatures.from_butd(features, norm_bb))
    assert feat[3, 5] == 65504.0 and pos[0].tolist() == [0.5] * 6 + [0.25]
    features[3, 5] = 7e4
    with pytest.raises(ValueError, match=r"\(features contains NaN or infinite values\)"):
        umic_image_inputs(RegionFeatures.from_butd(features, norm_bb))
    norm_bb[11, 0] = -7e4
    with pytest.raises(ValueError, match=r"\(norm_bb contains NaN or infinite values\)"):
        umic_image_inputs(RegionFeatures.from_butd(np.zeros((12, 2048), np.float32), norm_bb))


def test_text_is_word_pieced_word_by_word(cased_tokenizer_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(cased_tokenizer_dir)
    vocab = tiny_cased_vocab()
    lower, cased = caption_token_ids(["Two men riding horses."], tokenizer)[0], caption_token_ids(["Two men riding horses."], tokenizer, lowercase=False)[0]
    assert lower == [vocab["[CLS]"], vocab["two"], vocab["men"], vocab["riding"], vocab["horses"], vocab["."], vocab["[SEP]"]]
    assert cased[1] == vocab["Two"]
    # A word giving no pieces (a lone zero-width space) is dropped; an empty caption is [CLS] [SEP].
    assert caption_token_ids(["a \u200b man", "a man", "", "   "], tokenizer) == [[2, vocab["a"], vocab["man"], 3]] * 2 + [[2, 3]] * 2
    long = caption_token_ids([" ".join(["horses"] * 600)], tokenizer)[0]
    assert len(long) == 602, "no truncation"


def test_real_cased_vocabulary_matches_the_shipped_txt_db():
    from transformers import AutoTokenizer

    try:
        tokenizer = load_pretrained(AutoTokenizer, "bert-base-cased", what="tokenizer", do_lower_case=False)
    except ModelUnavailableError:
        pytest.skip("bert-base-cased is not in the local HuggingFace cache")
    ids = caption_token_ids(["a woman sitting at a table with a cake"], tokenizer)[0]
    assert ids == [101, 170, 1590, 2807, 1120, 170, 1952, 1114, 170, 10851, 102]  # txt_db/capeval1k key "0"


def test_captions_give_the_ids_stored_in_the_benchmark_txt_dbs():
    """Raw Composite captions (original case, punctuation attached, double spaces, hyphens, multi-piece
    words) against UMIC's stored input_ids, with the part of bert-base-cased they use (see the fixture's provenance)."""
    import json

    from transformers import BertTokenizer

    fixture = json.loads((ASSETS / "umic_txt_db_sample.json").read_text())
    tokenizer = BertTokenizer(vocab=fixture["vocab"], do_lower_case=False, model_max_length=512)
    captions = [row["caption"] for row in fixture["rows"]]
    stored = [[101, *row["input_ids"], 102] for row in fixture["rows"]]
    assert caption_token_ids(captions, tokenizer) == stored
    cased = caption_token_ids(captions, tokenizer, lowercase=False)
    assert sum(ids == want for ids, want in zip(cased, stored)) < len(stored) / 2, "the stored text was lower-cased"


def test_sigmoid_in_float64():
    assert umic_from_logit(0.0) == 0.5 and umic_from_logit(1.5) == 1 / (1 + np.exp(-1.5)) and umic_from_logit(-800.0) == 0.0


@pytest.fixture(scope="module")
def scorer(tiny_umic):
    return UmicScorer(**tiny_umic)


def test_pipeline_on_the_real_sample_is_deterministic_and_order_free(scorer, sample_features):
    regions = as_region_features(sample_features)
    others = [regions.first(k) for k in (10, 36, 20, 12, 36, 15)]
    scores = umic_scores(scorer, CAPTIONS, others)
    assert len(scores) == len(CAPTIONS) and all(0 < s < 1 for s in scores)
    assert len(set(scores)) == len(scores), "random weights still tell captions and images apart"
    assert umic_scores(scorer, CAPTIONS, others) == scores, "deterministic"
    order = [3, 0, 5, 1, 4, 2]
    permuted = umic_scores(scorer, [CAPTIONS[i] for i in order], [others[i] for i in order], batch_size=4)
    assert np.allclose(permuted, [scores[i] for i in order], atol=1e-6, rtol=0)
    one_by_one = [umic_scores(scorer, [c], [r])[0] for c, r in zip(CAPTIONS, others)]
    assert np.allclose(one_by_one, scores, atol=1e-6, rtol=0)


def test_scorer_input_errors(scorer, sample_features):
    regions = as_region_features(sample_features)
    with pytest.raises(ValueError, match="2 captions but 1 region features"):
        umic_scores(scorer, ["a", "b"], [regions])
    narrow = RegionFeatures.from_butd(np.zeros((12, 1024)), np.zeros((12, 6)))
    with pytest.raises(ValueError, match=r"region_features\[1\] has 1024-d features; this UNITER takes 2048-d"):
        umic_scores(scorer, ["a", "b"], [regions, narrow])
    with pytest.raises(ValueError, match=r"predictions\[0\] has 102 tokens; UNITER's position table holds 64"):
        umic_scores(scorer, [" ".join(["horse"] * 100)], [regions])


def test_tokenizer_larger_than_the_model_vocabulary_is_refused(tiny_umic, tmp_path):
    from transformers import BertTokenizer

    vocab = {**tiny_cased_vocab(), **{f"extra{i}": len(tiny_cased_vocab()) + i for i in range(5)}}
    BertTokenizer(vocab=vocab, do_lower_case=False, model_max_length=512).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="bert-base-cased"):
        UmicScorer(**{**tiny_umic, "tokenizer": str(tmp_path)}).tokenizer


@pytest.fixture(scope="module")
def umic_module(tiny_umic, load_metric):
    return load_metric("umic", **tiny_umic)


def test_module_scores_features_and_records_them(umic_module, scorer, sample_features):
    regions = [str(sample_features), np.load(sample_features), as_region_features(sample_features)]
    result = umic_module.compute(predictions=CAPTIONS[:3], region_features=regions)
    assert result["scores"] == umic_scores(scorer, CAPTIONS[:3], [as_region_features(sample_features)] * 3)
    assert result["umic"] == pytest.approx(sum(result["scores"]) / 3)
    assert "lowercase=True" in result["hashcode"] and "features=butd:precomputed" in result["hashcode"]
    assert umic_module.scorer.model is scorer.model, "one cached model per process"
    # Features win over images, so evaluate.combine can pass images meant for other metrics.
    # Alone rather than in a padded batch of 3: fused attention's kernels round differently (~1e-9).
    assert umic_module.compute(predictions=CAPTIONS[:1], images=[b"ignored"], region_features=regions[:1])["scores"] == \
        pytest.approx(result["scores"][:1], abs=1e-7)


def test_module_extracts_from_images_with_a_given_extractor(tiny_umic, load_metric, sample_image, tmp_path):
    extractor = MeanColourExtractor()
    module = load_metric("umic", **tiny_umic, extractor=extractor, feature_cache_dir=str(tmp_path))
    result = module.compute(predictions=["two men", "a horse"], images=[str(sample_image), sample_image.read_bytes()])
    assert extractor.calls == 1 and result["scores"][0] != result["scores"][1]
    assert "mean-colour" in result["hashcode"]


@pytest.mark.parametrize("inputs, error, message", [
    ({"predictions": ["a"]}, ValueError, "pass region_features"),
    ({"predictions": ["a", "b"], "region_features": ["x"]}, ValueError, "2 predictions but 1 region_features"),
    ({"predictions": ["a"], "images": [1, 2]}, ValueError, "1 predictions but 2 images"),
    ({"predictions": [], "region_features": []}, ValueError, "predictions is empty"),
    ({"predictions": [None], "region_features": ["x"]}, ValueError, r"predictions\[0\] is NoneType, expected str"),
    ({"predictions": ["a"], "region_features": [{"features": np.full((12, 2048), np.nan), "norm_bb": np.zeros((12, 6))}]},
     ValueError, r"region_features\[0\]: features contains NaN"),
    ({"predictions": ["a"], "region_features": [{"features": np.zeros((12, 2048)), "norm_bb": np.zeros((12, 4))}]},
     ValueError, r"region_features\[0\]: norm_bb must be 12×6"),
])
def test_module_input_errors(umic_module, inputs, error, message):
    with pytest.raises(error, match=message):
        umic_module.compute(**inputs)


def test_module_without_extractor_says_what_to_install_or_pass(umic_module, sample_image, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "detectron2", None)
    with pytest.raises(ModelUnavailableError, match="region_features=.*capeval\\[torchvision\\]"):
        umic_module.compute(predictions=["a"], images=[str(sample_image)])


def test_module_rejects_typos_and_bad_extractors(load_metric):
    with pytest.raises(TypeError, match="unknown option"):
        load_metric("umic", lowercse=False)
    with pytest.raises(TypeError, match="RegionExtractor"):
        load_metric("umic", extractor="torchvision")


def test_released_checkpoint_when_available(sample_features):
    """Runs only with the real umic.pt ($CAPEVAL_UMIC_CHECKPOINT) and bert-base-cased available locally."""
    import os

    import torch

    from fixtures.vision import released_umic_keys

    path = os.environ.get("CAPEVAL_UMIC_CHECKPOINT")
    if not path or not Path(path).is_file():
        pytest.skip("set CAPEVAL_UMIC_CHECKPOINT to a downloaded umic.pt (https://archive.org/download/umic_data/umic.pt)")
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert {k.replace("gamma", "weight").replace("beta", "bias") for k in state} == released_umic_keys(12)
    try:
        scorer = UmicScorer(path, device="cpu")
    except ModelUnavailableError:
        pytest.skip("bert-base-cased is not in the local HuggingFace cache")
    scores = umic_scores(scorer, ["two men riding horses in a dirt arena", "a plate of food on a table"], [as_region_features(sample_features)] * 2)
    assert all(0 < s < 1 for s in scores) and scores[0] > scores[1]
