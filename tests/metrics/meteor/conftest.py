"""Fixtures of the METEOR tests: the jar's resources (read from pycocoevalcap's jar; the paraphrase table from
capeval's cache, built on first use) and the jar's stored answers (tests/assets/meteor_jar_*); the jar itself is the session's `meteor_process`."""

import json

import pytest

from fixtures import ASSETS


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
