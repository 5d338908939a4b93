"""Input validation shared by every metric adapter: clear errors, never NaN.

Every metric module takes the same explicit optional keyword arguments in ``_compute``
(:data:`COMMON_COMPUTE_KWARGS`) so ``evaluate.combine`` can forward one set of
arguments to every module; model choice and other options go to the constructor.
:func:`check_inputs` is the one place a call's inputs are validated.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from itertools import chain, repeat
from typing import Any, Mapping, Sequence


# Every metric's `_compute(self, predictions, references, ...)` accepts exactly these optional kwargs.
COMMON_COMPUTE_KWARGS = ("images", "region_features", "batch_size", "show_progress")


def as_list(values: Any, name: str, expected: str) -> list:
    """Any iterable (list, tuple, generator, array, dataset column) as a list; a string, a mapping or a
    non-iterable raises ``ValueError`` saying what ``name`` should be."""
    if type(values) in (list, tuple):  # most calls: skip the slower checks against abstract classes
        return list(values)
    if isinstance(values, (str, bytes, Mapping)):
        raise ValueError(f"{name} must be {expected}, not a single {type(values).__name__}")
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{name} must be {expected}, got {type(values).__name__}") from None


def validate_predictions(predictions: Any) -> list[str]:
    """A list of caption strings from any iterable; ``None`` or non-strings raise ``ValueError`` naming the item."""
    if predictions is None:
        raise ValueError("predictions is None: pass a list of caption strings")
    if isinstance(predictions, str):
        raise ValueError("predictions must be a list of strings, not a single string")
    predictions = as_list(predictions, "predictions", "a list of caption strings")
    if not predictions:
        raise ValueError("predictions is empty: pass at least one caption")
    if not set(map(type, predictions)) <= {str}:  # a subclass of str passes, item by item
        for i, caption in enumerate(predictions):
            if not isinstance(caption, str):
                raise ValueError(f"predictions[{i}] is {type(caption).__name__}, expected str")
    return predictions


def normalize_references(references: Any, num_predictions: int, *, allow_empty_strings: bool = True) -> list[list[str]]:
    """References as one list of strings per prediction, from any iterables.

    A plain string becomes a one-element list. An empty list, a length mismatch, ``None``, a
    reference that is not a string (an int, a list nested too deep) raise ``ValueError`` naming
    the item. With ``allow_empty_strings=False`` a reference list holding only blank strings is
    rejected too.

    >>> normalize_references(["a dog", ("a cat", "the cat")], 2)
    [['a dog'], ['a cat', 'the cat']]
    >>> normalize_references([[["a dog runs"]]], 1)
    Traceback (most recent call last):
    ValueError: references[0][0] is list, expected str
    """
    if references is None:
        raise ValueError("references is None: pass one reference (or a list of references) per prediction")
    references = as_list(references, "references", "one reference, or a list of references, per prediction")
    if len(references) != num_predictions:
        raise ValueError(f"got {num_predictions} predictions but {len(references)} reference lists; they must match")
    if allow_empty_strings and set(map(type, references)) <= {list, tuple}:
        # Most calls: lists of strings, checked at C speed; anything else is looked at item by item below.
        normalized = list(map(list, references))
        if all(normalized) and set(map(type, chain.from_iterable(normalized))) <= {str}:
            return normalized
    normalized = []
    for i, refs in enumerate(references):
        if refs is None:
            raise ValueError(f"references[{i}] is empty: every prediction needs at least one reference")
        refs = [refs] if isinstance(refs, str) else as_list(refs, f"references[{i}]", "a string or a list of strings")
        if not refs:
            raise ValueError(f"references[{i}] is empty: every prediction needs at least one reference")
        if not all(map(isinstance, refs, repeat(str))):
            j, ref = next((j, ref) for j, ref in enumerate(refs) if not isinstance(ref, str))
            raise ValueError(f"references[{i}][{j}] is {type(ref).__name__}, expected str")
        if not allow_empty_strings and not any(r.strip() for r in refs):
            raise ValueError(f"references[{i}] holds only empty strings")
        normalized.append(refs)
    return normalized


def per_prediction(name: str, values: Any, num_predictions: int) -> list | None:
    """An optional per-prediction input (images, features) as a list of one entry per prediction."""
    if values is None:
        return None
    values = as_list(values, name, f"a list of {name}, one per prediction")
    if len(values) != num_predictions:
        raise ValueError(f"got {num_predictions} predictions but {len(values)} {name}; they must match")
    return values


def check_batch_size(batch_size: Any) -> int | None:
    """``None`` (the scorer's default) or a positive int; anything else (0, -3, 2.5, ``True``) raises ``ValueError``."""
    return int_option("batch_size", batch_size, optional=True)


def check_inputs(scorer: Any, predictions: Any, references: Any = None, *, images: Any = None,
                 region_features: Any = None, batch_size: Any = None) -> dict[str, Any]:
    """The one validation of a call: the inputs as ``scorer.score`` takes them.

    Predictions become a list of strings; references one list of strings per prediction when the
    scorer needs them, or takes optional ones and the call gives some (an empty list for every prediction
    gives none), ``None`` otherwise; images and region features one per prediction. Any
    iterable is accepted where a list is expected.
    """
    predictions = validate_predictions(predictions)
    if not scorer.blank_predictions_allowed:
        blank = next((i for i, caption in enumerate(predictions) if not caption.strip()), None)
        if blank is not None:
            raise ValueError(f"predictions[{blank}] is empty: {scorer.title} does not score a caption without words")
    if scorer.references_optional and references is not None:
        references = as_list(references, "references", "one reference, or a list of references, per prediction")
        # An empty list for every prediction is how an evaluate module holds "no references".
        if all(isinstance(refs, (list, tuple)) and not refs for refs in references):
            references = None
    if scorer.needs_references or (scorer.references_optional and references is not None):
        references = normalize_references(references, len(predictions),
                                          allow_empty_strings=scorer.blank_references_allowed)
    else:
        references = None
    return {"predictions": predictions, "references": references, "images": per_prediction("images", images, len(predictions)),
            "region_features": per_prediction("region_features", region_features, len(predictions)),
            "batch_size": check_batch_size(batch_size)}


# --------------------------------------------------------------------------- constructor options
# Scorers check their options in ``__init__`` with these, so a bad value fails at ``evaluate.load`` with a
# message that names the option and its valid values.


def int_option(name: str, value: Any, *, minimum: int = 1, optional: bool = False) -> int | None:
    """An int of at least ``minimum`` (``None`` too when ``optional``); ``True``, ``2.5`` and ``"8"`` are refused.

    >>> int_option("layer", 8)
    8
    >>> int_option("layer", "8", minimum=0)
    Traceback (most recent call last):
    ValueError: layer must be an integer >= 0, got '8' (str)
    """
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}{' or None' if optional else ''}, got {value!r} ({type(value).__name__})")
    return int(value)


def number_option(name: str, value: Any, *, low: float, high: float | None = None, low_open: bool = False,
                  high_open: bool = False) -> float:
    """A real number (not a bool, a string or NaN) in the range given, as a float.

    >>> number_option("beta", 0.4, low=0.0, high=1.0, high_open=True)
    0.4
    >>> number_option("beta", 2, low=0.0, high=1.0, high_open=True)
    Traceback (most recent call last):
    ValueError: beta must be a number in [0.0, 1.0), got 2 (int)
    """
    upper = "∞)" if high is None else f"{high}{')' if high_open else ']'}"
    span = f"{'(' if low_open else '['}{low}, {upper}"
    number = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)  # numpy's too
    if not number or value < low or (low_open and value == low) or (high is not None and (value > high or (high_open and value == high))):
        raise ValueError(f"{name} must be a number in {span}, got {value!r} ({type(value).__name__})")
    return float(value)


def bool_option(name: str, value: Any) -> bool:
    """``True`` or ``False`` (numpy bools too); ``"no"``, ``0`` and ``None`` are refused rather than guessed.

    >>> bool_option("lowercase", "no")
    Traceback (most recent call last):
    ValueError: lowercase must be True or False, got 'no' (str)
    """
    numpy = sys.modules.get("numpy")  # a numpy bool exists only once numpy is imported: a text-only call never imports it
    if not (isinstance(value, bool) or numpy is not None and isinstance(value, numpy.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def choice_option(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """One of ``choices`` (compared by type too, so ``True`` is not ``1``).

    >>> choice_option("order", True, (1, 2, 3, 4))
    Traceback (most recent call last):
    ValueError: order must be one of (1, 2, 3, 4), got True (bool)
    """
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r} ({type(value).__name__})")
    return value


def sentences_option(name: str, value: Any, *, optional: bool = False) -> list[str] | None:
    """A non-empty list (or other iterable, not a string) of strings, e.g. IDF documents.

    >>> sentences_option("idf_sentences", "a dog")
    Traceback (most recent call last):
    ValueError: idf_sentences must be a non-empty list of strings, not a single string
    """
    if value is None and optional:
        return None
    if isinstance(value, str):
        raise ValueError(f"{name} must be a non-empty list of strings, not a single string")
    try:
        sentences = list(value)
    except TypeError:
        raise ValueError(f"{name} must be a non-empty list of strings, got {type(value).__name__}") from None
    if not sentences:
        raise ValueError(f"{name} is empty: pass at least one sentence")
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            raise ValueError(f"{name}[{i}] is {type(sentence).__name__}, expected str")
    return sentences


def device_option(name: str, value: Any) -> Any:
    """``None`` (CUDA when available) or a device this machine has: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``.

    >>> device_option("device", "gpu")
    Traceback (most recent call last):
    ValueError: device must be None, 'cpu', 'cuda' or 'cuda:N' (a torch device), got 'gpu'
    """
    import torch

    if value is None:
        return None
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"{name} must be None, 'cpu', 'cuda' or 'cuda:N' (a torch device), got {value!r}") from None
    if device.type == "cuda":
        available = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= available:
            raise ValueError(f"{name}={value!r}: this machine has {available} CUDA device(s)"
                             + (f" (cuda:0 to cuda:{available - 1})" if available else "; use device='cpu'"))
    return value


def path_option(name: str, value: Any) -> str:
    """A model given by hub id, URL or local path, as a string; a path (absolute, ``~``, ``./``, ``../``) that does
    not exist, or a plain ``http://`` URL to another machine, fails now instead of when the model first loads.

    >>> path_option("model_name", "bert-base-uncased")
    'bert-base-uncased'
    """
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise ValueError(f"{name} must be a hub id, URL or local path, got {value!r} ({type(value).__name__})")
    text = os.fspath(value)
    from .checkpoints import check_url, is_url

    if is_url(text):
        check_url(text)
    elif text.startswith(("/", "~", "./", "../")) and not os.path.exists(os.path.expanduser(text)):
        from .models import ModelUnavailableError

        raise ModelUnavailableError(f"{name}={text!r}: no such file or folder")
    return text
