"""Whether each metric runs here, and what it lacks: the one check behind ``capeval doctor``, ``capeval score``'s and
``capeval.evaluate``'s default sets and the suite Space.

A metric runs here when its extras are installed and everything its scorer declares it needs (:mod:`capeval.needs`)
is present. One that does not is listed with everything it lacks at once and the one command that provides it.

>>> row = next(row for row in doctor() if row.metric == "bleu")
>>> row.runs, row.lacks, row.fix
(True, (), '')
"""

from __future__ import annotations

import argparse
import importlib
import warnings
from dataclasses import dataclass
from typing import Iterable

from .needs import Need
from .registry import METRICS, MetricEntry, MissingExtraError, declared_extras, left_out


@dataclass(frozen=True)
class Readiness:
    """One metric on this machine: whether it runs, what it lacks and the command that provides it."""

    metric: str
    runs: bool
    lacks: tuple[str, ...] = ()
    fix: str = ""


def declared_needs(metric: MetricEntry) -> tuple[Need, ...]:
    """What ``metric``'s scorer declares it needs (read from its class, imported even where an extra is missing when
    the module allows; ``()`` when it cannot be imported)."""
    module, _, name = metric.scorer.partition(":")
    try:
        return tuple(getattr(importlib.import_module(module), name).needs)
    except (ImportError, AttributeError):
        return ()


def lacking(metric: MetricEntry) -> tuple[tuple[Need, ...], tuple[str, ...]]:
    """What ``metric`` lacks here: its needs that are not present, and its extras that are not installed (as
    :meth:`~capeval.registry.MetricEntry.scorer_class` finds them: the one check of extras).

    A need whose check imports an optional package that is not installed (NLTK for NLTK's data, pycocoevalcap for
    METEOR's table) is absent, and the metric lacks its extras too: this one guard, not one in each check."""
    try:
        metric.scorer_class()
        missing_extras: tuple[str, ...] = ()
    except MissingExtraError as error:
        missing_extras = error.extras
    needs = []
    for need in declared_needs(metric):
        try:
            if need.present():
                continue
        except ImportError:
            missing_extras = missing_extras or declared_extras(*metric.scorer.split(":", 1))
        needs.append(need)
    return tuple(needs), missing_extras


def fix_command(metric: str, needs: Iterable[Need], extras: Iterable[str]) -> str:
    """The one command that provides what a metric lacks.

    >>> from capeval.needs import JavaRuntime
    >>> from capeval.scoring.spice import CoreNlp
    >>> fix_command("spice", [JavaRuntime(), CoreNlp("https://example.org/corenlp.zip")], ["spice"])
    "pip install 'capeval[spice]' && apt-get install default-jre-headless && capeval download spice"
    """
    needs, extras = list(needs), sorted(extras)
    steps = [f"pip install 'capeval[{','.join(extras)}]'"] if extras else []
    steps += list(dict.fromkeys(need.fix(metric) for need in needs if not need.fetchable))
    if any(need.fetchable for need in needs):
        steps.append(f"capeval download {metric}")
    return " && ".join(steps)


def readiness(metric: MetricEntry) -> Readiness:
    """``metric`` on this machine (:class:`Readiness`)."""
    needs, extras = lacking(metric)
    lacks = tuple(f"the {extra} extra" for extra in extras) + tuple(need.title for need in needs)
    return Readiness(metric.name, not lacks, lacks, fix_command(metric.name, needs, extras))


def doctor() -> list[Readiness]:
    """Every registered metric, whether it runs here and, for each that does not, everything it lacks with the one
    command that provides it (``capeval doctor`` prints this table); a broken metric is left out with one line saying
    why (:func:`~capeval.registry.left_out`)."""
    return [readiness(metric) for metric in METRICS.values() if not left_out(metric)]


def doctor_table(rows: list[Readiness]) -> str:
    """The doctor's rows as a Markdown table."""
    from .reports.tables import markdown_table

    return markdown_table(["metric", "runs here", "lacks", "fix"],
                          [[row.metric, "yes" if row.runs else "no", "; ".join(row.lacks), row.fix and f"`{row.fix}`"]
                           for row in rows])


def not_run_line(ran: Iterable[str]) -> str:
    """One line naming every registered metric that is not among ``ran`` (registry names), what it lacks and the
    command that provides it; ``""`` when every one ran."""
    ran = set(ran)
    reasons = [f"{row.metric} (lacks {', '.join(row.lacks)}: {row.fix})" if row.lacks else f"{row.metric} (runs here: name it to run it)"
               for row in (readiness(metric) for name, metric in METRICS.items() if name not in ran and not left_out(metric))]
    if not reasons:
        return ""
    return f"Not run here: {'; '.join(reasons)}."


#: The lines already shown (each once per process).
_SHOWN: dict = {}


class NotRunHereWarning(UserWarning):
    """Metrics a default set leaves out on this machine, or inputs no metric of a call reads: one line."""


def warn_once(message: str) -> None:
    """``message`` as a one-line :class:`NotRunHereWarning` (no source line: where capeval noticed says nothing)."""
    warnings.warn_explicit(message, NotRunHereWarning, "capeval", 0, registry=_SHOWN)


def unused_inputs_line(runs, given: list[str]) -> str:
    """One line naming the image inputs a call gives (``given``: their names, as the caller knows them) that none of
    its metrics reads (``""`` when some metric reads them, or none is given).

    >>> unused_inputs_line([], ["images"])
    'images given, but no metric of this call reads images: unused (add an image metric, e.g. clip_score)'
    """
    if not given or any(run.scorer.needs_images for run in runs):
        return ""
    return f"{' and '.join(given)} given, but no metric of this call reads images: unused (add an image metric, e.g. clip_score)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``capeval doctor``: which metrics run here, and what the others lack."""
    parser.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    rows = doctor()
    print(doctor_table(rows))
    print(f"\n{sum(row.runs for row in rows)} of {len(rows)} metrics run here.")
    return 0

