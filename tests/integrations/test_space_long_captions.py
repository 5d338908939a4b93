"""Spaces with long captions (dense descriptions of 100-200 words): the values come first and stay in sight, the
caption is shortened in the table but scored whole, a caption of several paragraphs stays one caption, and a failed
click says what failed (language data named as what it is, not as a missing model)."""

import pytest

import capeval
from capeval.integrations.gradio_app import CAPTION_CELL, SpaceMetric, build_metric_space, build_suite_space, suite_metrics
from capeval.scoring import capture
from capeval.scoring.capture import CaptureScorer
from capeval.text.wordnet import WordNetUnavailableError
from fixtures.spaces import score_function

gr = pytest.importorskip("gradio")

REFERENCES = ["A brown dog runs across a green field .", "a dog running on grass"]
#: A dense description of 190 words.
LONG = " ".join(["A brown dog runs across a wide green field near a row of tall trees while the sun sets behind a "
                 "hill, and a child in a red coat watches it from a wooden bench beside the path."] * 5)
PARAGRAPHS = ["A brown dog runs on grass.", "A child sits on a bench."]


def bleu_of(candidates):
    return capeval.load("bleu").compute(predictions=candidates, references=[REFERENCES] * len(candidates))["scores"]


def test_a_long_caption_is_scored_whole_and_shortened_after_the_values():
    assert len(LONG.split()) == 190
    table, _, _ = score_function(build_metric_space("bleu"))(LONG, "\n".join(REFERENCES))
    assert list(table.columns)[0] == "bleu" and list(table.columns)[-1] == "candidate"
    assert table["candidate"][0] == LONG[:CAPTION_CELL - 1].rstrip() + "…" and len(table["candidate"][0]) <= CAPTION_CELL
    assert table["bleu"][0] == f"{bleu_of([LONG])[0]:.4f}"


def test_the_suite_table_puts_the_values_first_too():
    metrics = [m for m in suite_metrics() if m.label == "BLEU-4"]
    table, *_ = score_function(build_suite_space(metrics))(None, None, LONG, "\n".join(REFERENCES))
    assert list(table.columns) == ["BLEU-4", "candidate"] and table["candidate"][0].endswith("…")


def test_a_caption_of_several_paragraphs_is_one_caption():
    space = score_function(build_metric_space("bleu"))
    table, _, _ = space("\n\n".join(PARAGRAPHS), "\n".join(REFERENCES))
    assert list(table["candidate"]) == [" ".join(PARAGRAPHS), "corpus"]
    assert table["bleu"][0] == f"{bleu_of([' '.join(PARAGRAPHS)])[0]:.4f}"
    # Several such captions are parted by lines of ---; one caption per line is unchanged.
    table, _, _ = space("\n\n".join(PARAGRAPHS) + "\n---\n" + "\n\n".join(PARAGRAPHS[::-1]), "\n".join(REFERENCES))
    assert list(table["candidate"])[:2] == [" ".join(PARAGRAPHS), " ".join(PARAGRAPHS[::-1])]
    table, _, _ = space("\n".join(PARAGRAPHS), "\n".join(REFERENCES))
    assert list(table["candidate"]) == [*PARAGRAPHS, "corpus"]


def test_missing_language_data_is_named_as_what_it_is(monkeypatch):
    lacking = "WordNet 3.0 is not installed: run capeval download chair"
    monkeypatch.setattr(capture, "wordnet", lambda: (_ for _ in ()).throw(WordNetUnavailableError(lacking)))
    space = score_function(build_metric_space("capture", metric=SpaceMetric("CAPTURE", CaptureScorer(device="cpu"))))
    with pytest.raises(gr.Error) as raised:
        space("a dog runs on the grass", "\n".join(REFERENCES))
    assert raised.value.message == f"This metric cannot run on this Space: {lacking}"


def test_an_unexpected_failure_says_what_failed_in_a_space_and_in_the_suite(monkeypatch):
    # NLTK raises a bare LookupError for data it lacks; gradio showed it as "Error" and the suite lost every metric.
    monkeypatch.setattr(capture, "wordnet", lambda: (_ for _ in ()).throw(LookupError("Resource punkt_tab not found.")))
    metric = SpaceMetric("CAPTURE", CaptureScorer(device="cpu"))
    with pytest.raises(gr.Error) as raised:
        score_function(build_metric_space("capture", metric=metric))("a dog runs on the grass", "\n".join(REFERENCES))
    assert raised.value.message == "Scoring failed (LookupError): Resource punkt_tab not found."
    bleu = [m for m in suite_metrics() if m.label == "BLEU-4"]
    table, *_, notes = score_function(build_suite_space([*bleu, metric]))(None, None, "a dog runs", "\n".join(REFERENCES))
    assert list(table.columns) == ["BLEU-4", "candidate"]
    assert notes == "- not scored: CAPTURE: Scoring failed (LookupError): Resource punkt_tab not found."


def test_a_scorers_own_message_reaches_the_visitor_as_it_is(monkeypatch):
    monkeypatch.setattr(capture, "wordnet", lambda: (_ for _ in ()).throw(ValueError("CAPTURE needs a caption")))
    space = score_function(build_metric_space("capture", metric=SpaceMetric("CAPTURE", CaptureScorer(device="cpu"))))
    with pytest.raises(gr.Error) as raised:
        space("a dog runs on the grass", "\n".join(REFERENCES))
    assert raised.value.message == "CAPTURE needs a caption"
