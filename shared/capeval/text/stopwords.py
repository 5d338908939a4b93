"""Pinned stop-word lists shipped as package data (provenance in ``resources/README.md``)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

_FILES = {
    "bert_tbr": "bert_tbr_stop_words.txt",
    "capture": "capture_stop_words.txt",
    "nltk179": "nltk179_stop_words.txt",
}


@lru_cache(maxsize=None)
def stopword_list(name: str) -> tuple[str, ...]:
    """The named list in file order, each line stripped (duplicates kept).

    >>> len(stopword_list("bert_tbr")), len(stopword_list("nltk179")), len(stopword_list("capture"))
    (1528, 179, 317)
    """
    if name not in _FILES:
        raise ValueError(f"unknown stop-word list {name!r}; choose one of {sorted(_FILES)}")
    text = resources.files("capeval").joinpath("resources").joinpath(_FILES[name]).read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines())


@lru_cache(maxsize=None)
def stopwords(name: str) -> frozenset[str]:
    """The named list as a set for membership tests (case-sensitive).

    >>> "A" in stopwords("bert_tbr"), "The" in stopwords("bert_tbr"), "," in stopwords("bert_tbr")
    (True, False, False)
    """
    return frozenset(stopword_list(name))
