"""Values that cannot be used give one clear error naming them, on every surface: BERTScore baselines, images without
pixels, and ViLBERTScore's empty captions (refused alike by capeval.evaluate, the module, the Trainer hook and
torchmetrics, as its card says)."""

import numpy as np
import pytest
from PIL import Image

import capeval
from capeval.backbones.clip import save_random_clip
from capeval.scoring.bertscore import BERTScorer
from tiny_models import save_tiny_bert


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    return str(save_tiny_bert(tmp_path_factory.mktemp("bert"), num_layers=2))


GOOD_ROWS = "".join(f"{layer},0.{layer}1,0.{layer}2,0.{layer}3\n" for layer in range(3))


@pytest.mark.parametrize("content, message", [
    ("LAYER,P,R,F\n" + GOOD_ROWS.replace("0,0.01,0.02,0.03", "0,nan,0.02,0.03"),
     r"gives layer 0 P, R, F = \[nan, 0.02, 0.03\]: rescaling needs finite values below 1"),
    ("LAYER,P,R,F\n" + GOOD_ROWS.replace("0,0.01,0.02,0.03", "0,0.01,1.0,0.03"), "rescaling needs finite values below 1"),
    ("LAYER,P,R,F\n" + GOOD_ROWS.replace("0,0.01,0.02,0.03", "0,inf,0.02,0.03"), "rescaling needs finite values below 1"),
    ("<html><body>Not Found</body></html>\n", "has no LAYER, P, R, F column: expected bert_score's comma-separated"),
    ("LAYER\tP\tR\tF\n0\t0.1\t0.1\t0.1\n", "has no LAYER, P, R, F column"),
    ("LAYER,P,R,F\nzero,0.1,0.1,0.1\n", "line 2 is not a layer number and three values"),
    ("LAYER,P,R,F\n0,0.1\n", "line 2 is not a layer number and three values"),
    ("LAYER,P,R,F\n", r"has no row for layer 0 \(it has no rows\)"),
    (b"\xff\xfe\x00\x01binary", "is not a text file of LAYER,P,R,F rows"),
])
def test_a_baseline_that_cannot_rescale_is_refused_when_the_scorer_is_built(content, message, tmp_path, tiny_bert):
    path = tmp_path / "baseline.tsv"
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    with pytest.raises(ValueError, match=r"the baseline 'baseline.tsv' (.*: )?" + message):
        BERTScorer(tiny_bert, layer=0, rescale_with_baseline=True, baseline_path=str(path))


def test_a_usable_baseline_still_rescales(tmp_path, tiny_bert):
    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n" + GOOD_ROWS)
    inputs = {"predictions": ["a dog runs"], "references": [["a dog runs fast"]]}
    plain = capeval.load("bertscore", model_name=tiny_bert, layer=1).compute(**inputs)
    rescaled = capeval.load("bertscore", model_name=tiny_bert, layer=1, rescale_with_baseline=True, baseline_path=str(path)).compute(**inputs)
    assert rescaled["f1"][0] == pytest.approx((plain["f1"][0] - 0.13) / (1 - 0.13))


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    return save_random_clip(tmp_path_factory.mktemp("clip"))


@pytest.mark.parametrize("size", [(0, 0), (0, 12), (12, 0)])
def test_an_image_without_pixels_is_named(size, tiny_clip, tmp_path):
    """Found when the image is opened (every image metric opens images the same way), not as a ZeroDivisionError in
    CLIP's resize."""
    metric, options = "clip_score", {"model_name": tiny_clip, "device": "cpu"}
    images = [Image.new("RGB", (8, 8), (10, 200, 30)), Image.new("RGB", size)]
    with pytest.raises(ValueError, match=rf"images\[1\]: a Image is empty \({size[0]}×{size[1]} pixels\)"):
        capeval.evaluate(["a green square", "nothing"], metrics=[(metric, options)], images=images)
    array = np.zeros((size[1], size[0], 3), dtype=np.uint8)
    with pytest.raises(ValueError, match=r"images\[0\]: a ndarray is empty"):
        capeval.evaluate(["nothing"], metrics=[(metric, options)], images=[array])


VILBERT_FEATURES = {"features": np.ones((3, 2048), np.float32), "bbox": np.array([[0, 0, 10, 10]] * 3, np.float32),
                    "image_width": 20, "image_height": 20}


@pytest.mark.parametrize("predictions, references, message", [
    (["a dog", ""], [["a dog runs"], ["a cat"]], r"predictions\[1\] is empty: ViLBERTScore does not score a caption without words"),
    (["  \t"], [["a dog runs"]], r"predictions\[0\] is empty"),
    (["a dog"], [["", "  "]], r"references\[0\] holds only empty strings"),
])
def test_vilbertscore_refuses_empty_captions_on_every_surface(predictions, references, message):
    """Refused before any model is needed (offline, the checkpoint is absent: a caption with words reaches it)."""
    from capeval.integrations.torchmetrics import CaptionScoreMetric
    from capeval.integrations.trainer import CaptionEvaluator

    features = [VILBERT_FEATURES] * len(predictions)
    surfaces = {
        "evaluate": lambda: capeval.evaluate(predictions, references, metrics=["vilbertscore"], region_features=features),
        "module": lambda: capeval.load("vilbertscore").compute(predictions=predictions, references=references,
                                                              region_features=features),
        "trainer": lambda: CaptionEvaluator(["vilbertscore"], references=references, region_features=features).evaluate_texts(predictions),
        "torchmetrics": lambda: CaptionScoreMetric("vilbertscore").update(predictions, references, region_features=features),
    }
    for surface, call in surfaces.items():
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(capeval.models.ModelUnavailableError):
        capeval.evaluate(["a dog"], [["a dog runs"]], metrics=["vilbertscore"], region_features=features[:1])
