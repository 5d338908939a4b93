"""Progress bars for long runs: on by default, off with ``CAPEVAL_PROGRESS=0`` (the tests set it)."""

from __future__ import annotations

from typing import Iterable, TypeVar

from tqdm.auto import tqdm

from .settings import progress_default

T = TypeVar("T")


def progress_enabled(show: bool | None = None) -> bool:
    if show is not None:
        return show
    return progress_default()


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", show: bool | None = None) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar when progress is enabled and there is more than one step.

    The bar appears only once a run has taken over a second, so short calls stay quiet.
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if not progress_enabled(show) or (total is not None and total <= 1):
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False, delay=1.0)
