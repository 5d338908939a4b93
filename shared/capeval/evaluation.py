"""Every metric in one call: :func:`evaluate` scores captions with many metrics and returns one result.

It is what ``capeval score``, the Trainer hook and the Spaces use; it scores through the scorers directly,
without importing ``evaluate``, and each metric's values equal its evaluate module's ``compute``.

>>> result = evaluate(["a dog runs on the grass", "a cat sleeps"],
...                   [["a dog running on grass", "the dog runs"], ["a cat is sleeping", "a kitten naps"]],
...                   metrics=["bleu", "rouge", "cider"])
>>> {key: round(value, 4) for key, value in result.corpus.items()}
{'bleu': 0.0, 'bleu_1': 0.8889, 'bleu_2': 0.6172, 'bleu_3': 0.0, 'bleu_4': 0.0, 'rouge_l': 0.6482, 'cider': 1.6562}
>>> list(result.per_caption.columns)
['bleu', 'rouge_l', 'cider']
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .inputs import validate_predictions
from .scoring.protocol import CaptionScorer, Scores, score_checked
from .text.call_cache import shared_text_work

#: What ``metrics=`` may name besides a list of specs.
METRIC_SETS = ("offline", "all")
#: An option a run was not given (so that ``None`` given and nothing given differ).
MISSING = object()


@dataclass
class MetricRun:
    """One metric of a call: how it is shown (``label``), its scorer, a note on stand-ins and IDF."""

    label: str
    scorer: CaptionScorer
    note: str = ""


def slug(label: str) -> str:
    """A label as a key: lower case, runs of other characters as ``_``.

    >>> slug("BERT-TBR (unigram)")
    'bert_tbr_unigram'
    """
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


class OwnOptions(dict):
    """A scorer's own options (:meth:`~capeval.scoring.protocol.CaptionScorer.options`), for a run given as a scorer:
    its label shows them only where they tell it apart from another run of its metric."""


def run_options(spec: Any) -> tuple[str, dict]:
    """The metric name and options a run is told apart by: the options as given for a spec, the scorer's own
    (:class:`OwnOptions`) for a scorer or a capeval module."""
    from .registry import spec_options

    scorer = spec if isinstance(spec, CaptionScorer) else getattr(spec, "scorer", None)
    if isinstance(scorer, CaptionScorer):
        return scorer.metric, OwnOptions(scorer.options())
    return spec_options(spec)


def path_tail(value: Any, parts: int) -> Any:
    """An absolute path as its last ``parts`` parts (a label never shows where files live); other values as they are."""
    return "/".join(Path(value).parts[-parts:]) if isinstance(value, str) and Path(value).is_absolute() else value


def shown_value(value: Any, others: Sequence[Any]) -> Any:
    """``value`` as a label shows it: an absolute path as the shortest tail (of two parts or more) that no other
    of ``others`` ends with.

    >>> shown_value("/runs/exp1/ckpt/model", ["/runs/exp1/ckpt/model", "/runs/exp2/ckpt/model"]), shown_value(8, [8, 6])
    ('exp1/ckpt/model', 8)
    """
    parts = 2
    while (any(path_tail(value, parts) == path_tail(other, parts) for other in others if other != value)
           and path_tail(value, parts) != path_tail(value, parts + 1)):  # the whole path: nothing longer to show
        parts += 1
    return path_tail(value, parts)


def run_labels(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The one rule naming the runs of a call on every surface (``capeval.evaluate``, ``capeval score``,
    ``capeval benchmark``, the Trainer hook), for runs given as ``(metric, options)``: a metric that runs once is
    shown with the options it was given (a scorer's :class:`OwnOptions` are not shown); one that runs several
    times with the options its runs differ in, so that every run
    has a distinct readable label (its result keys are made from it, :func:`flat_keys`). Runs that nothing tells
    apart are a ``ValueError`` naming them, never one result in place of two.

    >>> run_labels([("cider", {}), ("cider", {"idf": "flickr8k"}), ("bleu", {"order": 2})])
    ['cider', 'cider(idf=flickr8k)', 'bleu(order=2)']
    >>> run_labels([("bert_tbr", {"model_name": "/runs/exp1/ckpt/model", "layer": 8}),
    ...             ("bert_tbr", {"model_name": "/runs/exp2/ckpt/model", "layer": 8})])
    ['bert_tbr(model_name=exp1/ckpt/model)', 'bert_tbr(model_name=exp2/ckpt/model)']
    >>> run_labels([("rouge", {}), ("rouge", {})])
    Traceback (most recent call last):
    ValueError: rouge is asked for twice with the same options: give its runs different options, or drop one
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for name, options in runs:
        groups.setdefault(name, []).append(options)

    def label(name: str, options: Mapping[str, Any], keys: Sequence[str], group: Sequence[Mapping[str, Any]]) -> str:
        values = {key: shown_value(options[key], [other.get(key) for other in group]) for key in keys if key in options}
        body = ",".join(f"{key}={value}" for key, value in values.items())
        return f"{Path(name).name}({body})" if body else Path(name).name

    labels = []
    for name, options in runs:
        group = groups[name]
        keys = list(dict.fromkeys(key for other in group for key in other))
        # Of a metric that runs several times, only the options its runs differ in (given by some only, or unequal).
        differing = [key for key in keys if len({repr(other.get(key, MISSING)) for other in group}) > 1]
        alone = [] if isinstance(options, OwnOptions) else keys
        labels.append(label(name, options, alone if len(group) == 1 else differing, group))
    for (name, options), shown in zip(runs, labels):
        if labels.count(shown) > 1:
            raise ValueError(f"{label(name, options, list(options), [options])} is asked for twice with the same options: give "
                             "its runs different options, or drop one")
    return labels


def metric_runs(metrics: Any) -> list[MetricRun]:
    """The runs ``metrics`` stands for: ``"offline"`` (every configuration that runs here with nothing to
    download), ``"all"`` (every registered metric with its paper's defaults), one spec, a list of specs (see
    :func:`capeval.registry.resolve`), or a mapping of metric names to their options. Options are checked now; models
    load on first use. Runs are labelled by :func:`run_labels`. The two sets leave out a broken
    metric with one line saying why (:func:`capeval.registry.left_out`).

    >>> [run.label for run in metric_runs({"bleu": {"order": 1}, "cider": None})]
    ['bleu(order=1)', 'cider']
    """
    from .registry import METRICS, build_scorer, left_out, offline_runs, resolve

    if metrics is None:
        raise ValueError(f"metrics is None: name metrics (a list of specs, or names mapped to options) or one of {METRIC_SETS}")
    if isinstance(metrics, str) and metrics == "offline":
        return [MetricRun(run.label, build_scorer(run.metric, options), run.note)
                for run in offline_runs() if (options := run.resolved_options()) is not None]
    if isinstance(metrics, str) and metrics == "all":
        return [MetricRun(METRICS[name].title, build_scorer(name)) for name in METRICS if not left_out(METRICS[name])]
    if isinstance(metrics, Mapping):  # {name: options}: each name once, with its options (None: the defaults)
        specs: list[Any] = [(name, {} if options is None else options) for name, options in metrics.items()]
    elif isinstance(metrics, (str, tuple, CaptionScorer)) or hasattr(metrics, "scorer"):
        specs = [metrics]
    else:
        specs = list(metrics)
    if not specs:
        raise ValueError(f"metrics is empty: name at least one metric, or one of {METRIC_SETS}")
    scorers = [resolve(spec) for spec in specs]  # first: it says what is wrong with a spec
    labels = run_labels([run_options(spec) for spec in specs])
    return [MetricRun(label, scorer) for label, scorer in zip(labels, scorers)]


def qualified(prefix: str, key: str) -> str:
    """``key`` under ``prefix``, without saying the same name twice.

    >>> qualified("vilbertscore", "f1"), qualified("bert_tbr_unigram", "bert_tbr"), qualified("bert_tbr", "bert_tbr")
    ('vilbertscore_f1', 'bert_tbr_unigram', 'bert_tbr')
    """
    return prefix if prefix == key or prefix.startswith(key + "_") else f"{prefix}_{key}"


def flat_keys(runs: Sequence[MetricRun], keys: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    """Per run, ``key -> flat key``: a key reported by one run only stays as it is; one reported by several is
    prefixed with the metric's name, or with the run's label when the same metric runs twice. Two runs' values never
    share a flat key: that is a ``ValueError`` naming both.

    >>> from capeval.scoring.coco import CiderScorer
    >>> flat_keys(metric_runs([CiderScorer(), CiderScorer(idf="flickr8k")]), [["cider"], ["cider"]])
    [{'cider': 'cider'}, {'cider': 'cider_idf_flickr8k'}]
    """
    counts = Counter(key for run_keys in keys for key in run_keys)
    metrics = Counter(run.scorer.metric for run in runs)
    names: list[dict[str, str]] = []
    owner: dict[str, str] = {}
    for run, run_keys in zip(runs, keys):
        prefix = run.scorer.metric if metrics[run.scorer.metric] == 1 else slug(run.label)
        names.append({key: key if counts[key] == 1 else qualified(prefix, key) for key in run_keys})
        for flat in names[-1].values():
            if owner.setdefault(flat, run.label) != run.label:
                raise ValueError(f"{owner[flat]} and {run.label} would both report {flat!r}: give one of them other options")
    return names


@dataclass
class EvaluationResult:
    """The result of :func:`evaluate`.

    ``corpus``: ``{key: float}``, every metric's corpus values (BLEU-1..4 from summed counts, the others the means
    of their columns); ``columns``: ``{key: [value per caption]}``, and :attr:`per_caption` the same as a
    ``pandas.DataFrame`` (one row per caption, one column per output);
    ``provenance``: each metric's hashcode by label; ``scores``: each metric's :class:`~capeval.scoring.protocol.Scores`
    by label (with its ``details``, e.g. QACE's questions); ``notes``: stand-ins and IDF sources by label.

    ``result["bleu_1"]`` is ``result.corpus["bleu_1"]``.
    """

    def __getitem__(self, key: str) -> float:
        return self.corpus[key]


    corpus: dict[str, float]
    columns: dict[str, list[float]]
    provenance: dict[str, str]
    scores: dict[str, Scores] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    #: Each metric's per-caption score column (flat key) by label, and the flat keys of its corpus values.
    primary: dict[str, str] = field(default_factory=dict)
    corpus_keys: dict[str, list[str]] = field(default_factory=dict)

    @property
    def per_caption(self):
        """The per-caption values as a ``pandas.DataFrame``: one row per caption, one column per output (``columns``
        holds them as lists without pandas)."""
        try:
            import pandas as pd
        except ModuleNotFoundError:
            raise ModuleNotFoundError("EvaluationResult.per_caption is a pandas DataFrame: pip install pandas "
                                      "(EvaluationResult.columns holds the same values as lists)", name="pandas") from None

        return pd.DataFrame(self.columns)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: corpus values, per-caption columns, provenance and notes."""
        return {"corpus": self.corpus, "per_caption": self.columns, "provenance": self.provenance, "notes": self.notes}

    def to_json(self, **dumps: Any) -> str:
        """:meth:`to_dict` as JSON (``dumps`` go to :func:`json.dumps`, e.g. ``indent=1``)."""
        return json.dumps(self.to_dict(), **dumps)

    def to_markdown(self, digits: int = 4) -> str:
        """The corpus values as a Markdown table.

        >>> print(evaluate(["a dog"], [["a dog runs"]], metrics=["rouge"]).to_markdown())
        | metric | value |
        |---|---|
        | rouge_l | 0.7722 |
        """
        from .reports.tables import markdown_table

        return markdown_table(["metric", "value"], [[key, f"{value:.{digits}f}"] for key, value in self.corpus.items()])


def evaluate(predictions: Sequence[str], references: Sequence[Sequence[str]] | Sequence[str] | None = None, *,
             images: Sequence[Any] | None = None, region_features: Sequence[Any] | None = None, metrics: Any = "offline",
             batch_size: int | None = None, show_progress: bool | None = None) -> EvaluationResult:
    """Score ``predictions`` with every metric in ``metrics`` and return one :class:`EvaluationResult`.

    ``references``: one reference or list of references per prediction (for the metrics that need them);
    ``images`` / ``region_features``: one per prediction, for image metrics. ``metrics``: ``"offline"`` (default:
    every configuration that runs here with nothing to download, stand-ins labelled in ``notes``), ``"all"`` (every
    registered metric with its paper's models), or a list of specs: names, ``"name:key=value,..."`` strings,
    ``(name, options)`` pairs, scorers, capeval evaluate modules (or a mapping of names to options). Each run is keyed by
    its label (:func:`run_labels`: a metric given twice is told apart by the options its runs differ in).
    ``batch_size`` and ``show_progress`` go to every model metric. A metric that cannot score raises, naming the metric.

    >>> result = evaluate(["a man rides a horse"], [["a man riding a horse", "a person on a horse"]],
    ...                   metrics=["bleu:order=1", ("cider", {"idf": "flickr8k"})])
    >>> round(result.corpus["bleu"], 4), round(result.corpus["cider"], 4), result.per_caption.shape
    (0.8, 3.2465, (1, 2))
    """
    predictions = validate_predictions(predictions)
    return evaluate_runs(metric_runs(metrics), predictions, references, images=images, region_features=region_features,
                         batch_size=batch_size, show_progress=show_progress)


def dry_run(predictions: Sequence[str], references: Sequence[Sequence[str]] | Sequence[str] | None = None, *,
            images: Sequence[Any] | None = None, metrics: Any) -> list:
    """What :func:`evaluate` would send to judge servers for these inputs, sending nothing: one
    :class:`capeval.judges.RequestPlan` (requests, answers already cached, estimated tokens) per judge model of each judge
    metric among ``metrics``; the other metrics send nothing and are left out.

    >>> [plan.requests for plan in dry_run(["a dog"], [["a dog runs"]], metrics=["bleu", "clair:base_url=http://127.0.0.1:8000/v1"])]
    [1]
    """
    from .inputs import check_inputs
    from .scoring.judge import JudgeScorer

    plans = []
    for run in metric_runs(metrics):
        if isinstance(run.scorer, JudgeScorer):
            inputs = check_inputs(run.scorer, predictions, references, images=images)
            plans.extend(run.scorer.plan(inputs["predictions"], inputs["references"], images=inputs["images"]))
    return plans


def scoring_order(runs: Sequence[MetricRun]) -> list[int]:
    """The order to score ``runs`` in: the scorers that start a slow process in the background (METEOR's JVM)
    start it now and are scored last. A start that fails is left for its scoring to report."""
    slow = []
    for index, run in enumerate(runs):
        if start := getattr(run.scorer, "start_in_background", None):
            with contextlib.suppress(RuntimeError, ImportError, OSError):
                start()
            slow.append(index)
    return [index for index in range(len(runs)) if index not in slow] + slow


def evaluate_runs(runs: Sequence[MetricRun], predictions: list[str], references: Any = None, *, images: Any = None,
                  region_features: Any = None, batch_size: int | None = None, show_progress: bool | None = None,
                  score: Callable[..., Scores] = score_checked) -> EvaluationResult:
    """:func:`evaluate` over runs already built; ``score`` scores one run (e.g. on Ray: ``capeval score --engine ray``)."""
    from .registry import idf_note

    scores_of: dict[int, Scores] = {}
    with shared_text_work():  # the text metrics tokenize the references and count their n-grams once
        for index in scoring_order(runs):
            run = runs[index]
            visual = {"images": images, "region_features": region_features} if run.scorer.needs_images else {}
            try:
                scores_of[index] = score(run.scorer, predictions, references, batch_size=batch_size,
                                         show_progress=show_progress, **visual)
            except ValueError as error:
                raise ValueError(f"{run.label}: {error}") from None
            run.note = "; ".join(part for part in (run.note, idf_note(run.scorer, len(predictions))) if part)
    all_scores = [scores_of[index] for index in range(len(runs))]
    corpus_names = flat_keys(runs, [list(scores.corpus) for scores in all_scores])
    column_names = flat_keys(runs, [list(scores) for scores in all_scores])
    corpus = {names[key]: float(value) for names, scores in zip(corpus_names, all_scores) for key, value in scores.corpus.items()}
    columns = {names[key]: values for names, scores in zip(column_names, all_scores) for key, values in scores.items()}
    labels = [run.label for run in runs]
    return EvaluationResult(corpus, columns, {label: run.scorer.hashcode(scores) for label, run, scores in zip(labels, runs, all_scores)},
                            dict(zip(labels, all_scores)), {run.label: run.note for run in runs if run.note},
                            {label: names[run.scorer.primary] for label, run, names in zip(labels, runs, column_names)},
                            {label: [names[key] for key in scores.corpus] for label, names, scores in zip(labels, corpus_names, all_scores)})
