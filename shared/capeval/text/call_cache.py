"""Work the text metrics share: inside :func:`shared_text_work`, PTB tokenizations and n-gram counts are computed
once and reused by every COCO metric of the call (BLEU, ROUGE-L, CIDEr-D, METEOR tokenize the same references; BLEU
and CIDEr-D count the same n-grams). :func:`capeval.evaluate`, ``capeval score``, the benchmark harness and the
Trainer hook score inside one.

Across calls, :func:`kept_text_work` keeps what was computed for sentences seen before (their tokenization and
n-gram counts, by exact text and tokenizer), least recently used dropped first beyond the memory budget of
``CAPEVAL_ENCODING_CACHE_MB``: a training loop that evaluates against the same references every epoch tokenizes and
counts them once, then only its new predictions.

>>> from capeval.text.ptb import ptb_tokenize
>>> with shared_text_work():
...     first = ptb_tokenize(["A dog runs."])
...     again = ptb_tokenize(["A dog runs."])  # read from the call's table, not tokenized again
...     call_table(("ptb", "python"))
{('A dog runs.',): ('a dog runs',)}
>>> first == again == ["a dog runs"], call_table(("ptb", "python"))  # outside a block the call keeps nothing
(True, {})
>>> kept_text_work().get(("ptb", "python", ("A dog runs.",)))  # but the process keeps it for the next call
('a dog runs',)
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Hashable, Iterator

from ..models import BoundedCache, cached
from ..settings import encoding_cache_bytes

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


class StringTable(dict):
    """Strings by string (or tuple of strings), their estimated bytes (keys included) at most ``max_bytes``: a table
    that would outgrow it is emptied first, cheaper than a least-recently-used order for many small entries.

    >>> table = StringTable(max_bytes=500)
    >>> table.add({"A dog.": "a dog"}); table.add({"A cat.": "a cat"}); dict(table), table.bytes
    ({'A dog.': 'a dog', 'A cat.': 'a cat'}, 420)
    >>> table.add({"Two dogs.": "two dogs"}); dict(table), table.bytes  # no room: emptied first
    ({'Two dogs.': 'two dogs'}, 216)
    """

    def __init__(self, max_bytes: int):
        super().__init__()
        self.max_bytes, self.bytes = max_bytes, 0

    def add(self, values: dict) -> None:
        size = string_bytes(values)
        if self.bytes + size > self.max_bytes:
            self.clear()
        if size <= self.max_bytes:
            self.update(values)
            self.bytes += size

    def clear(self) -> None:
        super().clear()
        self.bytes = 0


def string_bytes(values: dict) -> int:
    """Estimated bytes of strings by string: each value twice (its key holds about as much text) and a string's
    overhead for each."""
    return 2 * sum(map(len, values.values())) + 100 * 2 * len(values)


#: The kept work's largest value, as a fraction of its budget: one over ``budget // LARGEST_SHARE`` is not kept.
LARGEST_SHARE = 8


class TextWork(BoundedCache):
    """What the text metrics computed, kept across calls within ``max_bytes`` (:func:`kept_text_work`): whole inputs'
    tokenizations and n-gram indexes by what they were computed from (least recently used dropped first), and two
    :class:`StringTable`: ``lines``, the COCO tokens of each line tokenized before (a quarter of the budget), and
    ``chunks``, the tokens of the distinct space-separated chunks of lines (:func:`capeval.text.ptb.chunked_tokenize`,
    a sixteenth).

    No value over an eighth of the budget is kept (:data:`LARGEST_SHARE`): a call whose values are that large (from
    about 12,000 captions of 5 references with the default budget) fills the budget with its later values by dropping
    its earlier ones, so the next call finds little of what it needs, while everything kept stays in memory on top of
    the call's own work (a 200,000-caption call peaked 310 MB higher: docs/speed.md, "Memory at scale").

    >>> work = TextWork(8000)
    >>> work.put("small", memoryview(bytes(500))); work.put("large", memoryview(bytes(1500))); sorted(work.get_many(["small", "large"]))
    ['small']
    """

    def __init__(self, max_bytes: int) -> None:
        self.lines, self.chunks = StringTable(0), StringTable(0)
        super().__init__(0, size=work_bytes)
        self.resize(max_bytes)

    def resize(self, max_bytes: int) -> None:
        """Forget everything and keep at most ``max_bytes`` from now on."""
        self.budget = max_bytes
        self.lines.max_bytes, self.chunks.max_bytes = max_bytes // 4, max_bytes // 16
        self.max_size = max_bytes - self.lines.max_bytes - self.chunks.max_bytes
        self.max_entry = max_bytes // LARGEST_SHARE
        self.clear()

    def clear(self) -> None:
        super().clear()
        self.lines.clear()
        self.chunks.clear()

    def clear_caches(self) -> None:
        """Forget everything (:func:`capeval.models.clear_feature_caches` calls this: a benchmark's cold start)."""
        self.clear()


def work_bytes(value: Any) -> int:
    """Estimated bytes of a kept value and of its key, which holds the text it was computed from: of a tuple of
    strings (a whole input's tokens), of each part of another tuple, else the value's ``nbytes`` (an array's; 100 for
    a number).

    >>> work_bytes(("a dog", "a cat")), work_bytes((("a dog",), memoryview(bytes(24)), 3))
    (420, 334)
    """
    if isinstance(value, str):
        return 2 * (len(value) + 100)
    if isinstance(value, tuple):
        return sum(map(work_bytes, value))
    return int(getattr(value, "nbytes", 100))


def kept_text_work() -> TextWork:
    """The process's :class:`TextWork`, in capeval's model cache, with the budget of ``CAPEVAL_ENCODING_CACHE_MB``
    (0: nothing is kept); a changed budget starts it afresh."""
    budget = encoding_cache_bytes()
    work = cached(("text-work",), lambda: TextWork(budget))
    if work.budget != budget:
        work.resize(budget)
    return work


def kept(key: Hashable, compute: Callable[[], Any]) -> Any:
    """The value kept under ``key`` (:func:`kept_text_work`), or ``compute()``, then kept."""
    work = kept_text_work()
    value = work.get(key)
    if value is None:
        value = compute()
        work.put(key, value)
    return value
