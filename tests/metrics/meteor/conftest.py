"""Fixtures of the METEOR tests: the jar's resources (read from pycocoevalcap's jar; the paraphrase table from
capeval's cache, built on first use) and the jar's stored answers (tests/assets/meteor_jar_*)."""

import json
import shutil
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[2] / "assets"
#: Where a test without Java says why it skipped.
NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None, reason="needs a Java runtime (apt-get install default-jre-headless)")


@pytest.fixture(scope="session")
def resources():
    """The METEOR 1.5 jar's resources (the first use on a machine builds the cached paraphrase table, ~1 minute)."""
    pytest.importorskip("pycocoevalcap", reason="METEOR reads its data from pycocoevalcap's jar")
    from capeval.scoring.meteor import load_resources

    return load_resources()


@pytest.fixture(scope="session")
def units():
    """The jar's answers for hand-picked normalizer, stemmer and sentence-pair cases."""
    return json.loads((ASSETS / "meteor_jar_units.json").read_text())


@pytest.fixture(scope="session")
def jar_process():
    """One METEOR JVM for the session."""
    pytest.importorskip("pycocoevalcap")
    if shutil.which("java") is None:
        pytest.skip("needs a Java runtime (apt-get install default-jre-headless)")
    from capeval.scoring.meteor import pycocoevalcap_jar
    from capeval.scoring.meteor_jar import MeteorProcess

    process = MeteorProcess(pycocoevalcap_jar())
    yield process
    process.close()
