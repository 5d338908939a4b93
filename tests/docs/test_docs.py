"""The documentation site builds with warnings as errors, with one page per metric and dataset card made at build
time, the API reference from the docstrings, and the benchmark tables."""

import doctest
import importlib.util
import os
import subprocess
import sys

import pytest

import capeval

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")


def load_script(repo_root, name):
    spec = importlib.util.spec_from_file_location(name, repo_root / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(repo_root / "mkdocs.yml"), "-d", str(out)],
                           cwd=repo_root, env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    return out


def test_every_card_is_a_page_made_at_build_time(site, repo_root):
    for name in capeval.METRICS:
        page = (site / "metrics" / name / "index.html").read_text(encoding="utf-8")
        assert f"This page is the card <code>metrics/{name}/README.md</code>" in page
        assert not (repo_root / "docs" / "metrics" / f"{name}.md").exists()  # generated, not copied
    bleu = (site / "metrics" / "bleu" / "index.html").read_text(encoding="utf-8")
    assert "Metric Card for BLEU" in bleu and "sdk_version" not in bleu  # the Hub's YAML header is left out
    for card in (repo_root / "hub").glob("*/README.md"):
        assert (site / "datasets" / card.parent.name / "index.html").is_file()
    index = (site / "metrics" / "index.html").read_text(encoding="utf-8")
    assert 'href="bleu/"' in index and 'href="../datasets/pascal50s/"' in index  # in the navigation


def test_api_reference_and_benchmark_tables(site):
    registry = (site / "api" / "registry" / "index.html").read_text(encoding="utf-8")
    assert "build_scorer" in registry and '<span class="gp">&gt;&gt;&gt; </span>' in registry  # examples are pycon code
    torchmetrics = (site / "api" / "integrations" / "index.html").read_text(encoding="utf-8")
    assert "CaptionScoreMetric" in torchmetrics and "compute_metrics_fn" in torchmetrics
    assert "Flickr8k-Expert" in (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "captions/s" in (site / "speed" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["docs_hooks", "docs_griffe"])
def test_docs_scripts_examples(repo_root, name):
    result = doctest.testmod(load_script(repo_root, name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and result.failed == 0
