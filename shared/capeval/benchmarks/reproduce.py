"""``capeval reproduce PAPER|BENCHMARK|all``: every cell of the seed papers' correlation tables, re-run.

Each published table (:mod:`capeval.benchmarks.published`) is re-computed under one protocol
(:data:`capeval.benchmarks.table_protocols.PROTOCOLS`, found by ``scripts/search_protocols.py``) and each
cell gets a status: ``reproduced`` (|Δ| ≤ 0.005 for Kendall τ, ≤ 0.5 for PASCAL-50S accuracy in %, under
a protocol credited for that benchmark), ``differs`` (with the table's documented reason) or ``needs ...`` (weights, SPICE, references that are
not available here; ``needs data`` names the download of a benchmark read from its released files). Per-caption
scores are cached under capeval's cache dir by metric hashcode and the scored items, so a rerun only correlates.
A benchmark name selects every transcribed cell of that benchmark, whichever paper printed it.

    capeval reproduce bert_tbr
    capeval reproduce polaris --data /data        # /data/polaris holds polaris_test.csv
    capeval reproduce all --output reproduce.json --weights /models --composite-references /data/captions
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from capeval.benchmarks.published import PAPERS, ROW_METRICS, PublishedCell, published_cells, table_source
from capeval.benchmarks.rowsets import BENCHMARKS, PASCAL_CATEGORIES, Benchmark, prepare
from capeval.benchmarks.stats import correlate, pair_outcomes
from capeval.benchmarks.table_protocols import PROTOCOLS, BenchmarkSetting, TableProtocol
from capeval.registry import build_scorer

#: Largest |Δ| that counts as reproduced: Kendall τ (printed with 3 decimals) and accuracy in %.
TOLERANCE = {"correlation": 0.005, "accuracy": 0.5}
ACCURACY_MEASURES = (*PASCAL_CATEGORIES, "mean")
#: The benchmarks whose cells are pairwise accuracies in % (the others are Kendall τ).
ACCURACY_BENCHMARKS = ("pascal50s", "foil")


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
    #: The statistic of the cell (tau-b or tau-c, or a pair category's accuracy) and the row set it is taken on.
    measure: str = ""
    row_set: str = ""


def scores_cache_dir() -> Path:
    from capeval.settings import cache_dir

    return cache_dir() / "reproduce"


def items_digest(candidates, references, groups=()) -> str:
    """A digest of what a metric scores, so cached scores are reused only for the same captions (and the same
    split into separately scored groups, where a protocol has them)."""
    scored = [candidates, references] + ([[g.tolist() for g in groups]] if len(groups) else [])
    return hashlib.sha256(json.dumps(scored, ensure_ascii=False).encode()).hexdigest()[:20]


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


def cached_scores(spec: tuple[str, dict, str], bench: Benchmark, digest: str, use_cache: bool = True) -> np.ndarray:
    """Per-caption scores of ``spec`` = (metric, options, result column) on ``bench``'s items, from the cache when
    the same metric hashcode already scored items of the same ``digest`` (:func:`items_digest`)."""
    from capeval.atomic import partial_file
    from capeval.benchmarks.harness import as_scoring_metric, score_items

    name, options, column = spec
    scorer = build_scorer(name, options)
    key = hashlib.sha256(f"{scorer.hashcode()}|{column}|{digest}".encode()).hexdigest()
    path = scores_cache_dir() / f"{key[:32]}.npy"
    if use_cache and (cached := read_cached_scores(path, len(bench.items))) is not None:
        return cached
    scores, _ = score_items(as_scoring_metric(scorer, column), bench)
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
        return {id(b): items_digest(b.items.candidates, b.items.references, b.groups)
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


def measure(scores: np.ndarray, bench, measure_name: str, setting: BenchmarkSetting, row_set: str = "") -> float:
    """One column's statistic: a pairwise accuracy (%) of a pair category (or their mean) or a correlation of the
    column's row set (default the setting's)."""
    pairs = bench.pairs
    if pairs is not None and (measure_name in pairs.categories or measure_name == "mean"):
        outcome = pair_outcomes(scores[pairs.first], scores[pairs.second], pairs.label, pairs.ties or setting.ties)
        per = {c: 100 * outcome[pairs.category == c].mean() for c in pairs.categories if (pairs.category == c).any()}
        return float(np.mean(list(per.values())) if measure_name == "mean" else per[measure_name])
    rows = next(r for r in bench.correlations if r.name == (row_set or setting.row_set))
    statistic = measure_name if measure_name in ("tau-b", "tau-c") else setting.statistic
    return correlate(scores[rows.item], rows.human, statistic)


def data_needed(benchmark: str, data_root=None) -> str:
    """'' when a benchmark's data is here (a released benchmark's files are fetched first where that is allowed),
    else the download that makes its cells computable."""
    from capeval.benchmarks.released import BenchmarkDataMissing, locate

    if BENCHMARKS[benchmark].bundled:
        return ""
    try:
        locate(benchmark, released_folder(benchmark, data_root))
    except BenchmarkDataMissing as error:
        return str(error)
    return ""


def row_spec(cell: PublishedCell, protocol: TableProtocol, weights=None) -> tuple[tuple | None, str]:
    row = ROW_METRICS[cell.metric]
    spec, needs = row.resolve(weights)
    if spec is not None and row.toolkit:
        name, options, column = spec
        toolkit = {k: v for k, v in protocol.toolkit.items() if k != "smoothing" or name == "bleu"}
        spec = (name, {**options, **toolkit}, column)
    return spec, needs


def reproduce_cells(cells: list[PublishedCell], protocol: TableProtocol, *, weights=None, composite=None,
                    use_cache: bool = True, data_root=None, desc: str = "") -> list[CellResult]:
    """Re-run ``cells`` (of one table) under ``protocol``, with a progress bar over them (``desc``). ``composite``:
    Composite with its references attached (:func:`capeval.benchmarks.attach_references`), else the bundled one
    (Flickr8k third only); ``data_root``: the folder holding the released benchmarks' folders (default capeval's
    data folder)."""
    from capeval.progress import progress

    results = []
    downloads: dict[str, str] = {}  # per benchmark, asked once: a failed download is not retried for every cell
    for cell in progress(cells, desc=desc or "cells"):
        spec, needs = row_spec(cell, protocol, weights)
        setting = protocol.settings.get(cell.benchmark)
        statistic = setting.statistic if setting and cell.measure == "tau" else cell.measure
        result = CellResult(cell.paper, cell.table, cell.row, cell.column, cell.benchmark, cell.published, None, None,
                            "", setting.describe() if setting else "", printed=cell.printed, metric=cell.metric,
                            measure=statistic, row_set=cell.row_set or (setting.row_set if setting else ""))
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
        if cell.benchmark not in downloads:
            downloads[cell.benchmark] = data_needed(cell.benchmark, data_root)
        download = downloads[cell.benchmark]
        if download:
            result.status, result.reason = f"needs data: {BENCHMARKS[cell.benchmark].title}", download
            continue
        source = composite if cell.benchmark == "composite" else data_folder(cell.benchmark, data_root)
        setup = prepared(cell.benchmark, tuple(sorted(setting.options.items())), source)
        full = setup.full
        needs_references = build_scorer(spec[0], spec[1]).needs_references
        if needs_references and setup.with_references is None:
            result.status = protocol.unavailable.get(cell.benchmark, f"needs references for {full.title}")
            continue
        bench = setup.with_references if needs_references and setup.with_references is not None else full
        scores = cached_scores(spec, bench, setup.digests[id(bench)], use_cache)
        result.capeval = measure(scores, bench, cell.measure, setting, cell.row_set)
        result.delta = result.capeval - cell.published
        kind = "accuracy" if cell.benchmark in ACCURACY_BENCHMARKS else "correlation"
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


def released_folder(benchmark: str, data_root=None) -> str | None:
    """Where a released benchmark's files are under ``data_root`` (``None``: capeval's data folder)."""
    return None if data_root is None or BENCHMARKS[benchmark].bundled else str(Path(data_root) / benchmark)


def data_folder(benchmark: str, data_root=None) -> str | None:
    """The folder a released benchmark is read from, resolved (so the cache of prepared benchmarks tells data
    folders apart when $CAPEVAL_DATA changes); ``None`` for a bundled one."""
    from capeval.benchmarks.released import RELEASED

    if BENCHMARKS[benchmark].bundled:
        return None
    return str(RELEASED[benchmark].folder(released_folder(benchmark, data_root)))


def selected_cells(selection: str) -> list[PublishedCell]:
    """The cells of a paper's tables, of every table's column on one benchmark, or all cells."""
    if selection in BENCHMARKS:
        return [c for c in published_cells() if c.benchmark == selection]
    return published_cells(selection)


def reproduce(paper: str = "all", *, rows: list[str] | None = None, weights=None, composite=None,
              use_cache: bool = True, data_root=None) -> list[CellResult]:
    """Every cell of ``paper``'s tables (or all papers', or every table's cells on one benchmark: ``"polaris"``)
    re-run under its table's protocol; ``rows``: only the rows of these names (as printed, e.g. ``"BLEU-4"``).

    >>> cell = reproduce("clipscore")[0]
    >>> cell.row, cell.column, cell.published, cell.status
    ('CLIP-S', 'Flickr8k-Expert τ-c', 0.512, "needs CLIP ViT-B/32 and the benchmark's images or region features")
    """
    return [result for of_table in reproduce_tables(paper, rows=rows, weights=weights, composite=composite,
                                                     use_cache=use_cache, data_root=data_root) for result in of_table]


def reproduce_tables(paper: str = "all", *, rows: list[str] | None = None, weights=None, composite=None,
                     use_cache: bool = True, data_root=None) -> Iterator[list[CellResult]]:
    """:func:`reproduce`, one table at a time: each table's cells as soon as they are re-run (a progress bar per
    table, ``table 2/5: polos Table 1``), so a caller can show a table while the next one runs."""
    cells = selected_cells(paper)
    if rows:
        unknown = sorted(set(rows) - {c.row for c in cells})
        if unknown:
            raise ValueError(f"no row {unknown} in {paper}'s tables; rows: {sorted({c.row for c in cells})}")
        cells = [c for c in cells if c.row in rows]
    keys = list(dict.fromkeys((c.paper, c.table) for c in cells))
    for number, key in enumerate(keys, 1):
        of_table = [c for c in cells if (c.paper, c.table) == key]
        yield reproduce_cells(of_table, PROTOCOLS[key], weights=weights, composite=composite, use_cache=use_cache,
                              data_root=data_root, desc=f"table {number}/{len(keys)}: {key[0]} {key[1]}")


def format_value(value: float | None, measure_kind: str) -> str:
    if value is None:
        return "–"
    return f"{value:+.1f}" if measure_kind == "delta-accuracy" else f"{value:+.3f}" if measure_kind == "delta" else (
        f"{value:.1f}" if measure_kind == "accuracy" else f"{value:.3f}")


def table_report(of_table: list[CellResult]) -> str:
    """Markdown of one table's cells: published | capeval | Δ | status, then the table's protocol and reasons."""
    from capeval.reports import tables

    key = (of_table[0].paper, of_table[0].table)
    protocol = PROTOCOLS[key]
    rows = []
    for r in of_table:
        kind = "accuracy" if r.benchmark in ACCURACY_BENCHMARKS else "correlation"
        rows.append([r.row, r.column, format_value(r.published, kind), format_value(r.capeval, kind),
                     format_value(r.delta, "delta-accuracy" if kind == "accuracy" else "delta"), r.status])
    done = sum(r.status == "reproduced" for r in of_table)
    computed = sum(r.capeval is not None for r in of_table)
    lines = [f"### {key[0]} {key[1]}: {done} of {computed} computed cells reproduced ({len(of_table)} cells)", "",
             tables.markdown_table(["row", "column", "published", "capeval", "Δ", "status"], rows), "",
             f"Protocol: {protocol.describe()}", f"Source: {table_source(*key)}"]
    lines += [f"- differs on {name}: {text}" for name, text in protocol.differs.items()]
    lines += [f"- {status}: {reason}" for status, reason in
              dict.fromkeys((r.status, r.reason) for r in of_table if r.status.startswith("needs data"))]
    return "\n".join(lines)


def disagreements_report(results: list[CellResult]) -> str:
    """The cells two sources print differently (:func:`disagreements`) under their heading; '' when there is none."""
    disagreeing = disagreements(results)
    return "\n".join(["### Cells two sources print differently (both kept)", ""] + disagreeing) if disagreeing else ""


def report(results: list[CellResult]) -> str:
    """Markdown: per table :func:`table_report`, then the cells two sources print differently."""
    blocks = [table_report([r for r in results if (r.paper, r.table) == key])
              for key in dict.fromkeys((r.paper, r.table) for r in results)]
    return "\n\n".join(filter(None, [*blocks, disagreements_report(results)]))


def disagreements(results: list[CellResult]) -> list[str]:
    """One line per cell (benchmark, row metric, statistic) that two tables print with values differing by more
    than the coarser one's rounding, e.g. BLEU-4 on Flickr8k-CF τ-b: 16.863 (PAC-S's script) and 16.4 (Pearl)."""
    by_cell: dict[tuple, list[tuple[float, float, CellResult]]] = {}
    for r in results:
        if r.published is not None and r.printed:
            by_cell.setdefault((r.benchmark, r.row_set, r.metric, r.measure), []).append((r.printed, r.published, r))

    def half_unit(printed: float, published: float) -> float:  # half of the last printed digit, in capeval's units
        decimals = len(repr(float(printed)).split(".")[1].rstrip("0")) if "." in repr(float(printed)) else 0
        return 0.5 * 10 ** -decimals * abs(published / printed)

    lines = []
    for (benchmark, row_set, metric, measure), cells in by_cell.items():
        if any(abs(a[1] - b[1]) > max(half_unit(*a[:2]), half_unit(*b[:2])) + 1e-12 for a in cells for b in cells):
            lines.append(f"- {benchmark} {row_set} {metric} {measure}: " + "; ".join(
                f"{printed:g} ({r.paper} {r.table}, {r.row} / {r.column})" for printed, _, r in cells))
    return lines


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
    parser.add_argument("paper", choices=[*PAPERS, *BENCHMARKS, "all"],
                        help="whose tables to re-run, or a benchmark: every table's cells on it")
    parser.add_argument("--row", action="append", metavar="NAME", help="only this row (as printed, e.g. BLEU-4); repeatable")
    add_output_arguments(parser, "write one JSON object per cell to this file")
    parser.add_argument("--weights", help="folder of real checkpoints (<dir>/bert-base-uncased, <dir>/roberta-large, ...) "
                                          "for the model rows")
    parser.add_argument("--composite-references",
                        help="folder with captions_val2014.json (COCO) and the Flickr30k captions file "
                             "(results_20130124.token or results.csv): Composite is scored on all its rows")
    parser.add_argument("--no-cache", action="store_true", help="recompute per-caption scores instead of reading the cache")
    parser.add_argument("--data", metavar="DIR",
                        help="folder with one folder of released files per downloaded benchmark (DIR/polaris, "
                             "DIR/nebula, ...); default $CAPEVAL_DATA or ~/.cache/capeval/data")



def no_cells_note(selection: str) -> str:
    """Why a benchmark has no cell to re-run: no table transcribed here prints one."""
    return (f"No transcribed table has a {selection} cell (capeval/resources/published_tables.json holds none yet); "
            f"`capeval benchmark --dataset {selection}` computes the benchmark's statistics.")


def run(args) -> int:
    from capeval.usage import UsageError, check_output

    check_output(args)  # before the work, not after it
    results: list[CellResult] = []
    try:
        if not args.no_cache:
            scores_cache_dir()  # CAPEVAL_CACHE must name a folder: say so now, not after the first table
        composite = None
        if args.composite_references:
            from capeval.benchmarks.references import composite_with_references

            composite = composite_with_references(args.composite_references)
        # Each table is printed as soon as it is re-run: a long run shows its tables one by one, not all at the end.
        for of_table in reproduce_tables(args.paper, rows=args.row, weights=args.weights, composite=composite,
                                         use_cache=not args.no_cache, data_root=args.data):
            print(table_report(of_table) + "\n", flush=True)
            results += of_table
    except (ValueError, FileNotFoundError) as error:  # a bad row name or caption file: one line, exit code 2
        raise UsageError(str(error)) from None
    if not results:
        print(no_cells_note(args.paper))
        return 0
    if disagreements(results):
        print(disagreements_report(results) + "\n")
    for paper, counts in summary(results).items():
        print(f"{paper}: {counts['reproduced']} of {counts['computed']} computed cells reproduced "
              f"({counts['cells']} printed cells)")
    if args.output:
        from capeval.atomic import partial_file

        with partial_file(args.output, mode="w", overwrite=args.overwrite) as out:
            json.dump([asdict(r) for r in results], out, indent=1, ensure_ascii=False)
        print(f"wrote {args.output}")
    return 0


