"""A broken metric never stops the others: the sets of metrics of ``capeval.evaluate`` and ``capeval score``
(``"offline"``, the default, and ``"all"``) leave out a metric whose scorer module does not import, or whose scorer
leaves ``score`` or ``options`` abstract, with one line naming it and why, and score every other metric."""

import os
import subprocess
import warnings

import pytest

import capeval.cli
import capeval.registry
from capeval.evaluation import metric_runs
from capeval.registry import LeftOutWarning, MetricEntry, left_out
from fixtures import PYTHON

#: A scorer as the README's "Adding a metric" shows it, but without options().
ABSTRACT = '''
from capeval.scoring.protocol import CaptionScorer, Scores


class ToyScorer(CaptionScorer):
    metric, title, name, primary = "toy_abstract", "Toy", "toy", "toy"

    def score(self, predictions, references=None, **inputs):
        return Scores({"toy": [1.0] * len(predictions)})
'''
BROKEN = {"toy_abstract": "toy_abstract:ToyScorer", "toy_syntax": "toy_syntax:ToyScorer", "toy_missing": "toy_missing:ToyScorer"}
LINES = ["toy_abstract is left out: ToyScorer does not define options() (every scorer defines score() and options())",
         "toy_syntax is left out: SyntaxError: invalid syntax (toy_syntax.py, line 1)",
         "toy_missing is left out: ModuleNotFoundError: No module named 'toy_missing'"]
PLANT = f"""
import capeval.registry as registry
registry.METRICS = {{**registry.METRICS, **{{name: registry.MetricEntry(name, scorer) for name, scorer in {BROKEN!r}.items()}}}}
"""


@pytest.fixture
def modules(tmp_path, monkeypatch):
    (tmp_path / "toy_abstract.py").write_text(ABSTRACT, encoding="utf-8")
    (tmp_path / "toy_syntax.py").write_text("def score(:\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_the_default_set_leaves_each_broken_metric_out_in_one_line(modules, monkeypatch):
    monkeypatch.setattr(capeval.registry, "METRICS", {**capeval.registry.METRICS,
                                                      **{name: MetricEntry(name, scorer) for name, scorer in BROKEN.items()}})
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        runs = metric_runs("offline")
    assert [str(warning.message) for warning in shown if warning.category is LeftOutWarning] == LINES
    assert {"BLEU-4", "ROUGE-L", "CIDEr-D"} <= {run.label for run in runs}
    assert not {run.scorer.metric for run in runs} & set(BROKEN)
    assert {row.metric for row in capeval.doctor()}.isdisjoint(BROKEN)
    assert left_out(capeval.registry.METRICS["bleu"]) is False


def test_a_missing_extra_is_no_broken_metric(monkeypatch):
    """A metric whose extra is missing is no broken metric (readiness names the extra), and is not warned about."""
    monkeypatch.setattr(MetricEntry, "scorer_class", lambda self: (_ for _ in ()).throw(
        capeval.registry.MissingExtraError(self.name, ("models",), "torch")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert left_out(MetricEntry("bert_tbr", "capeval.scoring.bert_tbr:BertTbrScorer")) is False


def test_all_leaves_each_broken_metric_out_in_one_line(modules, monkeypatch):
    text = {name: capeval.registry.METRICS[name] for name in ("bleu", "rouge")}
    monkeypatch.setattr(capeval.registry, "METRICS", {**text, **{name: MetricEntry(name, scorer) for name, scorer in BROKEN.items()}})
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        runs = metric_runs("all")
    assert [str(warning.message) for warning in shown if warning.category is LeftOutWarning] == LINES
    assert [run.label for run in runs] == ["BLEU", "ROUGE-L"]


def test_each_line_is_shown_once_per_process(modules):
    """As Python shows a warning from one place once: a loop that asks for the default set again says it once."""
    entry = MetricEntry("toy_missing", BROKEN["toy_missing"])
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        capeval.registry._LEFT_OUT_SHOWN.clear()
        assert left_out(entry) and left_out(entry)
    assert [str(warning.message) for warning in shown] == [LINES[2]]


@pytest.mark.slow
def test_capeval_score_scores_the_others_and_says_which_it_left_out(modules):
    command = PLANT + "from capeval.cli import main\nraise SystemExit(main(['score', '--offline', 'bleu,rouge']))"
    done = subprocess.run([PYTHON, "-c", command], capture_output=True, text=True, cwd=modules,
                          env={**os.environ, "PYTHONPATH": str(modules), "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"capeval:0: LeftOutWarning: {line}" for line in LINES]
    assert "- BLEU-4: 0.1236 corpus, 0.0752 per-caption mean" in done.stdout and "- ROUGE-L: 0.3551 corpus = per-caption mean" in done.stdout


@pytest.fixture
def registered(modules, monkeypatch):
    """The broken metrics registered as a plugin's would be (in the registry every module reads), and each line shown
    afresh."""
    entries, _ = capeval.registry.METRICS._discovered
    for name, scorer in BROKEN.items():
        monkeypatch.setitem(entries, name, MetricEntry(name, scorer))
    monkeypatch.setattr(capeval.registry, "_LEFT_OUT_SHOWN", {})


def left_out_lines(call) -> list[str]:
    """The LeftOutWarning lines that ``call()`` shows, as Python shows them (each place once)."""
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        call()
    return [str(warning.message) for warning in shown if warning.category is LeftOutWarning]


def test_capeval_score_lists_what_its_default_set_leaves_out_after_one_line_per_broken_metric(registered, capsys):
    assert left_out_lines(lambda: capeval.cli.main(["score", "--offline", "bleu"])) == LINES
    out = capsys.readouterr().out
    assert "Not run here: " in out and not any(name in out for name in BROKEN)


def test_evaluate_default_set_shows_one_line_per_broken_metric_and_scores_the_others(registered):
    results = []
    assert left_out_lines(lambda: results.append(capeval.evaluate(["a dog runs"], [["a dog running"]]))) == LINES
    assert results[0].corpus["bleu_4"] > 0 and not set(results[0].corpus) & set(BROKEN)


def test_the_suite_space_shows_one_line_per_broken_metric_and_lists_the_others(registered):
    from capeval.integrations.gradio_app import suite_missing

    missing = {}
    assert left_out_lines(lambda: missing.update(suite_missing())) == LINES
    assert "umic" in missing and not set(missing) & set(BROKEN)
