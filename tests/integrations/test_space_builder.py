"""The metric Space builder looks its metric up in the registry once, from app.py to the card, and scores through
``score_checked``, the validate-and-score path every other surface takes."""

import pytest

import capeval
from capeval import registry
from capeval.integrations import gradio_app
from fixtures import METRICS

pytest.importorskip("gradio")


def counted_lookups(monkeypatch):
    """Every registry lookup by name, from the Space builder or from the registry's own helpers."""
    names = []
    real = registry.entry

    def entry(name):
        names.append(name)
        return real(name)

    monkeypatch.setattr(registry, "entry", entry)
    monkeypatch.setattr(gradio_app, "entry", entry)
    return names


def test_a_metric_space_looks_its_metric_up_once(monkeypatch):
    names = counted_lookups(monkeypatch)
    monkeypatch.setenv("CAPEVAL_CIDER_IDF", "corpus")
    gradio_app.metric_space(str(METRICS / "cider" / "app.py"))
    assert names == ["cider"]
    names.clear()
    gradio_app.build_metric_space("bleu", options={"order": 2})
    assert names == ["bleu"]


def test_the_space_builds_from_an_entry_as_from_its_name(monkeypatch):
    bleu = registry.entry("bleu")
    names = counted_lookups(monkeypatch)
    assert gradio_app.registry_entry(bleu) is bleu and names == []
    from_entry, from_name = gradio_app.space_metric(bleu, {"order": 2}), gradio_app.space_metric("bleu", {"order": 2})
    assert names == ["bleu"]
    assert (from_entry.label, from_entry.scorer.options()) == (from_name.label, from_name.scorer.options()) == (
        "BLEU", {"order": 2, "tokenizer": "ptb"})
    assert gradio_app.metric_card(bleu) == gradio_app.metric_card("bleu")
    with pytest.raises(TypeError, match=r"bleu: unknown option\(s\) \['ordr'\]"):
        gradio_app.space_scorer(bleu, {"ordr": 2})


def test_the_space_scores_through_score_checked(monkeypatch):
    calls = []
    real = gradio_app.score_checked

    def score_checked(scorer, predictions, references=None, **inputs):
        calls.append((scorer.metric, predictions, references, inputs))
        return real(scorer, predictions, references, **inputs)

    monkeypatch.setattr(gradio_app, "score_checked", score_checked)
    scorer = gradio_app.space_scorer("bleu", {"order": 1})
    candidates, references = ["a dog runs", "a cat"], ["a dog runs fast", "a dog"]
    scores = gradio_app.score_captions(scorer, candidates, references)
    assert calls == [("bleu", candidates, [references, references], {"show_progress": False})]
    expected = capeval.evaluate(candidates, [references] * 2, metrics=[("bleu", {"order": 1})])
    assert scores.corpus["bleu"] == pytest.approx(expected.corpus["bleu"], abs=1e-12)
    assert scores["bleu"] == pytest.approx(expected.columns["bleu"], abs=1e-12)
