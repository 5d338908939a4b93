"""The meta-evaluation harness: score a benchmark's captions with a metric, correlate with the humans.

A metric is an ``evaluate`` module (its ``compute`` must return per-caption scores under
``score_key``, ``"scores"`` in capeval) or a callable ``f(predictions, references, images=None)``
returning a list of scores (or such a dict). The metric is called **once per benchmark** on all its
items, so corpus-level statistics (CIDEr-D's IDF, BERT-TBR's IDF) come from the whole benchmark.

A metric needs references unless its features lack ``references`` (evaluate modules) or it has
``needs_references = False``; it needs images when its features hold ``images`` or it has
``needs_images = True``. Benchmarks without what a metric needs are skipped with a message. Where a protocol
scores splits apart (LongCap-Arena's six, FOIL's reference settings), the metric is called once per split.
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Callable

import numpy as np

from capeval.benchmarks.rowsets import Benchmark
from capeval.benchmarks.rowsets import CorrelationRows
from capeval.benchmarks.rowsets import Items
from capeval.benchmarks.rowsets import PairRows
from capeval.benchmarks.rowsets import prepare
from capeval.benchmarks.rowsets import with_data
from capeval.benchmarks.stats import TIE_RULES
from capeval.benchmarks.stats import UndefinedCorrelation
from capeval.benchmarks.stats import estimate
from capeval.benchmarks.stats import kendall_both
from capeval.benchmarks.stats import pair_outcomes
from capeval.reports import tables
from capeval.vision.images import image_paths
from capeval.vision.regions import feature_paths

@dataclass
class ScoringMetric:
    """A metric as the harness calls it."""

    name: str
    #: ``score(predictions, references, images, region_features)`` → (per-caption scores, hashcode).
    score: Callable[[list[str], list[list[str] | None], list[str] | None, list[str] | None], tuple[np.ndarray, str]]
    needs_references: bool = True
    needs_images: bool = False


def feature_names(module) -> set[str]:
    features = module.features if isinstance(module.features, list) else [module.features]
    return {name for f in features if f is not None for name in f}


def as_scoring_metric(metric, score_key: str = "scores", name: str | None = None) -> ScoringMetric:
    """Wrap a metric for the harness: a capeval metric name (``"bleu"``), a scorer following
    :mod:`capeval.scoring.protocol`, an ``evaluate`` module, or a callable ``(predictions, references)``.
    Names and scorers are scored directly, without ``evaluate``."""
    from capeval.scoring.protocol import score_checked
    from capeval.registry import resolve
    from capeval.scoring.protocol import CaptionScorer

    # An evaluate module exists only once evaluate is imported: scoring a name or scorer does not need it.
    evaluate = sys.modules.get("evaluate")
    if isinstance(metric, (str, tuple)) or isinstance(getattr(metric, "scorer", None), CaptionScorer):
        metric = resolve(metric)  # a capeval module is scored through its scorer, as its compute would
    if isinstance(metric, CaptionScorer):
        scorer = metric
        if score_key != "scores" and score_key not in scorer.columns():
            raise ValueError(f"score key {score_key!r}: {scorer.metric} returns {list(scorer.columns())} (or 'scores')")

        def score_by_scorer(predictions, references, images, region_features):
            scores = score_checked(scorer, predictions, references, images=images, region_features=region_features)
            column = scorer.primary if score_key == "scores" else score_key
            return pick_scores(scores, column, len(predictions)), scorer.hashcode(scores)

        return ScoringMetric(name or scorer.name, score_by_scorer, scorer.needs_references, scorer.needs_images)
    if evaluate is not None and isinstance(metric, evaluate.EvaluationModule):
        features = feature_names(metric)

        def score_by_module(predictions, references, images, region_features):
            inputs = {"predictions": predictions}
            if "references" in features:
                inputs["references"] = references
            if images is not None:
                inputs["images"] = images
            if region_features is not None:
                inputs["region_features"] = region_features
            result = metric.compute(**inputs)
            return pick_scores(result, score_key, len(predictions)), str(result.get("hashcode", metric.name))

        return ScoringMetric(name or metric.name, score_by_module,
                             "references" in features and bool(getattr(metric, "needs_references", True)),
                             "images" in features or bool(getattr(metric, "needs_images", False)))
    if not callable(metric):
        raise TypeError(f"a metric must be a capeval metric name, a scorer, an evaluate module or a callable, got {type(metric).__name__}")

    def score_by_callable(predictions, references, images, region_features):
        visual = {k: v for k, v in (("images", images), ("region_features", region_features)) if v is not None}
        result = metric(predictions, references, **visual)
        return pick_scores(result, score_key, len(predictions)), str(getattr(metric, "hashcode", name or metric.__name__))

    return ScoringMetric(name or str(getattr(metric, "__name__", type(metric).__name__)), score_by_callable,
                         bool(getattr(metric, "needs_references", True)), bool(getattr(metric, "needs_images", False)))


def pick_scores(result, score_key: str, n: int) -> np.ndarray:
    if isinstance(result, dict) and score_key not in result:
        raise KeyError(f"the metric returned no {score_key!r} (keys: {sorted(result)}); pass score_key=")
    scores = result[score_key] if isinstance(result, dict) else result
    scores = np.asarray(scores, dtype=float)
    if scores.shape != (n,):
        raise ValueError(f"the metric returned {scores.shape} scores for {n} captions; it must return one per caption")
    if not np.isfinite(scores).all():
        raise ValueError(f"the metric returned {int((~np.isfinite(scores)).sum())} non-finite scores")
    return scores


@dataclass
class ResultRow:
    """One reported statistic: ``value`` with its bootstrap interval ``[low, high]`` over ``n`` rows."""

    metric: str
    benchmark: str
    row_set: str
    statistic: str
    n: int
    value: float
    low: float | None
    high: float | None
    protocol: str


@dataclass
class BenchmarkResult:
    metric: str
    benchmark: str
    title: str
    rows: list[ResultRow] = field(default_factory=list)
    skipped: str | None = None
    hashcode: str = ""
    settings: dict = field(default_factory=dict)
    scores: np.ndarray | None = None
    prepared: Benchmark | None = None

    def to_markdown(self) -> str:
        return results_markdown([self])

    def to_dict(self) -> dict:
        return {"metric": self.metric, "benchmark": self.benchmark, "title": self.title, "skipped": self.skipped,
                "hashcode": self.hashcode, "settings": self.settings, "rows": [asdict(r) for r in self.rows]}


def restrict(bench: Benchmark, usable: np.ndarray, kept: str = "with references") -> Benchmark:
    """The benchmark on the usable items only (rows, pairs and groups of other items dropped); correlation
    protocols say how many rows are left, and why (``kept``)."""
    new_index = np.full(len(bench.items), -1)
    new_index[usable] = np.arange(len(usable))
    items = Items(*([values[i] for i in usable] for values in (bench.items.candidates, bench.items.references,
                                                                  bench.items.image_files)))
    correlations = []
    for rows in bench.correlations:
        keep = new_index[rows.item] >= 0
        unscored = f" ({'; '.join(bench.notes)})" if bench.notes else ""
        correlations.append(CorrelationRows(rows.name, rows.protocol + f"; restricted to the {keep.sum():,} rows "
                                            f"{kept}{unscored}", new_index[rows.item[keep]], rows.human[keep]))
    pairs = bench.pairs
    if pairs is not None:
        keep = (new_index[pairs.first] >= 0) & (new_index[pairs.second] >= 0)
        pairs = PairRows(pairs.name, pairs.protocol, new_index[pairs.first[keep]], new_index[pairs.second[keep]],
                         pairs.label[keep], pairs.category[keep], pairs.categories, pairs.mean, pairs.ties)
    groups = [new_index[g][new_index[g] >= 0] for g in bench.groups]
    reference_free = None if bench.reference_free is None else new_index[bench.reference_free]
    return Benchmark(bench.name, bench.title, items, correlations, pairs, bench.notes, [g for g in groups if len(g)],
                     None if reference_free is None else reference_free[reference_free >= 0], bench.images_dir)


def score_items(scoring: ScoringMetric, bench: Benchmark, images=None, features=None) -> tuple[np.ndarray, str]:
    """Per-item scores of ``scoring`` on ``bench``: one call on all items, or one per group (a split the
    published protocol scores on its own)."""
    groups = bench.groups or [np.arange(len(bench.items))]
    scores, hashcode = np.zeros(len(bench.items)), ""

    def pick(values, group):
        return None if values is None else [values[i] for i in group]

    for group in groups:
        scores[group], hashcode = scoring.score(pick(bench.items.candidates, group), pick(bench.items.references, group),
                                                pick(images, group), pick(features, group))
    return scores, hashcode


def usable_items(scoring: ScoringMetric, bench: Benchmark) -> tuple[Benchmark, str | None]:
    """The benchmark on the items ``scoring`` can score (with references, or a reference-free metric's own
    items), or why it cannot score any."""
    if scoring.needs_references:
        usable = np.flatnonzero([refs is not None for refs in bench.items.references])
        if len(usable) == 0:
            return bench, f"{scoring.name} needs references; {bench.title} has none."
        return (restrict(bench, usable) if len(usable) < len(bench.items) else bench), None
    if bench.reference_free is not None:
        return restrict(bench, bench.reference_free, "without references"), None
    return bench, None


def harness_versions() -> dict[str, str]:
    """The scorers' library versions plus those of the harness (evaluate and datasets where installed, scipy, Python)."""
    from importlib import metadata

    import scipy

    from capeval.scoring.protocol import library_versions

    installed = {}
    for package in ("evaluate", "datasets"):
        try:
            installed[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return {**library_versions(), **installed, "scipy": scipy.__version__, "python": platform.python_version()}


def run_benchmark(metric, benchmark: str, *, source=None, images_dir=None, features_dir=None, num_samples: int = 1000, seed: int = 0,
                  level: float = 0.95, ties: str = "half", score_key: str = "scores", metric_name: str | None = None,
                  verbose: bool = True, **protocol_options) -> BenchmarkResult:
    """Score one benchmark with ``metric`` and report every statistic with a bootstrap CI.

    ``protocol_options`` go to the benchmark's protocol (:mod:`capeval.benchmarks.rowsets`), e.g.
    ``refs="random5:0"`` for PASCAL-50S or ``candidate_reference="keep"`` for Composite. ``ties``
    ("half" or "fail") is how a PASCAL-50S pair counts when the metric scores both captions equally.
    Correlations report Kendall τ-b and τ-c; the bootstrap resamples captions (so P2's three ratings of
    a caption move together), PASCAL-50S pairs within their category, ``num_samples`` times with ``seed``.
    Image metrics read ``images_dir/<image file>`` or the region features ``features_dir/<image stem>.npz``.

    >>> length = lambda predictions, references: [len(p) for p in predictions]
    >>> result = run_benchmark(length, "thumb", num_samples=0, verbose=False)
    >>> [(r.row_set, r.statistic, r.n) for r in result.rows][:2]
    [('total', 'tau-b', 2500), ('total', 'tau-c', 2500)]
    """
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {TIE_RULES}, got {ties!r}")
    scoring = metric if isinstance(metric, ScoringMetric) else as_scoring_metric(metric, score_key, metric_name)
    bench = prepare(benchmark, source, **protocol_options)
    settings = {"protocol_options": protocol_options, "bootstrap_samples": num_samples, "seed": seed, "level": level,
                "versions": harness_versions()}
    if bench.pairs is not None:
        settings["ties"] = ties
    result = BenchmarkResult(scoring.name, bench.name, bench.title, settings=settings)
    if scoring.needs_images and images_dir is None and features_dir is None:
        images_dir = bench.images_dir  # the images folder of the benchmark's data, when it has one
    if scoring.needs_images and images_dir is None and features_dir is None:
        result.skipped = (f"{scoring.name} needs images; {bench.title} ships image file names only. "
                          "Pass images_dir (--images) pointing at the benchmark's images, or features_dir (--features) "
                          "with their region features (<image stem>.npz).")
    bench, cannot = usable_items(scoring, bench)
    result.skipped = result.skipped or cannot
    if result.skipped:
        if verbose:
            print(f"SKIPPED {bench.title}: {result.skipped}")
        return result
    images = image_paths(bench.items.image_files, images_dir) if images_dir is not None else None
    features = feature_paths(bench.items.image_files, features_dir) if features_dir is not None else None
    scores, result.hashcode = score_items(scoring, bench, images, features)
    result.scores, result.prepared = scores, bench
    for rows in bench.correlations:
        x, y = scores[rows.item], rows.human
        where = f"{bench.title}, {rows.name} ({len(y):,} row{'s' * (len(y) != 1)}): Kendall τ is undefined"
        reason = undefined_tau(scoring.name, x, y)
        if reason:
            raise UndefinedCorrelation(f"{where}: {reason}")
        try:
            est = estimate(lambda r: kendall_both(x[r], y[r]), rows.item, num_samples, seed, level)
        except UndefinedCorrelation:
            raise UndefinedCorrelation(f"{where} on a bootstrap resample (its human or metric scores all equal): too "
                                       f"few distinct rows for an interval; pass num_samples=0 (--samples 0)") from None
        result.rows += [ResultRow(scoring.name, bench.name, rows.name, f"tau-{v}", len(y), e.value, e.low, e.high,
                                  rows.protocol) for v, e in est.items()]
    if bench.pairs is not None:
        result.rows += pair_rows(scoring.name, bench.name, bench.pairs, scores, ties, num_samples, seed, level, settings)
    if verbose:
        print(result.to_markdown())
    return result


def undefined_tau(metric: str, scores: np.ndarray, human: np.ndarray) -> str | None:
    """Why Kendall τ of a metric's ``scores`` against the ``human`` ones is undefined; ``None`` where it is defined.

    >>> undefined_tau("bleu", np.array([0.1, 0.2]), np.array([3.0, 3.0]))
    'every human score is 3'
    """
    if len(human) < 2:
        return f"it needs two rows, there {'is' if len(human) == 1 else 'are'} {len(human)}"
    if (human == human[0]).all():
        return f"every human score is {human[0]:g}"
    if (scores == scores[0]).all():
        return f"{metric} gives every caption the same score ({scores[0]:g})"
    return None


def pair_rows(metric: str, benchmark: str, pairs: PairRows, scores: np.ndarray, ties: str, num_samples: int, seed: int,
              level: float, settings: dict) -> list[ResultRow]:
    """Pairwise accuracy (%) per category, and their mean where the protocol reports one, with bootstrap
    intervals (pairs resampled within their category); the tie rule and the metric's ties go into ``settings``."""
    rule = pairs.ties or ties
    outcome = pair_outcomes(scores[pairs.first], scores[pairs.second], pairs.label, rule)
    tied = scores[pairs.first] == scores[pairs.second]
    present = [c for c in pairs.categories if (pairs.category == c).any()]
    settings["ties"] = rule
    settings["tie_counts"] = {c: int(tied[pairs.category == c].sum()) for c in present}

    def accuracy(rows):
        per = {c: 100 * outcome[rows][pairs.category[rows] == c].mean() for c in present}
        return {**per, "mean": float(np.mean(list(per.values())))} if pairs.mean else per

    averaged = f", the mean over the {len(present)} categories" if pairs.mean else ""
    protocol = f"{pairs.protocol}; accuracy in %{averaged}; a metric tie counts {'0.5' if rule == 'half' else '0'}"
    est = estimate(accuracy, np.arange(len(outcome)), num_samples, seed, level, strata=pairs.category)
    return [ResultRow(metric, benchmark, name, "accuracy", int((pairs.category == name).sum()) if name in present
                      else len(outcome), e.value, e.low, e.high, protocol) for name, e in est.items()]


def run_benchmarks(metric, benchmarks=None, **options) -> list[BenchmarkResult]:
    """:func:`run_benchmark` on several benchmarks (default, or ``"all"``: every benchmark whose data is here,
    the others named in one line), one metric wrapping for all."""
    if benchmarks in (None, "all"):
        names, missing = with_data()
        if options.get("verbose", True):
            from capeval.benchmarks.released import data_note

            print(data_note(missing))
    else:
        names = [benchmarks] if isinstance(benchmarks, str) else benchmarks
    scoring = metric if isinstance(metric, ScoringMetric) else as_scoring_metric(
        metric, options.pop("score_key", "scores"), options.pop("metric_name", None))
    return [run_benchmark(scoring, name, **options) for name in names]


def format_cell(row: ResultRow) -> str:
    digits = 1 if row.statistic == "accuracy" else 3
    text = f"{row.value:.{digits}f}"
    return text if row.low is None else f"{text} [{row.low:.{digits}f}, {row.high:.{digits}f}]"


def results_markdown(results: list[BenchmarkResult]) -> str:
    """One table per benchmark: a row per metric, a column per statistic, then the protocols used."""
    blocks = []
    for benchmark in dict.fromkeys(r.benchmark for r in results):
        of_benchmark = [r for r in results if r.benchmark == benchmark]
        columns = list(dict.fromkeys((row.row_set, row.statistic) for r in of_benchmark for row in r.rows))
        lines = [f"### {of_benchmark[0].title}", ""]
        if columns:
            rows = []
            for r in of_benchmark:
                cells = {(row.row_set, row.statistic): format_cell(row) for row in r.rows}
                rows.append([r.metric, *("skipped" if r.skipped else cells.get(c, "") for c in columns)])
            lines.append(tables.markdown_table(["metric", *(f"{s} {st}" for s, st in columns)], rows))
        else:
            lines += [f"- {r.metric}: skipped ({r.skipped})" for r in of_benchmark if r.skipped]
        protocols: dict[str, list[str]] = {}
        for r in of_benchmark:
            for row in r.rows:
                names = protocols.setdefault(row.protocol, [])
                if row.row_set not in names:
                    names.append(row.row_set)
        lines += [""] + [f"- {', '.join(names)}: {protocol}" for protocol, names in protocols.items()]
        lines += [f"- {r.metric}: metric ties per category {r.settings['tie_counts']}" for r in of_benchmark
                  if "tie_counts" in r.settings]
        lines += [f"- {r.metric} skipped: {r.skipped}" for r in of_benchmark if r.skipped and columns]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def write_outputs(results: list[BenchmarkResult], out_dir, plots: bool = True, overwrite: bool = False) -> list[Path]:
    """``results.md``, ``results.csv``, ``results.json`` and one scatter plot per (metric, benchmark) in ``out_dir``.

    The folder appears whole or not at all (written beside it, then renamed); an existing non-empty
    ``out_dir`` raises ``FileExistsError`` unless ``overwrite``, and is then replaced as a whole.
    """
    import csv

    from capeval.atomic import partial_folder

    names = ["results.md", "results.csv", "results.json"]
    with partial_folder(out_dir, overwrite=overwrite) as out:
        (out / names[0]).write_text(results_markdown(results), encoding="utf-8")
        with (out / names[1]).open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(ResultRow.__dataclass_fields__))
            writer.writeheader()
            for r in results:
                writer.writerows(asdict(row) for row in r.rows)
        (out / names[2]).write_text(json.dumps([r.to_dict() for r in results], indent=1), encoding="utf-8")
        if plots:
            from capeval.benchmarks.plots import scatter_plot

            for r in results:
                if r.scores is not None:
                    names.append(f"scatter_{safe_name(r.metric)}_{r.benchmark}.png")
                    scatter_plot(r, out / names[-1])
    return [Path(out_dir) / name for name in names]


def safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)
