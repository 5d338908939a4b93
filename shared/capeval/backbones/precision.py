"""Reduced-precision forward passes for the model scorers: ``torch.autocast`` around a forward pass that the
released code ran in float32, with the outputs brought back to float32 before any score is computed."""

from __future__ import annotations

import contextlib
from typing import ContextManager

import torch

#: The precisions a scorer's ``dtype`` option accepts; float32 is the released code's arithmetic.
DTYPES = ("float32", "bfloat16", "float16")


def check_dtype(dtype: str) -> str:
    """``dtype`` if it is one of :data:`DTYPES`, else ``ValueError`` naming them.

    >>> check_dtype("bfloat16")
    'bfloat16'
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return dtype


def autocast_forward(device: torch.device, dtype: str, *, cache_casts: bool = True) -> ContextManager[object]:
    """A context in which matrix products run in ``dtype`` on ``device`` (``torch.autocast``); LayerNorm, softmax
    and the other precision-sensitive operations stay in float32, as autocast keeps them. ``"float32"`` changes
    nothing. ``cache_casts=False``: every use of a weight casts it again (what a CUDA graph capture needs, since the
    cast copies autocast keeps are freed when the context ends).

    >>> with autocast_forward(torch.device("cpu"), "bfloat16"):
    ...     torch.nn.Linear(2, 2)(torch.ones(1, 2)).dtype
    torch.bfloat16
    >>> autocast_forward(torch.device("cpu"), "float64")
    Traceback (most recent call last):
    ...
    ValueError: dtype must be one of float32, bfloat16, float16, got 'float64'
    """
    if check_dtype(dtype) == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=getattr(torch, dtype), cache_enabled=cache_casts)


def reduced_precision(dtype: str) -> dict[str, str]:
    """``{"dtype": dtype}`` for a scorer's options (and so its hashcode) when the forward pass is not float32; float32
    is the released arithmetic, and results computed in it keep the hashcodes they had before the option existed.

    >>> reduced_precision("bfloat16"), reduced_precision("float32")
    ({'dtype': 'bfloat16'}, {})
    """
    return {} if dtype == "float32" else {"dtype": dtype}
