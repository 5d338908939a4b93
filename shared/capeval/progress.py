"""Progress bars for long runs: on by default, off with ``CAPEVAL_PROGRESS=0`` (the tests set it).

Off means every bar a capeval call draws, those of transformers ("Loading weights") and datasets included.
Bars name models by :func:`capeval.models.model_id`, as hashcodes do, never by an absolute path.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TypeVar


from .settings import progress_default

T = TypeVar("T")

#: Seconds a run takes before its bar appears, so short calls stay quiet.
SHOW_AFTER_SECONDS = 1.0

_QUIET_LOCK = threading.Lock()
_quiet_depth = 0
#: How to turn back on the library bars that the outermost quiet block turned off.
_switched_off: list[Callable[[], None]] = []


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
    from tqdm.auto import tqdm  # ~0.1 s to import (asyncio, ...): only once a bar is shown

    return tqdm(iterable, total=total, desc=desc, leave=False, delay=SHOW_AFTER_SECONDS)


def _library_switches() -> list[tuple[Callable[[], bool], Callable[[], None], Callable[[], None]]]:
    """(is on, turn off, turn on) of the bars of the libraries capeval calls: transformers (with huggingface_hub's,
    which it switches too) and datasets where it is installed (the model metrics do not need it)."""
    from transformers.utils import logging as transformers_logging

    switches = [(transformers_logging.is_progress_bar_enabled, transformers_logging.disable_progress_bar,
                 transformers_logging.enable_progress_bar)]
    try:
        import datasets
    except ImportError:
        return switches
    return switches + [(datasets.is_progress_bar_enabled, datasets.disable_progress_bars, datasets.enable_progress_bars)]


@contextmanager
def library_bars(show: bool | None = None) -> Iterator[None]:
    """Within the block, the bars of transformers ("Loading weights"), huggingface_hub and datasets ("Generating
    test split") follow capeval's setting: hidden when progress is off, restored after the last of any nested or
    concurrent blocks ends.

    >>> from transformers.utils import logging
    >>> with library_bars(show=False):
    ...     logging.is_progress_bar_enabled()
    False
    """
    global _quiet_depth, _switched_off
    if progress_enabled(show):
        yield
        return
    with _QUIET_LOCK:
        if _quiet_depth == 0:
            switches = _library_switches()
            _switched_off = [turn_on for is_on, _, turn_on in switches if is_on()]
            for _, turn_off, _ in switches:
                turn_off()
        _quiet_depth += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                for turn_on in _switched_off:
                    turn_on()
