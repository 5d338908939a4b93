"""capeval installed from its wheel, used from outside the checkout; the Spaces' requirements name that wheel."""

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import capeval
from installing import build_wheel, install, run_outside

#: Every test here builds a wheel and installs it into a fresh folder.
pytestmark = pytest.mark.install

OUTSIDE_THE_CHECKOUT = """
import json, sys
import evaluate
import capeval

sys.stdout.reconfigure(encoding="utf-8")
bleu = capeval.load("bleu").compute(predictions=["a dog runs on the grass"], references=[["a dog runs on grass"]])
sparcs = evaluate.load(capeval.module_path("smurf"), components=["sparcs"]).compute(
    predictions=["a man riding a motorcycle"], references=[["a man riding on the back of a motorcycle"]])
from capeval.benchmarks import load_benchmark
print(json.dumps({"capeval": capeval.__file__, "module": capeval.module_path("smurf"), "bleu": bleu["bleu"],
                  "sparcs": sparcs["scores"][0], "pascal_rows": load_benchmark("pascal50s").num_rows}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, repo_root):
    return build_wheel(repo_root, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed into a fresh target folder (its dependencies come from this environment)."""
    return install(tmp_path_factory.mktemp("site"), wheel, index=False)


@pytest.mark.slow
def test_wheel_carries_the_modules_and_the_benchmarks(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for metric in capeval.METRICS:
        assert f"capeval/metric_modules/{metric}/{metric}.py" in names and f"capeval/metric_modules/{metric}/README.md" in names
    resources = Path(capeval.__file__).parent / "resources"
    for resource in resources.rglob("*"):  # amber_sample/ too
        if resource.is_file() and "__pycache__" not in resource.parts:
            assert f"capeval/resources/{resource.relative_to(resources).as_posix()}" in names, resource.name
    for benchmark in ("flickr8k_expert", "flickr8k_cf", "composite", "pascal50s", "capeval1k", "thumb"):
        assert f"capeval/hub_datasets/{benchmark}/data/test-00000-of-00001.parquet" in names
    assert "capeval/py.typed" in names  # type checkers read capeval's annotations (PEP 561)
    from capeval.integrations.lmms_eval import tasks_path

    configs = sorted(tasks_path().glob("*.yaml"))
    assert len(configs) > 10  # the lmms-eval task configs (python -m capeval.integrations.lmms_eval --path)
    for config in configs:
        assert f"capeval/integrations/lmms_eval/task_configs/{config.name}" in names, config.name
    for resource in ("bert_tbr_stop_words.txt", "sample_captions.json", "flickr8k_references.json.gz", "sample_image.jpg",
                     "sample_image_butd.npz", "smurf_golden.parquet"):
        assert f"capeval/resources/{resource}" in names


@pytest.mark.slow
def test_installed_wheel_scores_from_outside_the_checkout(installed, tmp_path):
    out = json.loads(run_outside(installed, tmp_path, sys.executable, "-c", OUTSIDE_THE_CHECKOUT).stdout)
    assert out["capeval"].startswith(str(installed)) and out["module"].startswith(str(installed))
    assert out["bleu"] == pytest.approx(capeval.load("bleu").compute(
        predictions=["a dog runs on the grass"], references=[["a dog runs on grass"]])["bleu"], abs=1e-12)
    assert out["sparcs"] == pytest.approx(6 / 7, abs=1e-12)  # P = 1 (3 of 3 concepts), R = 3/4
    assert out["pascal_rows"] == 4000
    # The lmms-eval task configs come with the wheel: the folder lmms-eval's --include_path is given.
    folder = Path(run_outside(installed, tmp_path, sys.executable, "-m", "capeval.integrations.lmms_eval", "--path").stdout.strip())
    assert folder.is_relative_to(installed) and (folder / "capeval_coco2017_cap_val.yaml").is_file()


@pytest.mark.slow
def test_installed_command_line_scores_and_benchmarks(installed, tmp_path):
    command = str(installed / "bin" / "capeval")
    score = run_outside(installed, tmp_path, command, "score", "--offline", "bleu,cider").stdout
    assert "Scoring 16 captions (bundled Flickr8k-Expert sample)" in score and "\n- BLEU-4: " in score and " corpus, " in score and " per-caption mean" in score
    bench = run_outside(installed, tmp_path, command, "benchmark", "--metric", "bleu", "--dataset", "pascal50s", "--samples", "0").stdout
    assert "### PASCAL-50S" in bench and "| bleu | 62.2 | 93.0 | 85.0 | 58.3 | 74.6 |" in bench


def test_space_requirements_name_the_wheel_of_this_version(wheel, repo_root, tmp_path):
    spec = importlib.util.spec_from_file_location("publish_spaces", repo_root / "scripts" / "publish_spaces.py")
    publish = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(publish)
    assert wheel.name == f"capeval-{capeval.__version__}-py3-none-any.whl"
    assert {"bleu", "umic", "suite", "leaderboard"} <= set(publish.FOLDERS)
    for name, folder in publish.FOLDERS.items():
        staged = publish.stage(folder, wheel, tmp_path)
        assert (staged / wheel.name).is_file() and (staged / "app.py").is_file(), name
    assert (tmp_path / "leaderboard" / "results.json").is_file()  # the stored harness results travel with the Space
    # pip accepts the wheel line with its extras as written (resolved from the staged folder, nothing installed).
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "-q", "-r", "requirements.txt"],
                   cwd=tmp_path / "bleu", check=True)
    # Written from each metric's declaration: SPICE's extra and its Java runtime; METEOR runs in Python, without Java.
    assert (tmp_path / "spice" / "requirements.txt").read_text() == f"./{wheel.name}[spaces,spice]\n"
    assert (tmp_path / "spice" / "packages.txt").read_text() == "default-jre-headless\n"
    assert not (tmp_path / "meteor" / "packages.txt").exists() and not (tmp_path / "bleu" / "packages.txt").exists()
    # Every metric's app.py is the same two lines (the metric comes from the folder's name).
    assert len({(folder / "app.py").read_text() for name, folder in publish.FOLDERS.items() if folder.parent.name == "metrics"}) == 1


@pytest.mark.slow
def test_scoring_from_the_command_line_needs_no_evaluate(installed, tmp_path):
    """Scorers, the CLI's score and benchmark, and the harness do not import evaluate (only the modules do)."""
    blocker = tmp_path / "no_evaluate"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class NoEvaluate:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'evaluate':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, NoEvaluate())\n", encoding="utf-8")
    command = str(installed / "bin" / "capeval")
    for args in (["score", "--offline", "bleu"], ["benchmark", "--metric", "bleu", "--dataset", "pascal50s", "--samples", "0"]):
        done = run_outside(installed, tmp_path, command, *args, path=(blocker,))
    assert "| bleu | 62.2 | 93.0 | 85.0 | 58.3 | 74.6 |" in done.stdout
    # capeval.load without evaluate: a standalone metric with the module's compute and results.
    load = ("import capeval, sys\nbleu = capeval.load('bleu', order=1)\n"
            "result = bleu.compute(predictions=['a dog'], references=[['a dog runs']])\n"
            "print(type(bleu).__name__, round(result['bleu'], 6), 'evaluate' in sys.modules)\n")
    said = run_outside(installed, tmp_path, sys.executable, "-c", load, path=(blocker,)).stdout
    assert said.split() == ["StandaloneMetric", "0.606531", "False"]
