"""What a Space shows is what it computes: bars on the metric's declared range, labelled with their values as the
tables show them (BLEU-4's 1.6e-08 is not a full bar beside a 0.0000); only the inputs the metric reads (no
region-features upload for CLIP-S); and what a metric lacks here, said before anything is typed."""

import shutil

import pytest

import capeval
from capeval.integrations import gradio_app
from capeval.integrations.gradio_app import SpaceMetric, build_metric_space, build_suite_space, suite_metrics, suite_missing
from fixtures.spaces import file_suffix, missing_note, score_function, space_inputs
from capeval.scoring import spice
from capeval.scoring.clip import ClipScoreScorer

gr = pytest.importorskip("gradio")

#: Two captions whose BLEU-4 is about 1e-08 (no 4-gram in common): the issue's chart drew them on an axis from
#: 1.25e-08 to 1.65e-08, one bar full and one empty, both labelled 0.0000.
TINY_BLEU = ["a man riding a horse", "a person riding a horse"]
REFERENCES = ["A man rides a brown horse .", "a man on a horse"]


@pytest.fixture
def drawn(monkeypatch):
    """The figures the Spaces draw, captured as they are handed to gr.Plot."""
    figures = []

    def panels(*args, **kwargs):
        figures.append(draw(*args, **kwargs))
        return figures[-1]

    draw = gradio_app.metric_panels
    monkeypatch.setattr(gradio_app, "metric_panels", panels)
    return figures


def panel_values(figure) -> dict[str, dict]:
    """Each visible panel of a figure: its axis limits, bar heights and bar labels."""
    return {axis.get_title(): {"axis": axis.get_ylim(), "bars": [bar.get_height() for bar in axis.patches],
                               "labels": [text.get_text() for text in axis.texts]}
            for axis in figure.axes if axis.get_visible()}


def test_metric_space_bars_start_at_zero_on_the_declared_range_and_show_tiny_values(drawn):
    expected = capeval.load("bleu").compute(predictions=TINY_BLEU, references=[REFERENCES] * 2)["scores"]
    assert all(0 < value < 1e-7 for value in expected)
    table, chart, _ = score_function(build_metric_space("bleu"))("\n".join(TINY_BLEU), "\n".join(REFERENCES))
    (figure,) = drawn
    assert panel_values(figure) == {"bleu": {"axis": (0.0, 1.0), "bars": expected, "labels": ["1.6e-08", "1.3e-08"]}}
    assert list(table["bleu"][:2]) == ["1.6e-08", "1.3e-08"] and chart.visible


def test_suite_panels_each_on_their_metrics_range(drawn):
    metrics = [m for m in suite_metrics() if m.label in ("BLEU-4", "CIDEr-D", "SPARCS")]
    assert [m.scorer.value_range for m in metrics] == [(0.0, 1.0), (0.0, 10.0), (None, None)]
    candidates = [*TINY_BLEU, "a horse"]
    score_function(build_suite_space(metrics))(None, None, "\n".join(candidates), "\n".join(REFERENCES))
    (figure,) = drawn
    panels = panel_values(figure)
    bleu = capeval.load("bleu").compute(predictions=candidates, references=[REFERENCES] * 3)["scores"]
    cider = capeval.load("cider", idf="flickr8k").compute(predictions=candidates, references=[REFERENCES] * 3)["scores"]
    sparcs = capeval.load("smurf", components=["sparcs"]).compute(predictions=candidates, references=[REFERENCES] * 3)["scores"]
    assert panels["BLEU-4"] == {"axis": (0.0, 1.0), "bars": bleu, "labels": ["1.6e-08", "1.3e-08", "0.0002"]}
    assert panels["CIDEr-D"] == {"axis": (0.0, 10.0), "bars": cider, "labels": [f"{v:.4f}" for v in cider]}
    # SMURF's SPARCS is standardized, unbounded either way: its axis holds 0 and every value, no more.
    assert panels["SPARCS"]["axis"] == (min(0.0, *sparcs), max(0.0, *sparcs)) and panels["SPARCS"]["bars"] == sparcs


def test_negative_ranges_keep_their_lower_end():
    figure = gradio_app.metric_panels(["#1", "#2"], {"BERTScore": [0.91, -0.05]}, {"BERTScore": (-1.0, 1.0)})
    assert panel_values(figure)["BERTScore"] == {"axis": (-1.0, 1.0), "bars": [0.91, -0.05], "labels": ["0.9100", "-0.0500"]}


@pytest.mark.models
@pytest.mark.parametrize("name, fixture, kinds, example", [
    ("bleu", None, ["Textbox", "Textbox"], ["text", "text"]),
    ("clip_score", "spread_clip", ["Image", "Textbox", "Textbox"], ["jpg", "text", "text"]),
    ("umic", "tiny_umic", ["Image", "File", "Textbox"], ["jpg", "npz", "text"]),
])
def test_each_space_offers_only_the_inputs_its_metric_reads(request, name, fixture, kinds, example):
    options = None if fixture is None else request.getfixturevalue(fixture)
    options = {"model_name": options, "device": "cpu"} if name == "clip_score" else options
    demo = build_metric_space(name, options=options)
    shown_kinds, rows = space_inputs(demo)
    assert shown_kinds == kinds and rows[0] == example
    files = [block for block in demo.blocks.values() if isinstance(block, gr.File) and block.visible]
    assert [block.elem_id for block in files] == (["region-features"] if name == "umic" else [])
    # A metric that runs here says nothing is missing.
    (missing,) = [block for block in demo.blocks.values() if isinstance(block, gr.Markdown) and block.elem_id == "missing"]
    assert not missing.visible


def test_clip_space_says_up_front_that_the_checkpoint_is_missing_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    note = missing_note(build_metric_space("clip_score"))
    assert "**CLIP-S / RefCLIP-S** cannot run here" in note and f"'{ClipScoreScorer().model_name}' is not available locally" in note
    assert "offline mode" in note


@pytest.fixture
def no_java(monkeypatch):
    """CoreNLP installed (as far as capeval can tell) but no `java` on PATH."""
    monkeypatch.setattr(spice, "corenlp_jars", lambda: [spice.corenlp_dir() / name for name in spice.CORENLP_JARS])
    which = shutil.which
    monkeypatch.setattr(spice.shutil, "which", lambda command, *args, **kwargs: None if command == "java" else which(command, *args, **kwargs))


def test_spice_space_and_the_suite_say_java_is_missing(no_java):
    demo = build_metric_space("spice")
    assert "**SPICE** cannot run here: SPICE runs the Java jar" in missing_note(demo)
    assert space_inputs(demo)[0] == ["Textbox", "Textbox"]
    assert suite_missing()["SPICE"].startswith("SPICE runs the Java jar of pycocoevalcap and needs a Java runtime")
    bleu = [m for m in suite_metrics() if m.label == "BLEU-4"]
    assert "- **SPICE** cannot run here: SPICE runs the Java jar" in missing_note(build_suite_space(bleu))


def test_suite_shows_the_features_upload_only_for_a_metric_that_reads_them():
    from capeval.scoring.coco import BleuScorer
    from capeval.scoring.umic import UmicScorer

    def features_shown(metrics):
        demo = build_suite_space(metrics)
        (features,) = [block for block in demo.blocks.values() if isinstance(block, gr.File)]
        (examples,) = [block for block in demo.blocks.values() if isinstance(block, gr.Dataset)]
        return features.visible, any(file_suffix(value) == "npz" for value in examples.samples[0])

    bleu = SpaceMetric("BLEU-4", BleuScorer())
    assert features_shown([bleu, SpaceMetric("UMIC", UmicScorer())]) == (True, True)
    assert features_shown([bleu, SpaceMetric("CLIP-S", ClipScoreScorer())]) == (False, False)
    assert features_shown([bleu]) == (False, False)
