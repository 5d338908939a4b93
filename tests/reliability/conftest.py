"""Fixtures of the bad-input suite: one METEOR JVM for the session, the tiny UMIC model of the vision tests."""

import shutil
import sys
from pathlib import Path

import pytest

from vision.conftest import (  # noqa: F401 - fixtures of the vision tests, shared here
    cased_tokenizer_dir, sample_features, sample_image, tiny_umic, tiny_umic_checkpoint, tiny_uniter_config)

#: Where a test without Java says why it skipped (scripts/setup_env.sh installs a JRE where it can).
NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None, reason="needs a Java runtime (apt-get install default-jre-headless)")

PYTHON = sys.executable
SHARED = str(Path(__file__).resolve().parents[2] / "shared")


@pytest.fixture(scope="session")
def meteor_process():
    """One METEOR JVM for the session (it takes ~10-20 s to start); tests that break it leave a fresh one behind."""
    pytest.importorskip("pycocoevalcap")
    if shutil.which("java") is None:
        pytest.skip("needs a Java runtime (apt-get install default-jre-headless)")
    from capeval.scoring.coco import MeteorScorer

    process = MeteorScorer(engine="jar").jar()
    yield process
    process.close()


@pytest.fixture
def meteor_scorer(meteor_process):
    """``meteor_scorer(**options)``: a METEOR scorer with ``engine="jar"`` on the session's JVM."""
    from capeval.scoring.coco import MeteorScorer

    def build(**options):
        scorer = MeteorScorer(**{"engine": "jar", **options})
        scorer._jar = meteor_process
        return scorer

    return build
