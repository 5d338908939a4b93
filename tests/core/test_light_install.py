"""``pip install capeval`` alone: a clean virtual environment gets capeval's wheel and its few dependencies (from the
package index) and scores the text metrics with no torch, transformers, datasets, scipy, pandas, pyarrow, matplotlib
or nltk importable; a model metric or a command that needs an extra says which, in one line."""

import json
import os
import subprocess
import sys

import pytest

from installing import build_wheel

HEAVY = ("torch", "transformers", "evaluate", "datasets", "scipy", "pandas", "pyarrow", "matplotlib", "nltk")

SCORE = """
import importlib.util, json, sys
import capeval
result = capeval.evaluate(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]],
                          metrics=["bleu", "rouge", "cider"])
module = capeval.load("bleu").compute(predictions=["a dog runs on the grass"], references=[["a dog runs on grass"]])
try:
    capeval.load("bert_tbr")
    model = ""
except ImportError as error:
    model = str(error)
print(json.dumps({"corpus": result.corpus, "module": module["bleu"], "model": model,
                  "importable": [name for name in HEAVY if importlib.util.find_spec(name)],
                  "imported": [name for name in HEAVY if name in sys.modules]}))
"""


@pytest.mark.install
@pytest.mark.slow
def test_the_core_install_scores_the_text_metrics_without_torch(repo_root, tmp_path):
    import capeval

    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True)
    python = environment / "bin" / "python"
    wheel = build_wheel(repo_root, tmp_path / "dist")
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
    env.pop("PYTHONPATH", None)
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True)
    done = subprocess.run([str(python), "-c", SCORE.replace("HEAVY", repr(HEAVY))], **run)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["importable"] == [] and out["imported"] == []
    here = capeval.evaluate(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]],
                            metrics=["bleu", "rouge", "cider"]).corpus
    assert out["corpus"] == pytest.approx(here, abs=1e-12)
    assert out["module"] == pytest.approx(capeval.load("bleu").compute(
        predictions=["a dog runs on the grass"], references=[["a dog runs on grass"]])["bleu"], abs=1e-12)
    assert out["model"] == "bert_tbr needs capeval's models extra (torch is not installed): pip install 'capeval[models]'"

    command = str(environment / "bin" / "capeval")
    default = subprocess.run([command, "score"], **run)
    assert default.returncode == 0, default.stderr[-3000:]
    not_run = next(line for line in default.stdout.splitlines() if line.startswith("Not run here: "))
    assert {"bert_tbr", "bertscore", "clip_score", "umic"} <= {item.split(" (")[0] for item in not_run.removeprefix("Not run here: ").split("; ")}
    assert "pip install 'capeval[" in default.stdout
    assert "- BLEU-4: 0.1236 corpus, 0.0752 per-caption mean" in default.stdout and "Kendall τ-b against the human scores needs scipy" in default.stdout
    model = subprocess.run([command, "score", "--metric", "bert_tbr"], **run)
    assert (model.returncode, model.stdout) == (2, "")
    assert model.stderr == "capeval score: bert_tbr needs capeval's models extra (torch is not installed): pip install 'capeval[models]'\n"
    benchmark = subprocess.run([command, "benchmark", "--metric", "bleu", "--dataset", "pascal50s"], **run)
    assert benchmark.returncode == 2 and benchmark.stderr.count("\n") == 1
    assert "needs capeval's benchmarks extra" in benchmark.stderr and "pip install 'capeval[benchmarks]'" in benchmark.stderr
