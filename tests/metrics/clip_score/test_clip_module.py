"""The clip_score and pac_score modules: loading by name offline, result shape, options, caching, errors."""

import re

import numpy as np
import pytest
from PIL import Image

import capeval
from capeval.backbones import clip as clip_backbone
from capeval.backbones.clip import load_clip_encoder
from capeval.models import ModelUnavailableError
from capeval.scoring.clip import ClipScoreScorer, PacScoreScorer, harmonic_mean
from capeval.vision.images import ImageLoadError

from fixtures.clip import CAPTIONS, image_zoo

PREDICTIONS = ["a dog runs on the grass", "two people in the street", "a red car"]
REFERENCES = [["a dog on the grass", "the dog runs"], ["people in a street"], ["a car", "a red car is in the street"]]


@pytest.fixture(scope="module")
def images():
    zoo = image_zoo()
    return [zoo["RGB"], zoo["CMYK"], zoo["png-bytes"]]


@pytest.fixture(scope="module")
def clip_score(spread_clip):
    return capeval.load("clip_score", model_name=spread_clip, device="cpu")


def test_loads_by_name_offline_and_returns_both_columns(clip_score, images, spread_clip):
    result = clip_score.compute(predictions=PREDICTIONS, references=REFERENCES, images=images)
    assert [round(s, 4) for s in result["clip_s"]] == [0.5624, 0.4026, 0.1654]
    assert [round(s, 4) for s in result["refclip_s"]] == [0.6928, 0.5459, 0.2831]
    assert result["scores"] == result["clip_s"]
    assert result["clip_score"] == pytest.approx(np.mean(result["clip_s"]))
    assert result["means"] == {"refclip_s": pytest.approx(np.mean(result["refclip_s"]))}
    # (the folder's number depends on how many test packages made one before)
    assert re.match(r"clip_score\(model=spread-clip\d+@", result["hashcode"]) and "w=2.5,prefix=A photo depicts ,mode=code,dtype=float32" in result["hashcode"]


def test_without_references_only_clip_s(clip_score, images):
    with_refs = clip_score.compute(predictions=PREDICTIONS, references=REFERENCES, images=images)
    for references in (None, [[], [], []]):
        result = clip_score.compute(predictions=PREDICTIONS, references=references, images=images)
        assert "refclip_s" not in result and result["clip_s"] == with_refs["clip_s"]


def test_single_reference_strings(clip_score, images):
    single = clip_score.compute(predictions=PREDICTIONS, references=[refs[0] for refs in REFERENCES], images=images)
    listed = clip_score.compute(predictions=PREDICTIONS, references=[refs[:1] for refs in REFERENCES], images=images)
    assert single["refclip_s"] == listed["refclip_s"]


@pytest.mark.parametrize("option, value", [("w", 3.0), ("prefix", "A picture of"), ("prefix", ""), ("mode", "hf"),
                                           ("dtype", "float16"), ("model_name", "tiny")])
def test_every_option_changes_the_scores(option, value, spread_clip, tiny_clip, images):
    zoo = image_zoo()
    batch = dict(images=[zoo["RGBA"], zoo["P"], zoo["exif-jpeg"]], predictions=[CAPTIONS[1], CAPTIONS[3], CAPTIONS[6]])
    value = tiny_clip if value == "tiny" else value
    default = ClipScoreScorer(model_name=spread_clip, device="cpu").score(references=None, **batch)["clip_s"]
    changed = ClipScoreScorer(**{"model_name": spread_clip, "device": "cpu", option: value}).score(references=None, **batch)["clip_s"]
    assert all(a != b for a, b in zip(default, changed))
    if option == "w":
        np.testing.assert_allclose(changed, np.array(default) * 3.0 / 2.5, rtol=1e-6)
    if option == "dtype":
        np.testing.assert_allclose(changed, default, atol=2e-2)


def test_pac_score_is_clip_s_with_the_checkpoint_weights_and_w_2(pac_checkpoint, tiny_clip, spread_clip, images):
    pac = capeval.load("pac_score", checkpoint=pac_checkpoint, model_name=tiny_clip, device="cpu")
    result = pac.compute(predictions=PREDICTIONS, references=REFERENCES, images=images)
    same_weights = ClipScoreScorer(model_name=spread_clip, w=2.0, device="cpu").score(PREDICTIONS, REFERENCES, images=images)
    np.testing.assert_allclose(result["pac_s"], same_weights["clip_s"], atol=1e-6)
    np.testing.assert_allclose(result["refpac_s"], same_weights["refclip_s"], atol=1e-6)
    assert result["pac_score"] == pytest.approx(np.mean(result["pac_s"]))
    assert result["hashcode"].startswith("pac_score(checkpoint=clip_ViT-B-32.pth@")


def test_each_text_and_image_encoded_once_and_remembered(spread_clip, monkeypatch):
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu", w=2.0)  # w: its own scorer, the shared encoder
    encoder = scorer.encoder()
    encoder.clear_caches()  # other tests' calls fill the shared encoder's caches
    encoded_texts, decoded_images = [], []
    encode_ids, open_image = encoder._encode_ids, clip_backbone.open_image
    monkeypatch.setattr(encoder, "_encode_ids", lambda ids: encoded_texts.extend(ids) or encode_ids(ids))
    # Decoded in this process: no image-decoding workers on CPU by default.
    monkeypatch.setattr(clip_backbone, "open_image", lambda item, **kw: decoded_images.append(item) or open_image(item, **kw))
    zoo = image_zoo()
    captions = ["a cat sits on the sofa", "a man riding a horse", "a cat sits on the sofa"]
    first = scorer.score(captions, [["a cat on a sofa"], ["a man riding a horse"], ["a cat"]],
                         images=[zoo["png-bytes"], zoo["L"], zoo["png-bytes"]])
    assert len(encoded_texts) == 4 and len(decoded_images) == 2  # 3 distinct texts + 1 new reference; 2 images
    second = scorer.score(captions[:2], images=[zoo["png-bytes"], zoo["L"]])
    assert len(encoded_texts) == 4 and len(decoded_images) == 2
    assert second["clip_s"] == first["clip_s"][:2]


def test_batch_size_does_not_change_scores(spread_clip, images):
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu", prefix="a photo of")  # a prefix no other test uses
    one = scorer.score(CAPTIONS, images=[images[i % 3] for i in range(len(CAPTIONS))], batch_size=1)["clip_s"]
    load_clip_encoder(spread_clip, device="cpu").clear_caches()
    many = scorer.score(CAPTIONS, images=[images[i % 3] for i in range(len(CAPTIONS))], batch_size=64)["clip_s"]
    np.testing.assert_allclose(one, many, atol=1e-6)


def test_refclip_s_harmonic_mean_keeps_the_released_quirks():
    a = np.array([0.2246, 0.0, 0.0, 0.5, 1.0], dtype=np.float32)
    b = np.array([-0.3737, 0.0, 0.4, -0.5, 0.5], dtype=np.float32)
    np.testing.assert_allclose(harmonic_mean(a, b), [1.1257, 0.0, 0.0, 0.0, 2 / 3], atol=2e-4)
    assert harmonic_mean(a, b).dtype == np.float32


@pytest.mark.parametrize("call, error, message", [
    (dict(predictions=["a dog"]), ValueError, r"CLIP-S / RefCLIP-S scores captions against images: pass images=\[...\]"),
    (dict(predictions=["a dog", "a cat"], images=[Image.new("RGB", (9, 9))]), ValueError, "got 2 predictions but 1 images"),
    (dict(predictions=["a dog", "a cat"], images=[Image.new("RGB", (9, 9)), b"not an image"]), ImageLoadError,
     r"images\[1\]: could not decode a bytes as an image"),
    (dict(predictions=["a dog"], images=["/no/such/image.jpg"]), ImageLoadError, r"images\[0\]: cannot read the file '/no/such/image.jpg'"),
    (dict(predictions=["a dog", "a cat"], references=[["a dog"], []], images=[Image.new("RGB", (9, 9))] * 2), ValueError,
     r"references\[1\] is empty"),
    (dict(predictions=["a dog", "a cat"], references=[["a dog"]], images=[Image.new("RGB", (9, 9))] * 2), ValueError,
     "got 2 predictions but 1 reference lists"),
])
def test_bad_inputs_give_one_clear_error(clip_score, call, error, message):
    with pytest.raises(error, match=message):
        clip_score.compute(**call)


@pytest.mark.parametrize("options, message", [
    (dict(w=0), r"w must be a number in \(0.0, ∞\)"),
    (dict(mode="openai"), r"mode must be one of \('code', 'hf'\)"),
    (dict(dtype="float64"), r"dtype must be one of \(.float32., .bfloat16., .float16.\)"),
    (dict(prefix=None), "prefix must be a string"),
    (dict(model_name="./no-such-clip"), "model_name='./no-such-clip': no such file or folder"),
])
def test_bad_options_fail_at_load(options, message):
    with pytest.raises((ValueError, OSError), match=message):
        capeval.load("clip_score", **options)


def test_pac_score_checkpoint_errors(tmp_path, tiny_clip, openai_state):
    import torch

    with pytest.raises(ValueError, match="PAC-S needs its fine-tuned weights: pass checkpoint="):
        PacScoreScorer(model_name=tiny_clip, device="cpu").score(["a dog"], images=[Image.new("RGB", (9, 9))])
    torch.save([openai_state], tmp_path / "listed.pth")
    with pytest.raises(ModelUnavailableError, match="holds no .state_dict. entry"):
        PacScoreScorer(checkpoint=str(tmp_path / "listed.pth"), model_name=tiny_clip, device="cpu").encoder()
    torch.save({"state_dict": {k: v for k, v in openai_state.items() if k != "visual.proj"}}, tmp_path / "partial.pth")
    with pytest.raises(ModelUnavailableError, match=r"does not match the expected layout \(missing: \['visual_projection.weight'\]"):
        PacScoreScorer(checkpoint=str(tmp_path / "partial.pth"), model_name=tiny_clip, device="cpu").encoder()
