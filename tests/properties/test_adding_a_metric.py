"""Adding a metric to capeval is what the README's "Adding a metric" says, and nothing else: its files, planted in a
copy of the checkout as the README gives them, and its write_cards.py step make a metric that every surface of an
installed copy picks up; another package adds one through the ``capeval.scorers`` entry-point group
(tests/assets/word_count_plugin).
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from capeval.samples import sample_captions
from installing import copy_checkout, install, run_outside
from fixtures import ASSETS, REPO

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


#: A step of the README's "Adding a metric" that writes a file: its path, then the file in a code block.
FILE_STEP = re.compile(r"^\d+\. `([^`\s]+)`.*?\n\n   ```\w*\n(.*?)\n   ```$", re.MULTILINE | re.DOTALL)
#: The step that runs a script.
COMMAND_STEP = re.compile(r"^\d+\. `(python scripts/[^`]+)`", re.MULTILINE)


def readme_steps() -> tuple[dict[str, str], list[str]]:
    """The files the README's "Adding a metric" writes (path: text) and the commands it runs, in its order."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.partition("### Adding a metric\n")[2].partition("\n## ")[0]
    files = {path: "\n".join(line.removeprefix("   ") for line in body.split("\n")) + "\n"
             for path, body in FILE_STEP.findall(section)}
    return files, COMMAND_STEP.findall(section)


def test_the_readme_gives_every_file_of_the_toy_metric_and_the_step_that_writes_its_docs():
    files, commands = readme_steps()
    assert list(files) == ["shared/capeval/scoring/toy_length.py", "metrics/toy_length/toy_length.py",
                           "metrics/toy_length/README.md", "metrics/toy_length/app.py"]
    assert files["metrics/toy_length/app.py"] == (REPO / "metrics" / "bleu" / "app.py").read_text(encoding="utf-8")
    assert commands == ["python scripts/write_cards.py"]


def follow_the_readme(copy) -> None:
    """Plant the README's files in ``copy`` and run its commands there, as from a development checkout: the
    package's ``metric_modules`` is the checkout's ``metrics/`` (a link standing for the editable install)."""
    files, commands = readme_steps()
    for relative, text in files.items():
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        (copy / relative).write_text(text, encoding="utf-8")
    shutil.copytree(REPO / "docs", copy / "docs")
    (copy / "scripts").mkdir()
    for script in ("write_cards.py", "write_speed.py"):  # write_cards.py also writes the speed tables
        shutil.copy(REPO / "scripts" / script, copy / "scripts")
    shutil.copytree(REPO / "speed", copy / "speed", ignore=shutil.ignore_patterns("__pycache__"))
    link = copy / "shared" / "capeval" / "metric_modules"
    link.symlink_to(copy / "metrics", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(copy / "shared"), "HF_HUB_OFFLINE": "1"}
    for command in commands:
        done = subprocess.run([sys.executable, *command.split()[1:]], cwd=copy, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    link.unlink()


@pytest.fixture(scope="module")
def installed(tmp_path_factory, repo_root):
    """A copy of the checkout with the toy metric added as the README says, and the word-count package, installed
    into one folder."""
    copy = copy_checkout(repo_root, tmp_path_factory.mktemp("checkout"))
    follow_the_readme(copy)
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert "Toy length ratio" in readme.split("\n")[2] and "| [Toy length ratio](metrics/toy_length/README.md) |" in readme
    assert "`reference` | str | `'shortest'`" in (copy / "metrics" / "toy_length" / "README.md").read_text(encoding="utf-8")
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
    assert f"- toy_length(reference=longest): {sum(longest) / len(rows):.4f} corpus = per-caption mean" in score
    assert f"- word_count: {sum(words) / len(rows):.4f} corpus = per-caption mean" in score
    bench = run_outside(installed, outside, command, "benchmark", "--metric", "toy_length", "--dataset", "pascal50s",
                        "--samples", "0").stdout
    # A length ratio is near chance, except on human-vs-machine pairs, where lengths differ most.
    assert "### PASCAL-50S" in bench and "| toy_length | 50.7 | 52.3 | 63.8 | 50.2 | 54.3 |" in bench
