"""Fixtures for the CAPTURE tests: the tiny parser and encoder of ``tests/assets/capture`` (loaded through the paths
users take), the released package's recorded outputs on them (``scripts/build_capture_golden.py``), and stand-ins for
NLTK's punkt and tagger, whose data is a download: the sentences and tags NLTK gave in the golden run, or, for other
texts, a split at full stops and every word tagged as a noun."""

import json
import re

import pytest

from capeval.scoring import capture
from fixtures.capture import ASSETS

#: The golden runs: FactualSceneGraph 0.5.0 (transformers 4.42) and 0.7.3 (transformers 4.57), capture-metric 0.1.13.
GOLDEN_FILES = {"0.5": "golden_factual050.json", "0.7": "golden_factual073.json"}


@pytest.fixture(scope="session")
def golden() -> dict:
    return {version: json.loads((ASSETS / name).read_text(encoding="utf-8")) for version, name in GOLDEN_FILES.items()}


@pytest.fixture(scope="session")
def fixtures() -> dict:
    return json.loads((ASSETS / "fixtures.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def parser_path() -> str:
    return str(ASSETS / "parser")


@pytest.fixture(scope="session")
def encoder_path() -> str:
    return str(ASSETS / "encoder")


def simple_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def simple_tags(text: str) -> list[tuple[str, str]]:
    return [(word, "NN" if word[0].isalnum() else ".") for word in re.findall(r"\w+|[^\w\s]", text)]


@pytest.fixture
def recorded_language(monkeypatch, golden):
    """NLTK's sentences and tags of the golden run for its texts, the simple stand-ins for any other text."""
    sentences, tags = golden["0.5"]["sentences"], golden["0.5"]["tags"]
    monkeypatch.setattr(capture, "split_sentences", lambda text: sentences[text] if text in sentences else simple_sentences(text))
    monkeypatch.setattr(capture, "tag_words", lambda text: [tuple(t) for t in tags[text]] if text in tags else simple_tags(text))
    monkeypatch.setattr(capture, "require_language_data", lambda: None)
