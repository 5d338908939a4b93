"""Reference corpora shipped with capeval, for metrics whose IDF would otherwise come from the scored captions.

CIDEr-D and BERT-TBR weight words by document frequency over the evaluated corpus, as their papers do; a
single caption (a Space, a quick check) is then its own corpus and scores 0 (CIDEr-D) or with degenerate
weights (BERT-TBR). ``idf="flickr8k"`` takes the frequencies from the references of the 1,000 Flickr8k test
images instead. Only the sentences ship (``resources/flickr8k_references.json.gz``, built by
``scripts/build_reference_corpus.py``): each metric tokenizes them its own way on first use.

>>> sets = reference_sets("flickr8k")
>>> len(sets), {len(refs) for refs in sets}
(1000, {5})
"""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources

#: ``idf=`` value -> resource file; ``"corpus"`` (the evaluated captions) is every metric's default.
REFERENCE_CORPORA = {"flickr8k": "flickr8k_references.json.gz"}
IDF_SOURCES = ("corpus", *REFERENCE_CORPORA)


def check_idf_source(idf: str) -> str:
    """``idf`` if it is ``"corpus"`` or a shipped reference corpus, else ``ValueError`` listing them."""
    if idf not in IDF_SOURCES:
        raise ValueError(f"idf must be one of {IDF_SOURCES} ('corpus': the evaluated captions), got {idf!r}")
    return idf


@functools.lru_cache(maxsize=None)
def _load(name: str) -> tuple[tuple[str, ...], ...]:
    data = resources.files("capeval").joinpath("resources").joinpath(REFERENCE_CORPORA[name]).read_bytes()
    return tuple(tuple(refs) for refs in json.loads(gzip.decompress(data))["references"])


def reference_sets(name: str) -> list[list[str]]:
    """The references of shipped corpus ``name``, one list per image (a fresh copy)."""
    check_idf_source(name)
    if name == "corpus":
        raise ValueError("'corpus' is the evaluated captions, not a shipped reference corpus")
    return [list(refs) for refs in _load(name)]


def reference_sentences(name: str) -> list[str]:
    """Every reference of shipped corpus ``name``, image by image."""
    return [sentence for refs in reference_sets(name) for sentence in refs]
