"""The CLIP-S Space: the image, candidates and optional references give the module's CLIP-S and RefCLIP-S."""

import pytest

import capeval
from capeval.integrations.gradio_app import build_metric_space
from capeval.samples import SAMPLE_IMAGE_CANDIDATES, SAMPLE_IMAGE_REFERENCES, sample_image

pytest.importorskip("gradio")
from gradio_client import handle_file  # noqa: E402


def test_clip_score_space_with_and_without_references(serve, spread_clip):
    options = {"model_name": spread_clip, "device": "cpu"}
    client = serve(build_metric_space("clip_score", options=options))
    image, candidates = handle_file(str(sample_image())), "\n".join(SAMPLE_IMAGE_CANDIDATES)
    expected = capeval.load("clip_score", **options).compute(predictions=list(SAMPLE_IMAGE_CANDIDATES),
                                                            references=[list(SAMPLE_IMAGE_REFERENCES)] * 2,
                                                            images=[str(sample_image())] * 2)
    table, *_ = client.predict(image, candidates, "\n".join(SAMPLE_IMAGE_REFERENCES), api_name="/score")
    assert table["headers"] == ["clip_s", "refclip_s", "candidate"]
    rows = [[f"{a:.4f}", f"{b:.4f}"] for a, b in zip(expected["clip_s"], expected["refclip_s"])]
    corpus = [f"{expected['clip_score']:.4f}", f"{sum(expected['refclip_s']) / 2:.4f}"]
    assert [row[:-1] for row in table["data"]] == [*rows, corpus] and table["data"][-1][-1] == "corpus"
    table, *_ = client.predict(image, candidates, "", api_name="/score")
    assert table["headers"] == ["clip_s", "candidate"]
    assert [row[0] for row in table["data"]] == [*(f"{a:.4f}" for a in expected["clip_s"]), f"{expected['clip_score']:.4f}"]
