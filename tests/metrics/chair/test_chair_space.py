"""CHAIR's Space with ground truth keyed by image: a COCO image id box in place of the upload, scored as the metric
scores it."""

import json

import pytest

from capeval.integrations.gradio_app import build_metric_space
from fixtures.spaces import score_function, space_inputs

gr = pytest.importorskip("gradio")



def test_chair_space_with_annotations_asks_for_a_coco_id(tmp_path):
    objects = tmp_path / "objects.json"
    objects.write_text(json.dumps({"391895": ["person", "motorcycle"]}))
    demo = build_metric_space("chair", options={"objects": str(objects), "variant": "original"})
    assert space_inputs(demo)[0] == ["Textbox", "Textbox"]
    (image,) = [b for b in demo.blocks.values() if isinstance(b, gr.Textbox) and b.elem_id == "image"]
    assert image.label == "Image id (e.g. 391895)"
    table, _, _ = score_function(demo)("391895", "a man riding a motorcycle\na dog on a motorcycle")
    assert list(table["chair_s"][:2]) == ["0.0000", "1.0000"]

