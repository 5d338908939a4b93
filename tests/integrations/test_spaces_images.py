"""The image Spaces: UMIC's Space and the suite score the bundled sample image through its precomputed BUTD
features (a tiny random UNITER stands in for umic.pt), equal to a direct compute; a new image without an
extractor gets a visitor's explanation, raised to the client."""

import pytest

import capeval
from capeval.integrations.gradio_app import CANDIDATES_LABEL, NO_EXTRACTOR, REFERENCES_LABEL, SpaceMetric, build_metric_space, build_suite_space, suite_metrics
from capeval.samples import SAMPLE_IMAGE_CANDIDATES, sample_image, sample_region_features
from capeval.scoring.umic import UmicScorer
from fixtures.spaces import load_app, table_columns

pytest.importorskip("gradio")
from gradio_client import handle_file  # noqa: E402
from gradio_client.exceptions import AppError  # noqa: E402


def test_umic_space_scores_the_sample_image(serve, tiny_umic):
    client = serve(build_metric_space("umic", options=tiny_umic))
    table, chart, details = client.predict(handle_file(str(sample_image())), handle_file(str(sample_region_features())),
                                           "\n".join(SAMPLE_IMAGE_CANDIDATES), api_name="/score")
    scores = [row[0] for row in table["data"]]
    expected = capeval.load("umic", **tiny_umic).compute(predictions=list(SAMPLE_IMAGE_CANDIDATES),
                                                         region_features=[str(sample_region_features())] * 2)["scores"]
    assert table["headers"] == ["umic", "candidate"] and scores == [*(f"{v:.4f}" for v in expected), f"{sum(expected) / 2:.4f}"]
    with pytest.raises(AppError, match="cannot compute region features from a new image"):
        client.predict(handle_file(str(sample_image())), None, "two men riding horses", api_name="/score")
    with pytest.raises(AppError, match="Upload an image"):
        client.predict(None, None, "two men riding horses", api_name="/score")


def test_umic_app_builds_from_its_environment(repo_root, monkeypatch, tiny_umic):
    monkeypatch.setenv("CAPEVAL_UMIC_CHECKPOINT", tiny_umic["checkpoint"])
    module = load_app(repo_root / "metrics" / "umic")
    labels = [getattr(block, "label", None) for block in module.demo.blocks.values()]
    assert "Image" in labels and CANDIDATES_LABEL in labels
    assert REFERENCES_LABEL not in labels  # UMIC is reference-free
    assert NO_EXTRACTOR.startswith("This Space cannot")


def test_suite_scores_the_image_metrics_with_the_text_ones(serve, tiny_umic):
    umic = SpaceMetric("UMIC (tiny random weights)", UmicScorer(**tiny_umic))
    metrics = [m for m in suite_metrics() if m.label in ("BLEU-4", "CIDEr-D")] + [umic]
    client = serve(build_suite_space(metrics))
    references = "two people ride horses in a dirt arena\nriders on brown horses in a ring"
    table, chart, breakdown, details, skipped = client.predict(
        handle_file(str(sample_image())), handle_file(str(sample_region_features())), "\n".join(SAMPLE_IMAGE_CANDIDATES),
        references, api_name="/score")
    by_column = table_columns(table)
    expected = UmicScorer(**tiny_umic).score(list(SAMPLE_IMAGE_CANDIDATES), region_features=[str(sample_region_features())] * 2)
    assert by_column["UMIC (tiny random weights)"] == [f"{v:.4f}" for v in expected["umic"]]
    assert set(by_column) == {"candidate", "BLEU-4", "CIDEr-D", "UMIC (tiny random weights)"}
    # Without an image the text metrics still score and the image metric says why it did not.
    table, *_, skipped = client.predict(None, None, "\n".join(SAMPLE_IMAGE_CANDIDATES), references, api_name="/score")
    assert "UMIC (tiny random weights): needs an image" in skipped and "BLEU-4" in table["headers"]


def test_default_umic_space_offline_says_the_checkpoint_is_missing(serve, sample_features):
    client = serve(build_metric_space("umic"))  # the released umic.pt cannot be downloaded offline
    with pytest.raises(AppError, match="umic.pt"):
        client.predict(None, handle_file(str(sample_features)), "two men riding horses", api_name="/score")
