"""CLIP-S's GPU-path options on CPU: a reduced-precision forward pass against float32, and images decoded in a
DataLoader (worker processes, batch sizes, orders) against decoding in this process."""

import multiprocessing

import numpy as np
import pytest
import torch

from capeval.backbones.clip import default_image_workers, load_clip_encoder
from capeval.scoring.clip import ClipScoreScorer, PacScoreScorer
from capeval.vision.images import ImageLoadError

from .conftest import CAPTIONS, image_zoo

REFERENCES = [["a dog on the grass", "the dog runs"], ["a cat sits on the sofa"], ["a man riding a horse"]]


@pytest.fixture(scope="module")
def zoo_images():
    """Every image of the zoo (PIL modes, encoded bytes, EXIF JPEG), with repeats."""
    zoo = image_zoo()
    return [zoo[name] for name in sorted(zoo)] + [zoo["RGB"], zoo["png-bytes"]]


def clip_s(model: str, images, **options) -> list[float]:
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(images))]
    return ClipScoreScorer(model_name=model, device="cpu", **options).score(captions, images=images)["clip_s"]


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 3e-2), ("float16", 3e-3)])
def test_reduced_precision_is_within_its_tolerance_of_float32(spread_clip, zoo_images, dtype, tolerance):
    exact = clip_s(spread_clip, zoo_images)
    reduced = clip_s(spread_clip, zoo_images, dtype=dtype)
    differences = np.abs(np.array(exact) - np.array(reduced))
    # bfloat16 keeps 8 significand bits, float16 11 (the card states the differences on ViT-B/32 sizes).
    assert differences.max() < tolerance
    assert differences.max() > 1e-6, "the option changes the arithmetic"
    assert all(isinstance(value, float) for value in reduced)


def test_encoders_of_every_dtype_share_one_float32_model(spread_clip):
    exact = load_clip_encoder(spread_clip, device="cpu")
    reduced = load_clip_encoder(spread_clip, dtype="bfloat16", device="cpu")
    assert reduced.model is exact.model and reduced is not exact and reduced._text_cache is not exact._text_cache
    assert {p.dtype for p in exact.model.parameters()} == {torch.float32}
    features = reduced.text_features(["a dog"], mode="code", batch_size=4)
    assert features.dtype == np.float32


def test_dtype_is_in_the_hashcode_as_before(spread_clip):
    assert ClipScoreScorer(model_name=spread_clip).options()["dtype"] == "float32", "float32 results keep their hashcodes"
    assert ClipScoreScorer(model_name=spread_clip, dtype="bfloat16").options()["dtype"] == "bfloat16"
    assert "num_workers" not in ClipScoreScorer(model_name=spread_clip, num_workers=2).options()


@pytest.mark.parametrize("mode", ["code", "hf"])
def test_decoding_workers_batch_sizes_and_order_give_the_same_scores(spread_clip, zoo_images, mode):
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(zoo_images))]
    in_process, in_workers = (ClipScoreScorer(model_name=spread_clip, device="cpu", mode=mode, num_workers=workers)
                              for workers in (0, 2))
    baseline = in_process.score(captions, images=zoo_images, batch_size=64)["clip_s"]
    for batch_size in (1, 3, 64):
        # The same pixels, so the same numbers at the same batch size; other batch sizes change only the forward
        # pass's summation order.
        with_workers = in_workers.score(captions, images=zoo_images, batch_size=batch_size)["clip_s"]
        assert with_workers == in_process.score(captions, images=zoo_images, batch_size=batch_size)["clip_s"]
        np.testing.assert_allclose(with_workers, baseline, rtol=0, atol=1e-6)
    reversed_scores = in_workers.score(captions[::-1], images=zoo_images[::-1], batch_size=64)["clip_s"]
    np.testing.assert_allclose(reversed_scores[::-1], baseline, rtol=0, atol=1e-6)


def test_pac_score_takes_the_workers_option(pac_checkpoint, tiny_clip, zoo_images):
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(zoo_images))]
    scores = [PacScoreScorer(checkpoint=pac_checkpoint, model_name=tiny_clip, device="cpu", num_workers=workers)
              .score(captions, images=zoo_images, batch_size=5)["pac_s"] for workers in (0, 2)]
    assert scores[0] == scores[1]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_corrupt_image_raises_its_own_error_from_a_worker(spread_clip, workers):
    zoo = image_zoo()
    images = [zoo["RGB"], zoo["L"], b"not an image", zoo["P"]]
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu", num_workers=workers)
    with pytest.raises(ImageLoadError) as raised:
        scorer.score(CAPTIONS[:4], images=images, batch_size=2)
    assert str(raised.value).startswith("images[2]: could not decode a bytes as an image (UnidentifiedImageError: ")
    assert "Traceback" not in str(raised.value) and "\n" not in str(raised.value)


def test_default_workers_only_on_cuda_outside_daemons(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert default_image_workers(torch.device("cpu")) == 0
    assert default_image_workers(torch.device("cuda")) == 4
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert default_image_workers(torch.device("cuda")) == 1
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    assert default_image_workers(torch.device("cuda")) == 0


@pytest.mark.parametrize("options, message", [
    (dict(num_workers=-1), r"num_workers must be an integer >= 0 or None, got -1"),
    (dict(num_workers=1.5), r"num_workers must be an integer >= 0 or None, got 1.5"),
])
def test_bad_workers_fail_at_construction(spread_clip, options, message):
    with pytest.raises(ValueError, match=message):
        ClipScoreScorer(model_name=spread_clip, **options)
