"""Adding a metric to capeval is one scorer file and one module folder (as the README says), and another package can
add one through the ``capeval.scorers`` entry-point group: every surface of an installed copy picks both up.

The planted files are in tests/assets/toy_metric (laid out as in the repository) and tests/assets/word_count_plugin.
"""

import json
import shutil
import sys

import pytest

from capeval.samples import sample_captions
from installing import copy_checkout, install, run_outside
from fixtures import ASSETS

#: Every test here builds a wheel and installs it into a fresh folder.
pytestmark = pytest.mark.install


PREDICTIONS = ["a dog runs", "two cats sleep on a mat"]
REFERENCES = [["a dog", "the dog runs fast"], ["cats sleep", "   "]]

EVERY_SURFACE = f"""
import doctest, json
from pathlib import Path
import evaluate
import capeval
import capeval.scoring.toy_length
from capeval.reports.cards import update_card
from capeval.integrations.gradio_app import suite_metrics
from capeval.integrations.trainer import CaptionEvaluator

predictions, references = {PREDICTIONS!r}, {REFERENCES!r}
card = Path(capeval.module_path("toy_length"), "README.md").read_text(encoding="utf-8")
result = capeval.evaluate(predictions, references, metrics=["toy_length", "word_count"])
print(json.dumps({{
    "capeval": capeval.__file__,
    "metrics": sorted(capeval.METRICS),
    "load": capeval.load("toy_length").compute(predictions=predictions, references=references)["scores"],
    "evaluate.load": evaluate.load(capeval.module_path("toy_length"), reference="longest").compute(
        predictions=predictions, references=references)["scores"],
    "capeval.evaluate": result.corpus,
    "hashcodes": result.provenance,
    "trainer": CaptionEvaluator(["toy_length", "word_count"], references=references).evaluate_texts(predictions),
    "suite": [metric.label for metric in suite_metrics()],
    "plugin load": capeval.load("word_count").compute(predictions=predictions)["scores"],
    "doctests": doctest.testmod(capeval.scoring.toy_length).failed,
    "card is current": update_card(card, capeval.METRICS["toy_length"].scorer_class()) == card,
}}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory, repo_root):
    """A copy of the checkout with the toy metric planted, and the word-count package, installed into one folder."""
    copy = copy_checkout(repo_root, tmp_path_factory.mktemp("checkout"))
    shutil.copytree(ASSETS / "toy_metric", copy, dirs_exist_ok=True)
    shutil.copy(repo_root / "metrics" / "bleu" / "app.py", copy / "metrics" / "toy_length" / "app.py")  # every app.py is the same
    return install(tmp_path_factory.mktemp("site"), copy, ASSETS / "word_count_plugin")


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    return tmp_path_factory.mktemp("elsewhere")


@pytest.mark.slow
def test_every_surface_picks_up_the_planted_and_the_plugged_in_metric(installed, outside):
    out = json.loads(run_outside(installed, outside, sys.executable, "-c", EVERY_SURFACE).stdout)
    assert out["capeval"].startswith(str(installed))
    assert {"toy_length", "word_count", "bleu"} <= set(out["metrics"])
    # 3 words over the shortest reference's 2 (or the longest's 4); 6 words over 2 (the blank reference has no length).
    assert out["load"] == [1.5, 3.0] and out["evaluate.load"] == [0.75, 3.0]
    assert out["capeval.evaluate"] == {"toy_length": 2.25, "word_count": 4.5}
    assert out["hashcodes"]["toy_length"].startswith("toy_length(reference=shortest)_capeval=")
    assert out["hashcodes"]["word_count"].startswith("word_count()_capeval=")
    assert out["trainer"] == {"toy_length": 2.25, "word_count": 4.5}
    assert "Toy length ratio" in out["suite"] and "Word count" not in out["suite"]  # the plugin declares no offline run
    assert out["plugin load"] == [3.0, 6.0]
    assert out["doctests"] == 0 and out["card is current"]


def test_the_command_line_scores_and_benchmarks_them(installed, outside):
    command = str(installed / "bin" / "capeval")
    score = run_outside(installed, outside, command, "score", "--metric", "toy_length:reference=longest", "--metric", "word_count").stdout
    rows = sample_captions()
    longest = [len(r["candidate"].split()) / max(len(ref.split()) for ref in r["references"]) for r in rows]
    words = [len(r["candidate"].split()) for r in rows]
    assert f"- toy_length(reference=longest): mean {sum(longest) / len(rows):.4f}" in score
    assert f"- word_count: mean {sum(words) / len(rows):.4f}" in score
    bench = run_outside(installed, outside, command, "benchmark", "--metric", "toy_length", "--dataset", "pascal50s",
                        "--samples", "0").stdout
    # A length ratio is near chance, except on human-vs-machine pairs, where lengths differ most.
    assert "### PASCAL-50S" in bench and "| toy_length | 50.7 | 52.3 | 63.8 | 50.2 | 54.3 |" in bench
