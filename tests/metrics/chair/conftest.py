"""CHAIR's test data: a COCO annotation folder in the released format, the released code's outputs on it, and
stand-ins for the NLTK data that no package ships (the POS tagger's weights) replaying what the released code saw."""

import json
from types import SimpleNamespace

import pytest

from fixtures.chair import ASSETS


@pytest.fixture(scope="session")
def released() -> dict:
    """The released code's outputs on the fixture folder (tests/assets/PROVENANCE.md says how they were made)."""
    return json.loads((ASSETS / "released_outputs.json").read_text(encoding="utf-8"))


@pytest.fixture()
def recorded_nltk(monkeypatch, released):
    """The opera variant with the POS tags and WordNet lemmas the released code got on these captions (its run used
    a stand-in perceptron model for the tags; see PROVENANCE), so it runs without NLTK's tagger or WordNet."""
    import capeval.scoring.chair as chair

    tags, lemmas = released["opera_tags"], released["opera_lemmas"]
    monkeypatch.setattr(chair, "pos_tagger", lambda: lambda sentences: [tags[" ".join(tokens)] for tokens in sentences])
    monkeypatch.setattr(chair, "wordnet_lemmatizer", lambda: SimpleNamespace(lemmatize=lambda word, pos: lemmas[f"{word} {pos}"]))
    return tags


@pytest.fixture()
def recorded_tags(monkeypatch, released):
    """Only the recorded POS tags: WordNet is the one installed here (skipped without it)."""
    import capeval.scoring.chair as chair
    from capeval.models import ModelUnavailableError
    from capeval.text.english import wordnet_lemmatizer

    try:
        wordnet_lemmatizer()
    except ModelUnavailableError as error:
        pytest.skip(str(error))
    tags = released["opera_tags"]
    monkeypatch.setattr(chair, "pos_tagger", lambda: lambda sentences: [tags[" ".join(tokens)] for tokens in sentences])
