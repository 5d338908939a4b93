"""Progress bars for long runs: on by default, off with ``CAPEVAL_PROGRESS=0`` (the tests set it).

Off means every bar a capeval call draws, transformers' own ("Loading weights", downloads) included.
Bars name models by :func:`capeval.models.model_id`, as hashcodes do, never by an absolute path.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

from tqdm.auto import tqdm

from .settings import progress_default

T = TypeVar("T")

#: Seconds a run takes before its bar appears, so short calls stay quiet.
SHOW_AFTER_SECONDS = 1.0

_QUIET_LOCK = threading.Lock()
_quiet_depth = 0
_transformers_bars_were_on = False


def progress_enabled(show: bool | None = None) -> bool:
    if show is not None:
        return show
    return progress_default()


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", show: bool | None = None) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar when progress is enabled and there is more than one step.

    The bar appears only once a run has taken :data:`SHOW_AFTER_SECONDS`, so short calls stay quiet.

    >>> list(progress(range(3), desc="counting", show=False))
    [0, 1, 2]
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if not progress_enabled(show) or (total is not None and total <= 1):
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False, delay=SHOW_AFTER_SECONDS)


@contextmanager
def transformers_bars(show: bool | None = None) -> Iterator[None]:
    """Within the block, transformers' and huggingface_hub's bars follow capeval's setting: hidden when
    progress is off, restored after the last of any nested or concurrent blocks ends.

    >>> from transformers.utils import logging
    >>> with transformers_bars(show=False):
    ...     logging.is_progress_bar_enabled()
    False
    """
    global _quiet_depth, _transformers_bars_were_on
    if progress_enabled(show):
        yield
        return
    from transformers.utils import logging as transformers_logging

    with _QUIET_LOCK:
        if _quiet_depth == 0:
            _transformers_bars_were_on = transformers_logging.is_progress_bar_enabled()
            transformers_logging.disable_progress_bar()
        _quiet_depth += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _quiet_depth -= 1
            if _quiet_depth == 0 and _transformers_bars_were_on:
                transformers_logging.enable_progress_bar()
