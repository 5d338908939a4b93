"""Input validation shared by every metric adapter: clear errors, never NaN.

Every metric module takes the same explicit optional keyword arguments in ``_compute``
(:data:`COMMON_COMPUTE_KWARGS`) so ``evaluate.combine`` can forward one set of
arguments to every module; model choice and other options go to the constructor.
:func:`check_inputs` is the one place a call's inputs are validated.
"""

from __future__ import annotations

from typing import Any, Sequence

# Every metric's `_compute(self, predictions, references, ...)` accepts exactly these optional kwargs.
COMMON_COMPUTE_KWARGS = ("images", "region_features", "batch_size", "show_progress")


def validate_predictions(predictions: Any) -> list[str]:
    """A list of caption strings; ``None`` or non-strings raise ``ValueError`` naming the item."""
    if predictions is None:
        raise ValueError("predictions is None: pass a list of caption strings")
    if isinstance(predictions, str):
        raise ValueError("predictions must be a list of strings, not a single string")
    predictions = list(predictions)
    if not predictions:
        raise ValueError("predictions is empty: pass at least one caption")
    for i, caption in enumerate(predictions):
        if not isinstance(caption, str):
            raise ValueError(f"predictions[{i}] is {type(caption).__name__}, expected str")
    return predictions


def normalize_references(references: Any, num_predictions: int, *, allow_empty_strings: bool = True) -> list[list[str]]:
    """References as one list of strings per prediction.

    A plain string becomes a one-element list. An empty list, a length mismatch,
    ``None`` or a non-string raise ``ValueError``. With ``allow_empty_strings=False``
    a reference list holding only blank strings is rejected too.
    """
    if references is None:
        raise ValueError("references is None: pass one reference (or a list of references) per prediction")
    references = list(references)
    if len(references) != num_predictions:
        raise ValueError(f"got {num_predictions} predictions but {len(references)} reference lists; they must match")
    normalized = []
    for i, refs in enumerate(references):
        refs = [refs] if isinstance(refs, str) else refs
        if refs is None or len(refs) == 0:
            raise ValueError(f"references[{i}] is empty: every prediction needs at least one reference")
        for j, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise ValueError(f"references[{i}][{j}] is {type(ref).__name__}, expected str")
        if not allow_empty_strings and not any(r.strip() for r in refs):
            raise ValueError(f"references[{i}] holds only empty strings")
        normalized.append(list(refs))
    return normalized


def check_same_length(name: str, values: Sequence | None, num_predictions: int) -> None:
    """Raise if an optional per-prediction input (images, features) has the wrong length."""
    if values is not None and len(values) != num_predictions:
        raise ValueError(f"got {num_predictions} predictions but {len(values)} {name}; they must match")


def check_batch_size(batch_size: Any) -> int | None:
    """``None`` (the scorer's default) or a positive int; anything else raises ``ValueError``."""
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    return batch_size


def check_inputs(scorer: Any, predictions: Any, references: Any = None, *, images: Any = None,
                 region_features: Any = None, batch_size: Any = None) -> dict[str, Any]:
    """The one validation of a call: the inputs as ``scorer.score`` takes them.

    Predictions become a list of strings; references one list of strings per prediction when the
    scorer needs them (``None`` otherwise); images and region features one per prediction.
    """
    predictions = validate_predictions(predictions)
    if scorer.needs_references:
        references = normalize_references(references, len(predictions),
                                          allow_empty_strings=scorer.blank_references_allowed)
    else:
        references = None
    check_same_length("images", images, len(predictions))
    check_same_length("region_features", region_features, len(predictions))
    return {"predictions": predictions, "references": references, "images": images, "region_features": region_features,
            "batch_size": check_batch_size(batch_size)}
