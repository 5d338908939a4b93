"""The one check every model scorer runs on its models' outputs: a NaN or infinite value (a NaN weight in the
checkpoint, region features so large they overflow) is refused, naming the caption and the model, never
clamped into a score.

>>> import numpy as np
>>> require_finite(np.ones((2, 3)), items=["a dog", "a cat"], what="hidden states", model="tiny-bert")
>>> require_finite(np.array([[1.0], [np.nan]]), items=["a dog", "a cat"], what="hidden states", model="tiny-bert")
Traceback (most recent call last):
capeval.finite.NonFiniteError: the hidden states of 'a cat' from tiny-bert hold NaN or infinite values (a non-finite weight in the checkpoint, or input features too large for it); nothing was scored
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch


class NonFiniteError(ValueError):
    """A model gave a NaN or infinite value for an input: its scores would be meaningless."""


def finite_rows(values: Any) -> list[bool]:
    """Whether each row (first axis) of a tensor or array, or each element of a list of them, is all finite."""
    if isinstance(values, torch.Tensor):
        return [bool(flag) for flag in torch.isfinite(values.reshape(len(values), -1)).all(dim=1).tolist()]
    if isinstance(values, np.ndarray):
        return [bool(np.isfinite(row).all()) for row in values.reshape(len(values), -1)]
    return [finite_rows(value[None] if isinstance(value, (torch.Tensor, np.ndarray)) else np.array([value], dtype=np.float64))[0]
            for value in values]


def require_finite(values: Any, *, items: Sequence[str] | Callable[[int], str], what: str, model: str) -> None:
    """:class:`NonFiniteError` naming the first of ``items`` whose row of ``values`` is not finite; ``values`` runs
    over ``items`` on its first axis (a tensor or array) or is a list with one tensor, array or float per item.
    ``items`` may be a function of the row (a name built only when it is needed)."""
    bad = next((row for row, finite in enumerate(finite_rows(values)) if not finite), None)
    if bad is not None:
        item = items(bad) if callable(items) else items[bad]
        raise NonFiniteError(f"the {what} of {item!r} from {model} hold NaN or infinite values (a non-finite weight in "
                             "the checkpoint, or input features too large for it); nothing was scored")
