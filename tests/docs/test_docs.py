"""The documentation site builds with warnings as errors, with one page per metric and dataset card made at build
time, the API reference from the docstrings, and the benchmark tables."""

import doctest
import html
import os
import re
import subprocess
import sys

import pytest

import capeval
from fixtures import load_script

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")


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


def test_api_pages_render_their_docstrings(site):
    """Sphinx roles become code and examples become pycon code on every API page, the package's own included (griffe's
    object events skip a package's docstring: scripts/docs_griffe.py handles it apart)."""
    for page in (site / "api").glob("*/index.html"):
        rendered = page.read_text(encoding="utf-8")
        assert not re.search(r":(func|mod|class|meth|attr|exc|data|obj):", rendered), page
        assert "<blockquote>" not in rendered, page  # a ">>>" line outside a code block is a nested quote
    package = (site / "api" / "capeval" / "index.html").read_text(encoding="utf-8")
    assert "<code>capeval.evaluate</code> scores captions with every metric" in package
    assert package.count('<span class="gp">&gt;&gt;&gt; </span>') >= 5  # both examples, as code
    # Each example line and its output keep their own lines (not run together into one paragraph).
    text = html.unescape(re.sub(r"<[^>]+>", "", package))
    assert ">>> sorted(result.corpus)\n['bleu', 'bleu_1', 'bleu_2', 'bleu_3', 'bleu_4', 'cider', 'rouge_l']\n" in text


@pytest.mark.parametrize("name", ["docs_hooks", "docs_griffe", "write_cards"])
def test_docs_scripts_examples(name):
    result = doctest.testmod(load_script(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and result.failed == 0
