"""AMBER's Space: an image id box in place of the upload (AMBER names its images by id), an example that names an AMBER
image, its missing data said up front, and the typed id scored as the metric scores it."""

import pytest

from capeval.integrations.gradio_app import SpaceMetric, build_metric_space
from capeval.scoring.protocol import score_checked
from fixtures.spaces import missing_note, score_function, space_inputs

gr = pytest.importorskip("gradio")



def test_amber_space_asks_for_an_image_id_and_says_its_data_is_missing(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    demo = build_metric_space("amber")
    kinds, rows = space_inputs(demo)
    # An id box in place of the upload, and the example names an AMBER image (the bundled photo is none).
    assert kinds == ["Textbox", "Textbox"] and not [b for b in demo.blocks.values() if isinstance(b, (gr.Image, gr.File))]
    (image,) = [b for b in demo.blocks.values() if isinstance(b, gr.Textbox) and b.elem_id == "image"]
    assert image.label == "Image id (e.g. AMBER_1)"
    (examples,) = [b for b in demo.blocks.values() if isinstance(b, gr.Dataset)]
    assert examples.samples[0][0] == "AMBER_1"
    note = missing_note(demo)
    assert "**AMBER** cannot run here: AMBER's data files are not available" in note
    assert "offline mode (the server's settings) forbids" in note and "pass it as data_dir" in note


def test_amber_space_scores_the_typed_id_as_the_metric_does(small_spacy):
    from fixtures.amber import fixture_scorer

    scorer = fixture_scorer()
    score = score_function(build_metric_space("amber", metric=SpaceMetric("AMBER", scorer)))
    table, _, details = score("  AMBER_1 ", "A cat and a dog sit on a table.")
    expected = score_checked(scorer, ["A cat and a dog sit on a table."], None, images=["AMBER_1"])
    assert list(table["amber_chair"])[0] == f"{expected['amber_chair'][0]:.4f}"
    with pytest.raises(gr.Error, match=r"Type the image's id \(e.g. AMBER_1\)"):
        score(" ", "A cat.")
    with pytest.raises(gr.Error, match="AMBER names an image by its id"):
        score("dog.jpg", "A cat.")
