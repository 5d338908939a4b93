"""Work the text metrics of one call share: inside :func:`shared_text_work`, PTB tokenizations and n-gram counts
are computed once and reused by every COCO metric of the call (BLEU, ROUGE-L, CIDEr-D, METEOR tokenize the same
references; BLEU and CIDEr-D count the same n-grams). :func:`capeval.evaluate`, ``capeval score``, the benchmark
harness and the Trainer hook score inside one; a scorer used alone computes everything itself.

>>> from capeval.text.ptb import ptb_tokenize
>>> with shared_text_work():
...     first = ptb_tokenize(["A dog runs."])
...     again = ptb_tokenize(["A dog runs."])  # read from the call's table, not tokenized again
...     call_table(("ptb", "python"))
{('A dog runs.',): ['a dog runs']}
>>> first == again == ["a dog runs"], call_table(("ptb", "python"))  # outside a block nothing is kept
(True, {})
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Hashable, Iterator

_TABLES: ContextVar[dict | None] = ContextVar("capeval_shared_text_work", default=None)


@contextmanager
def shared_text_work() -> Iterator[None]:
    """Share tokenizations and n-gram counts among the scorers run in the block (nested blocks share the outer
    one's); everything is dropped when the outermost block ends."""
    if _TABLES.get() is not None:
        yield
        return
    token = _TABLES.set({})
    try:
        yield
    finally:
        _TABLES.reset(token)


def call_table(kind: Hashable) -> dict:
    """The table of ``kind`` (e.g. ``("ngrams", 4)``) of the current :func:`shared_text_work` block: shared by
    every scorer of the call, or a fresh dict outside a block."""
    tables = _TABLES.get()
    if tables is None:
        return {}
    return tables.setdefault(kind, {})


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector in a loop that allocates many small containers and frees none of
    them (the word lists of the sentences an n-gram index numbers): otherwise collections walk them all, 15% of the
    index's time. None of these objects form cycles, so nothing waits for the collector meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
