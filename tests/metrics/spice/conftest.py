"""Fixtures of SPICE's tests: the fake ``java`` of ``spice_fixtures`` on PATH, with capeval's cache in a fresh folder."""

import pytest

from fixtures import spice as spice_fixtures


@pytest.fixture
def fake_java(tmp_path, monkeypatch):
    """``fake_java(version="17.0.15", corenlp=True)``: the fake on PATH; returns its log of commands."""

    def install(version: str = "17.0.15", *, corenlp: bool = True):
        return spice_fixtures.use_fake_java(tmp_path, monkeypatch, version=version, corenlp=corenlp)

    return install


@pytest.fixture
def items():
    """The recorded captions: ``(predictions, references)``."""
    parsed = spice_fixtures.parsed_items()
    return [item["test"] for item in parsed], [item["refs"] for item in parsed]
