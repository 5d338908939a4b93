"""The one check every model scorer runs on its models' outputs: a NaN or infinite value (a NaN weight in the
checkpoint, region features so large they overflow) is refused, naming the caption and the model, never
clamped into a score.

>>> import numpy as np
>>> require_finite(np.ones((2, 3)), items=["a dog", "a cat"], what="hidden states", model="tiny-bert")
>>> require_finite(np.array([[1.0], [np.nan]]), items=["a dog", "a cat"], what="hidden states", model="tiny-bert")
Traceback (most recent call last):
capeval.finite.NonFiniteError: the hidden states of 'a cat' from tiny-bert hold NaN or infinite values (a non-finite weight in the checkpoint, or input features too large for it); nothing was scored

Normalising is checked too: a zero vector (zero weights or projections, integer weights cast to 0) has no direction,
and dividing by its norm would give NaN.

>>> unit_rows(np.array([[3.0, 4.0]]), items=["a dog"], what="CLIP features", model="tiny-clip").tolist()
[[0.6, 0.8]]
>>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]), items=["a dog", "a cat"], what="CLIP features", model="tiny-clip")
Traceback (most recent call last):
capeval.finite.ZeroNormError: the CLIP features of 'a cat' from tiny-clip have an L2 norm of 0.0 and cannot be normalised (zero weights or projections in the checkpoint, integer weights cast to 0, or values too large for their float type); nothing was scored
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch


class NonFiniteError(ValueError):
    """A model gave a NaN or infinite value for an input: its scores would be meaningless."""


class ZeroNormError(NonFiniteError):
    """A model gave a vector that cannot be normalised (norm 0, or beyond its float type): normalising it would give
    NaN (or zeros)."""


def finite_rows(values: Any) -> list[bool]:
    """Whether each row (first axis) of a tensor or array, or each element of a list of them, is all finite."""
    if isinstance(values, torch.Tensor):
        return [bool(flag) for flag in torch.isfinite(values.reshape(len(values), -1)).all(dim=1).tolist()]
    if isinstance(values, np.ndarray):
        return [bool(np.isfinite(row).all()) for row in values.reshape(len(values), -1)]
    return [finite_rows(value[None] if isinstance(value, (torch.Tensor, np.ndarray)) else np.array([value], dtype=np.float64))[0]
            for value in values]


def _item(items: Sequence[str] | Callable[[int], str], row: int) -> str:
    return items(row) if callable(items) else items[row]


def require_finite(values: Any, *, items: Sequence[str] | Callable[[int], str], what: str, model: str) -> None:
    """:class:`NonFiniteError` naming the first of ``items`` whose row of ``values`` is not finite; ``values`` runs
    over ``items`` on its first axis (a tensor or array) or is a list with one tensor, array or float per item.
    ``items`` may be a function of the row (a name built only when it is needed)."""
    bad = next((row for row, finite in enumerate(finite_rows(values)) if not finite), None)
    if bad is not None:
        raise NonFiniteError(f"the {what} of {_item(items, bad)!r} from {model} hold NaN or infinite values (a non-finite weight in "
                             "the checkpoint, or input features too large for it); nothing was scored")


def unit_rows(values: Any, *, items: Sequence[str] | Callable[[int], str], what: str, model: str) -> Any:
    """``values`` (a tensor or an array, its own dtype kept) with each vector along the last axis divided by its L2
    norm; :class:`ZeroNormError` naming the first of ``items`` (one per entry of the first axis, or a function of
    it) that holds a vector whose norm is 0 or not finite, which no score could be computed from."""
    if isinstance(values, torch.Tensor):
        norms = values.norm(dim=-1, keepdim=True)
    else:
        with np.errstate(over="ignore"):  # an overflowing norm is reported below
            norms = np.sqrt(np.sum(values ** 2, axis=-1, keepdims=True))
    if not bool(((norms > 0) & (norms < float("inf"))).all()):
        # The error path only: the first row with a bad norm, found in Python.
        row, norm = next((row, norm) for row, row_norms in enumerate(norms.reshape(len(values), -1).tolist())
                         for norm in row_norms if not 0 < norm < float("inf"))
        raise ZeroNormError(f"the {what} of {_item(items, row)!r} from {model} have an L2 norm of {norm} and cannot be "
                            "normalised (zero weights or projections in the checkpoint, integer weights cast to 0, or "
                            "values too large for their float type); nothing was scored")
    return values / norms
