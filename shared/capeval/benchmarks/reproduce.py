"""``capeval reproduce PAPER|all``: every cell of the seed papers' correlation tables, re-run.

Each published table (:mod:`capeval.benchmarks.published`) is re-computed under one protocol
(:data:`capeval.benchmarks.table_protocols.PROTOCOLS`, found by ``scripts/search_protocols.py``) and each
cell gets a status: ``reproduced`` (|Δ| ≤ 0.005 for Kendall τ, ≤ 0.5 for PASCAL-50S accuracy in %, under
a protocol credited for that benchmark), ``differs`` (with the table's documented reason) or ``needs ...`` (weights, SPICE, references that are
not available here). Per-caption scores are cached under capeval's cache dir by metric hashcode and the
scored items, so a rerun only correlates.

    capeval reproduce bert_tbr
    capeval reproduce all --output reproduce.json --weights /models --composite-references /data/captions
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from capeval.benchmarks.published import PAPERS, ROW_METRICS, PublishedCell, published_cells
from capeval.benchmarks.rowsets import BENCHMARKS, PASCAL_CATEGORIES, Benchmark, prepare
from capeval.benchmarks.stats import correlate, pair_outcomes
from capeval.benchmarks.table_protocols import PROTOCOLS, BenchmarkSetting, TableProtocol
from capeval.registry import build_scorer

#: Largest |Δ| that counts as reproduced: Kendall τ (printed with 3 decimals) and accuracy in %.
TOLERANCE = {"correlation": 0.005, "accuracy": 0.5}
ACCURACY_MEASURES = (*PASCAL_CATEGORIES, "mean")


@dataclass
class CellResult:
    """A published cell next to capeval's value under the table's protocol."""

    paper: str
    table: str
    row: str
    column: str
    benchmark: str
    published: float | None
    capeval: float | None
    delta: float | None
    status: str
    protocol: str
    reason: str = ""
    printed: float | None = None
    metric: str = ""


def scores_cache_dir() -> Path:
    from capeval.settings import cache_dir

    return cache_dir() / "reproduce"


def items_digest(candidates, references) -> str:
    """A digest of what a metric scores, so cached scores are reused only for the same captions."""
    return hashlib.sha256(json.dumps([candidates, references], ensure_ascii=False).encode()).hexdigest()[:20]


def read_cached_scores(path: Path, count: int) -> np.ndarray | None:
    """The ``count`` scores cached in ``path``, or ``None`` when there are none: a damaged entry (not a ``.npy`` file of
    ``count`` finite floats) is dropped with one warning naming it, so the caller recomputes it."""
    if not path.is_file():
        return None
    try:
        scores = np.load(path, allow_pickle=False)  # a cache file is data, never code
        if not (isinstance(scores, np.ndarray) and scores.dtype.kind == "f" and scores.shape == (count,)
                and np.isfinite(scores).all()):
            raise ValueError(f"it holds {getattr(scores, 'dtype', type(scores).__name__)} {getattr(scores, 'shape', '')}, "
                             f"not {count} finite scores")
    except (OSError, ValueError, EOFError) as error:
        warnings.warn(f"the cached scores {path} are damaged ({error}): dropped and computed again")
        path.unlink(missing_ok=True)
        return None
    return scores


def cached_scores(spec: tuple[str, dict, str], items, digest: str, use_cache: bool = True) -> np.ndarray:
    """Per-caption scores of ``spec`` = (metric, options, result column) on ``items``, from the cache when
    the same metric hashcode already scored items of the same ``digest`` (:func:`items_digest`)."""
    from capeval.atomic import partial_file
    from capeval.benchmarks.harness import as_scoring_metric

    name, options, column = spec
    scorer = build_scorer(name, options)
    key = hashlib.sha256(f"{scorer.hashcode()}|{column}|{digest}".encode()).hexdigest()
    path = scores_cache_dir() / f"{key[:32]}.npy"
    if use_cache and (cached := read_cached_scores(path, len(items.candidates))) is not None:
        return cached
    scores, _ = as_scoring_metric(scorer, column).score(items.candidates, items.references, None, None)
    if use_cache:
        with partial_file(path) as out:
            np.save(out, scores)
    return scores


@dataclass
class Prepared:
    """A benchmark under one setting: all its items, and those with references (what reference metrics score)."""

    full: Benchmark
    with_references: Benchmark | None

    @functools.cached_property
    def digests(self) -> dict[int, str]:
        return {id(b): items_digest(b.items.candidates, b.items.references)
                for b in (self.full, self.with_references) if b is not None}


@functools.lru_cache(maxsize=32)
def prepared(benchmark: str, options: tuple, source=None) -> Prepared:
    """The benchmark under ``options`` (a sorted tuple of items) and its rows with references (none: ``None``)."""
    from capeval.benchmarks.harness import restrict

    bench = prepare(benchmark, source, **dict(options))
    usable = np.flatnonzero([refs is not None for refs in bench.items.references])
    if len(usable) == 0:
        return Prepared(bench, None)
    return Prepared(bench, restrict(bench, usable) if len(usable) < len(bench.items) else bench)


def measure(scores: np.ndarray, bench, measure_name: str, setting: BenchmarkSetting) -> float:
    """One column's statistic: a PASCAL-50S accuracy (%) or a correlation of the setting's row set."""
    if measure_name in ACCURACY_MEASURES:
        pairs = bench.pairs
        outcome = pair_outcomes(scores[pairs.first], scores[pairs.second], pairs.label, setting.ties)
        per = [100 * outcome[pairs.category == c].mean() for c in PASCAL_CATEGORIES]
        return float(np.mean(per) if measure_name == "mean" else per[PASCAL_CATEGORIES.index(measure_name)])
    rows = next(r for r in bench.correlations if r.name == setting.row_set)
    statistic = measure_name if measure_name in ("tau-b", "tau-c") else setting.statistic
    return correlate(scores[rows.item], rows.human, statistic)


def row_spec(cell: PublishedCell, protocol: TableProtocol, weights=None) -> tuple[tuple | None, str]:
    row = ROW_METRICS[cell.metric]
    spec, needs = row.resolve(weights)
    if spec is not None and row.toolkit:
        name, options, column = spec
        toolkit = {k: v for k, v in protocol.toolkit.items() if k != "smoothing" or name == "bleu"}
        spec = (name, {**options, **toolkit}, column)
    return spec, needs


def reproduce_cells(cells: list[PublishedCell], protocol: TableProtocol, *, weights=None, composite=None,
                    use_cache: bool = True) -> list[CellResult]:
    """Re-run ``cells`` (of one table) under ``protocol``. ``composite``: Composite with its references
    attached (:func:`capeval.benchmarks.attach_references`), else the bundled one (Flickr8k third only)."""
    results = []
    for cell in cells:
        spec, needs = row_spec(cell, protocol, weights)
        setting = protocol.settings.get(cell.benchmark)
        result = CellResult(cell.paper, cell.table, cell.row, cell.column, cell.benchmark, cell.published, None, None,
                            "", setting.describe() if setting else "", printed=cell.printed, metric=cell.metric)
        results.append(result)
        if cell.published is None:
            result.status = "not printed"
            continue
        if setting is None or cell.benchmark not in BENCHMARKS:
            result.status = protocol.unavailable.get(cell.benchmark, f"needs the {cell.benchmark} benchmark")
            continue
        if spec is None:
            result.status = needs
            continue
        source = composite if cell.benchmark == "composite" else None
        setup = prepared(cell.benchmark, tuple(sorted(setting.options.items())), source)
        full = setup.full
        needs_references = build_scorer(spec[0], spec[1]).needs_references
        if needs_references and setup.with_references is None:
            result.status = protocol.unavailable.get(cell.benchmark, f"needs references for {full.title}")
            continue
        bench = setup.with_references if needs_references and setup.with_references is not None else full
        scores = cached_scores(spec, bench.items, setup.digests[id(bench)], use_cache)
        result.capeval = measure(scores, bench, cell.measure, setting)
        result.delta = result.capeval - cell.published
        kind = "accuracy" if cell.measure in ACCURACY_MEASURES else "correlation"
        # A value from part of the benchmark's rows is not the paper's, however close it comes.
        restricted = len(bench.items) < len(full.items)
        within = abs(result.delta) <= TOLERANCE[kind] + 1e-9
        if within and not restricted and cell.benchmark in protocol.credited:
            result.status = "reproduced"
        else:
            result.status = "differs"
            baseline = ROW_METRICS[cell.metric].toolkit
            result.reason = "; ".join(filter(None, [
                f"scored on the {len(bench.items):,} of {len(full.items):,} rows with references" if restricted else "",
                "within tolerance, but under a setting that does not reproduce the table's other baseline rows"
                if within and not restricted else "",
                f"{spec[0]} with {spec[1]}" if not baseline else "",
                "the protocol reproduces this table's baselines" if not baseline and cell.benchmark in protocol.credited
                else protocol.differs.get(cell.benchmark, "")]))
        if restricted:
            result.protocol += f"; {len(bench.items):,} of {len(full.items):,} rows (those with references)"
    return results


def reproduce(paper: str = "all", *, rows: list[str] | None = None, weights=None, composite=None,
              use_cache: bool = True) -> list[CellResult]:
    """Every cell of ``paper``'s tables (or all papers') re-run under its table's protocol; ``rows``: only
    the rows of these names (as printed, e.g. ``"BLEU-4"``).

    >>> cell = reproduce("clipscore")[0]
    >>> cell.row, cell.column, cell.published, cell.status
    ('CLIP-S', 'Flickr8k-Expert τ-c', 0.512, "needs CLIP ViT-B/32 and the benchmark's images or region features")
    """
    cells = published_cells(paper)
    if rows:
        unknown = sorted(set(rows) - {c.row for c in cells})
        if unknown:
            raise ValueError(f"no row {unknown} in {paper}'s tables; rows: {sorted({c.row for c in cells})}")
        cells = [c for c in cells if c.row in rows]
    results = []
    for key in dict.fromkeys((c.paper, c.table) for c in cells):
        of_table = [c for c in cells if (c.paper, c.table) == key]
        results += reproduce_cells(of_table, PROTOCOLS[key], weights=weights, composite=composite, use_cache=use_cache)
    return results


def format_value(value: float | None, measure_kind: str) -> str:
    if value is None:
        return "–"
    return f"{value:+.1f}" if measure_kind == "delta-accuracy" else f"{value:+.3f}" if measure_kind == "delta" else (
        f"{value:.1f}" if measure_kind == "accuracy" else f"{value:.3f}")


def report(results: list[CellResult]) -> str:
    """Markdown: per table, published | capeval | Δ | status, then the table's protocol and reasons."""
    from capeval.reports import tables

    blocks = []
    for key in dict.fromkeys((r.paper, r.table) for r in results):
        of_table = [r for r in results if (r.paper, r.table) == key]
        protocol = PROTOCOLS[key]
        rows = []
        for r in of_table:
            kind = "accuracy" if r.benchmark == "pascal50s" else "correlation"
            rows.append([r.row, r.column, format_value(r.published, kind), format_value(r.capeval, kind),
                         format_value(r.delta, "delta-accuracy" if kind == "accuracy" else "delta"), r.status])
        done = sum(r.status == "reproduced" for r in of_table)
        computed = sum(r.capeval is not None for r in of_table)
        lines = [f"### {key[0]} {key[1]}: {done} of {computed} computed cells reproduced ({len(of_table)} cells)", "",
                 tables.markdown_table(["row", "column", "published", "capeval", "Δ", "status"], rows), "",
                 f"Protocol: {protocol.describe()}"]
        lines += [f"- differs on {name}: {text}" for name, text in protocol.differs.items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def summary(results: list[CellResult]) -> dict[str, dict[str, int]]:
    """Per paper: cells, computed cells, reproduced cells."""
    out: dict[str, dict[str, int]] = {}
    for r in results:
        counts = out.setdefault(r.paper, {"cells": 0, "computed": 0, "reproduced": 0})
        counts["cells"] += r.published is not None
        counts["computed"] += r.capeval is not None
        counts["reproduced"] += r.status == "reproduced"
    return out


def add_arguments(parser) -> None:
    """The ``reproduce`` command's arguments."""
    from capeval.usage import add_output_arguments

    parser.set_defaults(run=run)
    parser.add_argument("paper", choices=[*PAPERS, "all"], help="whose tables to re-run")
    parser.add_argument("--row", action="append", metavar="NAME", help="only this row (as printed, e.g. BLEU-4); repeatable")
    add_output_arguments(parser, "write one JSON object per cell to this file")
    parser.add_argument("--weights", help="folder of real checkpoints (<dir>/bert-base-uncased, <dir>/roberta-large, ...) "
                                          "for the model rows")
    parser.add_argument("--composite-references",
                        help="folder with captions_val2014.json (COCO) and the Flickr30k captions file "
                             "(results_20130124.token or results.csv): Composite is scored on all its rows")
    parser.add_argument("--no-cache", action="store_true", help="recompute per-caption scores instead of reading the cache")


def run(args) -> int:
    from capeval.usage import UsageError, check_output

    check_output(args)  # before the work, not after it
    try:
        if not args.no_cache:
            scores_cache_dir()  # CAPEVAL_CACHE must name a folder: say so now, not after the first table
        composite = None
        if args.composite_references:
            from capeval.benchmarks.references import composite_with_references

            composite = composite_with_references(args.composite_references)
        results = reproduce(args.paper, rows=args.row, weights=args.weights, composite=composite,
                            use_cache=not args.no_cache)
    except (ValueError, FileNotFoundError) as error:  # a bad row name or caption file: one line, exit code 2
        raise UsageError(str(error)) from None
    print(report(results))
    print()
    for paper, counts in summary(results).items():
        print(f"{paper}: {counts['reproduced']} of {counts['computed']} computed cells reproduced "
              f"({counts['cells']} printed cells)")
    if args.output:
        from capeval.atomic import partial_file

        with partial_file(args.output, mode="w", overwrite=args.overwrite) as out:
            json.dump([asdict(r) for r in results], out, indent=1, ensure_ascii=False)
        print(f"wrote {args.output}")
    return 0


