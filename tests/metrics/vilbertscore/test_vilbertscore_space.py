"""ViLBERTScore's Space scores the bundled sample image through its region features (a tiny random ViLBERT
stands in for the released checkpoint), equal to a direct compute; its app builds from the environment."""

import pytest

import capeval
from capeval.integrations.gradio_app import REFERENCES_LABEL, build_metric_space
from capeval.samples import SAMPLE_IMAGE_CANDIDATES, sample_image, sample_region_features
from fixtures.spaces import load_app, table_columns

pytest.importorskip("gradio")
from gradio_client import handle_file  # noqa: E402

REFERENCES = ["two people ride horses in a dirt arena", "riders on brown horses in a ring"]


@pytest.fixture(scope="module")
def tiny_options(tiny_checkpoints, tiny_vilbert_config_path, vilbert_tokenizer_dir):
    return {"checkpoint": tiny_checkpoints["multi_task"], "config": tiny_vilbert_config_path,
            "tokenizer": vilbert_tokenizer_dir, "device": "cpu"}


def test_space_scores_the_sample_image_like_compute(serve, tiny_options):
    client = serve(build_metric_space("vilbertscore", options=tiny_options))
    table, chart, details = client.predict(handle_file(str(sample_image())), handle_file(str(sample_region_features())),
                                           "\n".join(SAMPLE_IMAGE_CANDIDATES), "\n".join(REFERENCES), api_name="/score")
    columns = table_columns(table)
    expected = capeval.load("vilbertscore", **tiny_options).compute(
        predictions=list(SAMPLE_IMAGE_CANDIDATES), references=[REFERENCES] * len(SAMPLE_IMAGE_CANDIDATES),
        region_features=[str(sample_region_features())] * len(SAMPLE_IMAGE_CANDIDATES))
    for column in ("precision", "recall", "f1"):
        assert columns[column][:-1] == [f"{v:.4f}" for v in expected[column]]


def test_app_builds_from_its_environment(repo_root, monkeypatch, tiny_options):
    monkeypatch.setenv("CAPEVAL_VILBERTSCORE_CHECKPOINT", tiny_options["checkpoint"])
    module = load_app(repo_root / "metrics" / "vilbertscore")
    labels = [getattr(block, "label", None) for block in module.demo.blocks.values()]
    assert "Image" in labels and REFERENCES_LABEL in labels
