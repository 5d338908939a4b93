"""The one timer the benchmark scripts share: wall seconds of a call, with CUDA's queued work finished first and last,
so a GPU call is timed to its end, not to the return of its last kernel launch."""

from __future__ import annotations

import sys
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def synchronize() -> None:
    """Wait for queued CUDA work, where torch is imported and sees a GPU (importing torch here would slow text-only runs)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(function: Callable[[], T]) -> tuple[T, float]:
    """``(function(), seconds)``."""
    synchronize()
    start = time.perf_counter()
    value = function()
    synchronize()
    return value, time.perf_counter() - start
