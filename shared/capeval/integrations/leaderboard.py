"""The leaderboard Space: the benchmark harness's stored results (``results.json`` of ``capeval benchmark
--out``) as a filterable table, a scatter plot of any two result columns, and the harness's own scatter
plots (metric score against human judgment) when they were written beside the results.

>>> table = results_table(load_results(baseline_results()))
>>> sorted(table["statistic"].unique())
['accuracy', 'tau-b', 'tau-c']
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

#: The stored baseline results of a checkout (``results/baselines``), found from the package.
CHECKOUT_RESULTS = Path(__file__).resolve().parents[3] / "results" / "baselines" / "results.json"
DIGITS = 3
#: The table's columns, present even when no result is shown.
COLUMNS = ["benchmark", "row set", "statistic", "metric", "value", "95% interval", "n", "protocol"]


def baseline_results() -> Path:
    """The checkout's stored harness results (the leaderboard Space ships its own copy beside app.py)."""
    return CHECKOUT_RESULTS


def load_results(path: str | Path) -> list[dict]:
    """The harness results in ``path`` (a ``results.json`` written by ``capeval benchmark --out``, or the same results
    as JSON lines, one per line); ``ValueError`` for a file that is missing, not JSON, or not a list of results.

    >>> load_results("no/such/results.json")
    Traceback (most recent call last):
    ValueError: no/such/results.json cannot be read (No such file or directory)
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
        try:
            results = json.loads(text)
        except json.JSONDecodeError as whole:
            try:  # JSON lines: one result per line
                results = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError:
                raise whole from None
    except OSError as error:
        raise ValueError(f"{path} cannot be read ({error.strerror or error})") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path} is not JSON ({error}): expected a results.json written by capeval benchmark --out") from None
    if isinstance(results, dict):  # JSON lines holding one result
        results = [results]
    if not isinstance(results, list) or not all(isinstance(r, dict) and "rows" in r and "metric" in r for r in results):
        raise ValueError(f"{path} is not a results.json written by capeval benchmark --out")
    return results


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at the separators outside brackets and quotes.

    >>> split_top_level("components=['sparcs', 'mima'],fusion=code")
    ["components=['sparcs', 'mima']", 'fusion=code']
    """
    parts, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return [*parts, text[start:]]


def option_text(value: str) -> str:
    """One option value of a stored label as ``--metric name:key=value`` takes it: a one-item list as its item,
    ``True`` as ``true``, a longer list as JSON; anything else as it is."""
    import ast

    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):  # a bare word (unigram, ptb): already as typed
        return value
    if isinstance(parsed, (list, tuple)):
        return str(parsed[0]) if len(parsed) == 1 else json.dumps(list(parsed), separators=(",", ":"))
    return json.dumps(parsed) if isinstance(parsed, (bool, type(None))) else value


def readable_spec(label: str) -> str:
    """A run's stored label (``name(key=value,...)``, options as Python writes them) as the spec a user types.

    >>> readable_spec("smurf(components=['sparcs'])"), readable_spec("bleu(order=1)"), readable_spec("cider")
    ('smurf:components=sparcs', 'bleu:order=1', 'cider')
    >>> readable_spec("smurf(components=['sparcs', 'spurts'],standardize=False)")
    'smurf:components=["sparcs","spurts"],standardize=false'
    """
    name, parenthesis, body = label.partition("(")
    if not parenthesis or not body.endswith(")") or not body[:-1]:
        return label
    options = []
    for part in split_top_level(body[:-1]):
        key, equals, value = part.partition("=")
        options.append(f"{key}={option_text(value)}" if equals else part)
    return f"{name}:{','.join(options)}"


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def usable_rows(result: dict) -> list[dict]:
    """The rows of one harness result that the board can show: text labels, a finite value, an interval of two
    numbers or none (a file edited by hand or cut short may hold others; :func:`board_note` counts them)."""
    if result.get("skipped") or not isinstance(result.get("rows"), list):
        return []
    return [row for row in result["rows"] if isinstance(row, dict)
            and all(isinstance(row.get(key), str) for key in ("row_set", "statistic", "metric"))
            and is_number(row.get("value"))
            and (row.get("low") is None and row.get("high") is None or is_number(row.get("low")) and is_number(row.get("high")))]


def results_table(results: Sequence[dict]):
    """One row per (metric, benchmark, row set, statistic): value, 95% interval and protocol; the metric as the
    spec a user types (:func:`readable_spec`)."""
    import pandas as pd

    rows = [{"benchmark": str(result.get("title") or result.get("benchmark", "")), "row set": row["row_set"],
             "statistic": row["statistic"], "metric": readable_spec(row["metric"]), "value": round(row["value"], DIGITS),
             "95% interval": "" if row.get("low") is None else f"[{row['low']:.{DIGITS}f}, {row['high']:.{DIGITS}f}]",
             "n": row.get("n", ""), "protocol": str(row.get("protocol", ""))}
            for result in results for row in usable_rows(result)]
    return pd.DataFrame(rows, columns=COLUMNS)


def not_run(results: Sequence[dict]) -> list[tuple[str, list[str]]]:
    """The runs the harness skipped: (why, the metrics it skipped for that reason), one entry per reason (e.g. every
    reference-based metric on a reference-free benchmark shares one), metrics as readable specs.

    >>> not_run([{"metric": m, "skipped": f"{m} needs references; CapEval1k has none."} for m in ("cider", "bleu(order=1)")])
    [('needs references; CapEval1k has none.', ['bleu:order=1', 'cider'])]
    """
    by_reason: dict[str, set[str]] = {}
    for result in results:
        reason, metric = result.get("skipped"), result["metric"]
        if reason:
            # The harness starts a reason with the metric's label; the label goes to the list instead.
            why = reason[len(metric):].strip() if reason.startswith(metric + " ") else reason
            by_reason.setdefault(why, set()).add(readable_spec(metric))
    return [(why, sorted(metrics)) for why, metrics in sorted(by_reason.items())]


def not_run_note(entries: Sequence[tuple[str, list[str]]]) -> str:
    """:func:`not_run` as the Markdown list inside the board's collapsed "Not run" section.

    >>> print(not_run_note([("needs references; CapEval1k has none.", ["bleu:order=1", "cider"])]))
    - needs references; CapEval1k has none. (2 runs: `bleu:order=1`, `cider`)
    """
    return "\n".join(f"- {why} ({len(metrics)} run{'s' * (len(metrics) != 1)}: {', '.join(f'`{m}`' for m in metrics)})"
                     for why, metrics in entries)


def axis_names(table):
    """Each row's result as the pivots and the scatter name it: ``benchmark · row set · statistic`` (one vector
    operation: a 10,000-row results file has as many)."""
    return table["benchmark"].astype(str) + " · " + table["row set"].astype(str) + " · " + table["statistic"].astype(str)


NO_MATCH = "**No result matches these filters**: choose more benchmarks or statistics, or clear the metric text."


def filtered(table, benchmarks: Sequence[str] | None, statistics: Sequence[str] | None, metric_text: str | None):
    """The rows of the chosen benchmarks and statistics whose metric contains ``metric_text``."""
    keep = table["benchmark"].isin(benchmarks or []) & table["statistic"].isin(statistics or [])
    keep &= table["metric"].str.contains(metric_text or "", case=False, regex=False)
    return table[keep]


def pending_benchmarks(table) -> list[str]:
    """The registered benchmarks without a stored result, which the board names in one line
    (:func:`pending_note`) rather than as empty columns.

    >>> import pandas as pd
    >>> pending_benchmarks(pd.DataFrame({"benchmark": ["Flickr8k-Expert", "Flickr8k-CF", "Composite", "PASCAL-50S",
    ...                                                "CapEval1k", "THumB 1.0 (MSCOCO)"]}))
    ['Polaris', 'Nebula', 'FOIL-COCO', 'LongCap-Arena']
    """
    from capeval.benchmarks.rowsets import BENCHMARKS

    if table.empty:  # a board with nothing to show says why instead (board_note)
        return []
    shown = set(table["benchmark"])
    return [spec.title for spec in BENCHMARKS.values() if spec.title not in shown]


def pending_note(pending: Sequence[str]) -> str:
    """The line under the pivot naming the benchmarks that have no column yet; '' when every one has one.

    >>> print(pending_note(["Polaris", "Nebula"]))
    No stored results yet for Polaris, Nebula: `capeval benchmark --dataset all --output DIR` with their data here adds their columns.
    """
    if not pending:
        return ""
    return (f"No stored results yet for {', '.join(pending)}: `capeval benchmark --dataset all --output DIR` with their "
            f"data here adds their columns.")


def pivot(table):
    """Metrics × results: one row per metric, one column per benchmark · row set · statistic (``value`` as shown).

    >>> import pandas as pd
    >>> long = pd.DataFrame([{"benchmark": "B", "row set": "P1", "statistic": "tau-b", "metric": m, "value": v}
    ...                      for m, v in (("cider", 0.4), ("bleu", 0.3))])
    >>> pivot(long).to_dict("records")
    [{'metric': 'bleu', 'B · P1 · tau-b': '0.300'}, {'metric': 'cider', 'B · P1 · tau-b': '0.400'}]
    """
    import pandas as pd

    if table.empty:
        return pd.DataFrame(columns=["metric"])
    names = axis_names(table)
    wide = table.assign(axis=names).pivot_table(index="metric", columns="axis", values="value", sort=False)
    columns = list(dict.fromkeys(names))
    shown = wide[columns].map(lambda v: "" if v != v else f"{v:.{DIGITS}f}")  # NaN: no such result for the metric
    return shown.reset_index().sort_values("metric", kind="stable").reset_index(drop=True).rename_axis(columns=None)


def headlines(table):
    """The rows of each benchmark's headline result among ``table``'s: its declared row set (else its first) and
    declared statistic (else its first), so the board has one column per benchmark and fits the page.

    >>> import pandas as pd
    >>> long = pd.DataFrame([{"benchmark": "PASCAL-50S", "row set": r, "statistic": "accuracy", "metric": "cider",
    ...                       "value": v} for r, v in (("HC", 60.0), ("mean", 75.0))])
    >>> headlines(long)[["row set", "value"]].to_dict("records")
    [{'row set': 'mean', 'value': 75.0}]
    """
    from capeval.benchmarks.rowsets import BENCHMARKS

    declared = {spec.title: spec.headline for spec in BENCHMARKS.values()}
    keep = []
    for title, rows in table.groupby("benchmark", sort=False):
        row_set, statistic = declared.get(title, (None, ""))
        row_set = row_set if (rows["row set"] == row_set).any() else rows["row set"].iloc[0]
        statistic = statistic if (rows["statistic"] == statistic).any() else rows["statistic"].iloc[0]
        keep.append(rows[(rows["row set"] == row_set) & (rows["statistic"] == statistic)])
    return table.loc[[i for rows in keep for i in rows.index]]


def board_views(table, benchmarks, statistics, metric_text):
    """What the filters show: the metrics × benchmarks pivot (each benchmark's :func:`headlines` result), the long
    table, and a message when nothing matches."""
    rows = filtered(table, benchmarks, statistics, metric_text)
    return pivot(headlines(rows)), rows, "" if not rows.empty else NO_MATCH


def benchmark_view(table, benchmark, statistics, metric_text):
    """Every row set and statistic of one benchmark that the filters keep, metrics × results."""
    return pivot(filtered(table, [benchmark], statistics, metric_text))


def chosen_axes(table, x_axis: str | None, y_axis: str | None) -> tuple[list[str], str | None, str | None]:
    """The axes (:func:`axis_names` strings) of ``table``'s results, and the x and y shown: each chosen one while the
    table has it, else the table's first axis not shown already."""
    axes = list(dict.fromkeys(axis_names(table))) if not table.empty else []
    unused = iter([axis for axis in axes if axis not in (x_axis, y_axis)])
    x = x_axis if x_axis in axes else next(unused, axes[0] if axes else None)
    y = y_axis if y_axis in axes else next(unused, x)
    return axes, x, y


def scatter_frame(table, x_axis: str | None, y_axis: str | None):
    """One point per metric with a value on both axes (:func:`axis_names` strings)."""
    import pandas as pd

    empty = pd.DataFrame({"metric": [], "x": [], "y": []})
    if table.empty or not x_axis or not y_axis:
        return empty
    axes = table.assign(axis=axis_names(table))
    wide = axes.pivot_table(index="metric", columns="axis", values="value")
    if x_axis not in wide or y_axis not in wide:
        return empty
    points = wide[list(dict.fromkeys([x_axis, y_axis]))].dropna().reset_index()  # one column when both axes are one
    return pd.DataFrame({"metric": points["metric"], "x": points[x_axis], "y": points[y_axis]})


Box = tuple[float, float, float, float]  # left, bottom, right, top, in pixels

#: Where a label may go, tried in this order: beside its point at growing distances (pixels), in eight directions.
LABEL_DISTANCES = (4, 10, 18, 28, 40, 54, 70, 88, 108)
LABEL_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))


def overlap(a: Box, b: Box) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def label_box(point: tuple[float, float], size: tuple[float, float], offset: tuple[float, float]) -> Box:
    """The box of a label of ``size`` whose nearest corner (or edge middle) is ``offset`` away from ``point``."""
    (x, y), (width, height), (dx, dy) = point, size, offset
    left = x + dx if dx > 0 else x + dx - width if dx < 0 else x - width / 2
    bottom = y + dy if dy > 0 else y + dy - height if dy < 0 else y - height / 2
    return left, bottom, left + width, bottom + height


class BoxGrid:
    """Boxes filed under the square cells (``cell`` pixels) they touch, so that what covers a box is summed over the
    boxes of its own cells only: placing n labels among m points costs O(n + m) rather than O(n · (n + m)).

    >>> grid = BoxGrid(10)
    >>> grid.add((0, 0, 4, 4)); grid.add((30, 30, 34, 34))
    >>> grid.covered((2, 2, 12, 12)), grid.covered((50, 50, 60, 60))
    (4.0, 0.0)
    """

    def __init__(self, cell: float):
        self.cell = cell
        self.boxes: list[Box] = []
        self.cells: dict[tuple[int, int], list[int]] = {}

    def keys(self, box: Box) -> list[tuple[int, int]]:
        left, bottom, right, top = (math.floor(v / self.cell) for v in box)
        return [(i, j) for i in range(left, right + 1) for j in range(bottom, top + 1)]

    def add(self, box: Box) -> None:
        for key in self.keys(box):
            self.cells.setdefault(key, []).append(len(self.boxes))
        self.boxes.append(box)

    def covered(self, box: Box) -> float:
        """The area of ``box`` that the filed boxes cover (summed box by box)."""
        near = {index for key in self.keys(box) for index in self.cells.get(key, ())}
        return float(sum(overlap(box, self.boxes[index]) for index in near))


#: The side (pixels) of :class:`BoxGrid`'s cells: about a label's height, a few times a marker's size.
GRID_CELL = 24.0


def place_labels(points: Sequence[tuple[float, float]], sizes: Sequence[tuple[float, float]], area: Box,
                 marker: float = 4.0, unlabelled: Sequence[tuple[float, float]] = ()) -> list[tuple[float, float]]:
    """An offset (pixels) per label so that no label covers another label or a point (``points`` and the
    ``unlabelled`` ones) and each stays in ``area``: each label takes the first free place of
    :data:`LABEL_DISTANCES` × :data:`LABEL_DIRECTIONS`, or, where none is free, the place that covers least, other
    labels and the outside counting before points (a crowd may leave no place clear of points; labels apart still read).

    >>> place_labels([(50, 50), (52, 50)], [(30, 10), (30, 10)], (0, 0, 200, 200))
    [(4, 4), (4, -4)]
    """
    markers, labels = BoxGrid(GRID_CELL), BoxGrid(GRID_CELL)
    for x, y in [*points, *unlabelled]:
        markers.add((x - marker, y - marker, x + marker, y + marker))
    offsets = []
    for point, size in zip(points, sizes):
        best, best_cost = (0.0, 0.0), (math.inf, math.inf)
        for distance in LABEL_DISTANCES:
            for dx, dy in LABEL_DIRECTIONS:
                offset = (dx * distance, dy * distance)
                box = label_box(point, size, offset)
                outside = (box[2] - box[0]) * (box[3] - box[1]) - overlap(box, area)
                cost = (labels.covered(box) + outside, markers.covered(box))
                if cost < best_cost:
                    best, best_cost = offset, cost
                if cost == (0, 0):
                    break
            if best_cost == (0, 0):
                break
        offsets.append(best)
        labels.add(label_box(point, size, best))
    return offsets


#: The most points a scatter labels: beyond it, the outermost ones (:func:`labelled_points`); the others are in the
#: points table and the long table.
LABEL_LIMIT = 40


def labelled_points(at: Sequence[tuple[float, float]], limit: int = LABEL_LIMIT) -> list[int]:
    """The indices of the points that get a label, in their order: all of them up to ``limit``, else the ``limit``
    farthest from the points' centre (the outermost, where a label has room).

    >>> labelled_points([(0, 0), (1, 1), (10, 10), (-9, -9)], limit=2)
    [2, 3]
    """
    if len(at) <= limit:
        return list(range(len(at)))
    cx, cy = sum(x for x, _ in at) / len(at), sum(y for _, y in at) / len(at)
    farthest = sorted(range(len(at)), key=lambda i: -math.hypot(at[i][0] - cx, at[i][1] - cy))[:limit]
    return sorted(farthest)


def scatter_figure(points, x_axis: str | None, y_axis: str | None):
    """The points as a ``matplotlib`` figure: each labelled with its metric where no other label or point is
    (:func:`place_labels`, a thin line to a label set apart; beyond :data:`LABEL_LIMIT` points the outermost, as the
    title says), the axes with what they are."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 5))
    axis.scatter(points["x"], points["y"], color="tab:blue", s=16, zorder=2)
    axis.set_xlabel(x_axis or "")
    axis.set_ylabel(y_axis or "")
    if points.empty:
        axis.text(0.5, 0.5, "no metric has both results", ha="center", va="center", transform=axis.transAxes)
    else:
        axis.margins(0.15)  # room for the labels of the outermost points
    if len(points) > LABEL_LIMIT:
        axis.set_title(f"labels on the {LABEL_LIMIT} outermost of {len(points):,} metrics", fontsize=8)
    figure.tight_layout()
    if not points.empty:
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]  # the Agg canvas chosen above
        at = [(float(px), float(py)) for px, py in axis.transData.transform(points[["x", "y"]].to_numpy(dtype=float))]
        chosen = labelled_points(at)
        names = [str(points["metric"].iloc[i]) for i in chosen]
        sizes = []
        for metric in names:  # each label's size, measured once on a label drawn for the purpose
            probe = axis.text(0, 0, metric, fontsize=8)
            box = probe.get_window_extent(renderer)
            sizes.append((box.width, box.height))
            probe.remove()
        left, bottom, right, top = axis.get_window_extent(renderer).extents
        others = [at[i] for i in sorted(set(range(len(at))) - set(chosen))]
        offsets = place_labels([at[i] for i in chosen], sizes, (left, bottom, right, top), unlabelled=others)
        for metric, i, (dx, dy) in zip(names, chosen, offsets):
            apart = max(abs(dx), abs(dy)) > LABEL_DISTANCES[1]
            axis.annotate(metric, (points["x"].iloc[i], points["y"].iloc[i]), textcoords="offset pixels",
                          xytext=(dx, dy), fontsize=8, zorder=3, ha="left" if dx > 0 else "right" if dx < 0 else "center",
                          va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                          arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6} if apart else None)
    plt.close(figure)
    return figure


#: The columns of the published-beside-reproduced table.
PUBLISHED_COLUMNS = ["paper", "table", "row", "column", "published", "capeval", "Δ", "status", "protocol"]


def published_table(path: Path):
    """The cells of ``capeval reproduce --output`` (``reproduce.json`` beside the results): each paper's published
    value beside capeval's, the difference, the status and the protocol; an empty table when there is none.

    >>> published_table(Path("no/such/reproduce.json")).empty
    True
    """
    import pandas as pd

    try:
        cells = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cells = []
    if not isinstance(cells, list):
        cells = []

    def shown(value):
        return "" if value is None else f"{value:.{DIGITS}f}"

    rows = [{"paper": c.get("paper", ""), "table": c.get("table", ""), "row": c.get("row", ""), "column": c.get("column", ""),
             "published": shown(c.get("published")), "capeval": shown(c.get("capeval")), "Δ": shown(c.get("delta")),
             "status": c.get("status", ""), "protocol": c.get("protocol") or c.get("reason") or ""}
            for c in cells if isinstance(c, dict)]
    return pd.DataFrame(rows, columns=PUBLISHED_COLUMNS)


#: The one status filter chip of every cell that needs something not here (each names what, in the table).
NEEDS = "needs a model or data not here"


def status_kind(status: str) -> str:
    """A cell's status as the status filter offers it: the statuses that say what a cell needs are one kind.

    >>> status_kind("needs bert-base-uncased"), status_kind("differs")
    ('needs a model or data not here', 'differs')
    """
    return NEEDS if status.startswith("needs ") else status


def published_rows(table, papers: Sequence[str] | None, statuses: Sequence[str] | None):
    """The cells of the chosen papers and status kinds (:func:`status_kind`)."""
    return table[table["paper"].isin(papers or []) & table["status"].map(status_kind).isin(statuses or [])]


def board_note(path: Path) -> tuple[list[dict], str]:
    """The results in ``path`` and a note for the top of the board: why it is empty (the file is unreadable, holds
    no result, or only skipped runs), else nothing. The Space starts whatever the file holds."""
    try:
        results = load_results(path)
    except ValueError as error:
        return [], f"**No results to show**: {error}."
    if not any(not result.get("skipped") for result in results):
        return results, f"**No results to show**: {path.name} holds {'only skipped runs' if results else 'no runs'}."
    rows = [row for result in results if not result.get("skipped") and isinstance(result["rows"], list) for row in result["rows"]]
    left_out = len(rows) - sum(len(usable_rows(result)) for result in results)
    if left_out:
        return results, (f"**{left_out} of the {len(rows)} rows in {path.name} are left out**: each needs row_set, statistic "
                         "and metric, a finite value, and a 95% interval of two numbers or none.")
    return results, ""


def scatter_views(table, benchmarks, statistics, metric_text, x_axis, y_axis):
    """The scatter of the results the filters keep: the axes left to choose from, the x and y shown
    (:func:`chosen_axes`), the points and the figure."""
    rows = filtered(table, benchmarks, statistics, metric_text)
    axes, x, y = chosen_axes(rows, x_axis, y_axis)
    points = scatter_frame(rows, x, y)
    return axes, x, y, points, scatter_figure(points, x, y)


#: The widths of the pivots' columns: the metric's, then each result's (its header wraps), so that one column
#: per registered benchmark fits a 1,000-pixel page.
PIVOT_WIDTHS: tuple[str | int, str | int] = ("180px", "72px")


#: A run's label breaks anywhere (``smurf:components=sparcs`` has no space) rather than being cut at its column's edge:
#: a style element in the page, as ``Blocks(css=...)`` moved to ``launch()`` in Gradio 6 and a Space's app.py calls
#: ``launch()`` bare.
PIVOT_STYLE = "<style>#pivot td, #benchmark-pivot td { white-space: normal; overflow-wrap: anywhere; }</style>"


def pivot_frame(gr, value, label: str, elem_id: str):
    """A pivot as the board shows it: read-only, headers and cells wrapped, the widths above."""
    return gr.Dataframe(value=value, interactive=False, label=label, elem_id=elem_id, wrap=True,
                        column_widths=[PIVOT_WIDTHS[0], *[PIVOT_WIDTHS[1]] * (len(value.columns) - 1)])


def build_leaderboard_space(results_path: str | Path | None = None):
    """The ``gr.Blocks`` leaderboard of ``results_path`` (default: :func:`baseline_results`): metrics × benchmarks
    (each one's :func:`headlines` result), filterable (API ``/filter``: benchmarks, statistics, metric text → pivot,
    long table, message) and sortable by any column; every result of one benchmark, where there are results (API
    ``/benchmark``: benchmark, statistics, metric text → its pivot); and a labelled scatter of two results among those the filters keep (API ``/scatter``: x, y,
    benchmarks, statistics, metric text → points, figure). A file with nothing to show gives an empty board that
    says why (:func:`board_note`); the skipped runs are one collapsed list (:func:`not_run`)."""
    import gradio as gr

    path = Path(results_path or baseline_results())
    results, note = board_note(path)
    table = results_table(results)
    benchmarks = list(dict.fromkeys(table["benchmark"]))
    statistics = list(dict.fromkeys(table["statistic"]))
    axes, x_default, y_default = chosen_axes(table, None, None)
    plots = sorted(str(p) for p in path.parent.glob("scatter_*.png"))
    points = scatter_frame(table, x_default, y_default)
    skipped = not_run(results)
    board = pivot(headlines(table))
    with gr.Blocks(title="capeval leaderboard", fill_width=True) as demo:
        gr.Markdown("# capeval leaderboard\n\nKendall τ-b / τ-c (and PASCAL-50S accuracy) of each metric against human "
                    "judgments, as stored by `capeval benchmark --output`: one row per metric, one column per benchmark with "
                    "its headline result (τ-c; τ-b for Flickr8k-CF; accuracy for PASCAL-50S and FOIL; click a header to "
                    "sort), and below it every row set and statistic of one benchmark. The seed metrics appear in their configurations that need "
                    "no download, labelled by the spec that runs them (e.g. `bert_tbr:mode=unigram`); the papers' own "
                    "numbers are in the published-beside-reproduced table below. The long table gives each result's 95% "
                    "bootstrap interval and protocol. A benchmark without stored results (Polaris, Nebula, FOIL-COCO and "
                    "LongCap-Arena read from their downloaded files) is named under the table until `capeval "
                    "benchmark --dataset all` runs with its data here. AMBER, the other hallucination set, has no column: "
                    "it scores a model's responses (`capeval benchmark --metric amber --dataset amber --results FILE`), "
                    "not a metric against human judgments.")
        if note:
            gr.Markdown(note)
        with gr.Row():
            chosen_benchmarks = gr.Dropdown(benchmarks, value=benchmarks, multiselect=True, label="Benchmarks")
            chosen_statistics = gr.Dropdown(statistics, value=statistics, multiselect=True, label="Statistics")
            metric_text = gr.Textbox(label="Metric contains", placeholder="e.g. cider")
        message = gr.Markdown()
        gr.HTML(PIVOT_STYLE, padding=False)
        wide = pivot_frame(gr, board, "Metrics × benchmarks: each benchmark's headline result", "pivot")
        gr.Markdown(pending_note(pending_benchmarks(table)), elem_id="pending")
        if benchmarks:
            with gr.Accordion("One benchmark: every row set and statistic"):
                chosen_benchmark = gr.Dropdown(benchmarks, value=benchmarks[0], label="Benchmark")
                detail = pivot_frame(gr, benchmark_view(table, benchmarks[0], statistics, ""),
                                     "Metrics × results of the benchmark", "benchmark-pivot")
            gr.on([chosen_benchmark.change, chosen_statistics.change, metric_text.change],
                  lambda b, s, m: benchmark_view(table, b, s, m), inputs=[chosen_benchmark, chosen_statistics, metric_text],
                  outputs=detail, api_name="benchmark")
        with gr.Accordion("Every result: interval, n and protocol", open=False):
            long = gr.Dataframe(value=table, interactive=False, label="Results", wrap=True)
        filters: list = [chosen_benchmarks, chosen_statistics, metric_text]  # gradio types them as their base class
        gr.on([control.change for control in filters], lambda b, s, m: board_views(table, b, s, m), inputs=filters,
              outputs=[wide, long, message], api_name="filter")
        if skipped:
            with gr.Accordion(f"Not run ({sum(len(metrics) for _, metrics in skipped)} runs)", open=False, elem_id="not-run"):
                gr.Markdown(not_run_note(skipped))
        gr.Markdown("## Two results against each other\n\nOne labelled point per metric the filters above keep: do the "
                    "metrics rank alike on two benchmarks, or under τ-b and τ-c?")
        with gr.Row():
            x_axis = gr.Dropdown(axes, value=x_default, label="x axis")
            y_axis = gr.Dropdown(axes, value=y_default, label="y axis")
        shown_points = gr.Dataframe(value=points, interactive=False, label="Points", visible=False)
        figure = gr.Plot(value=scatter_figure(points, x_default, y_default), label="Metrics on both results")

        def scatter(x, y, b, s, m):
            return scatter_views(table, b, s, m, x, y)[3:]

        def axes_of(b, s, m, x, y):
            choices, x, y = scatter_views(table, b, s, m, x, y)[:3]
            return gr.update(choices=choices, value=x), gr.update(choices=choices, value=y)

        gr.on([x_axis.change, y_axis.change, *(control.change for control in filters)], scatter,
              inputs=[x_axis, y_axis, *filters], outputs=[shown_points, figure], api_name="scatter")
        gr.on([control.change for control in filters], axes_of, inputs=[*filters, x_axis, y_axis],
              outputs=[x_axis, y_axis], api_name=False)
        published = published_table(path.parent / "reproduce.json")
        if not published.empty:
            papers, statuses = list(dict.fromkeys(published["paper"])), list(dict.fromkeys(published["status"].map(status_kind)))
            gr.Markdown("## Published beside reproduced\n\nEvery cell of the seed papers' correlation tables (`capeval "
                        "reproduce`): the paper's value, capeval's under the table's protocol, the difference and whether it "
                        "reproduces; `needs …` where the paper's weights or data are not available here.")
            with gr.Row():
                chosen_papers = gr.Dropdown(papers, value=papers, multiselect=True, label="Papers")
                chosen_statuses = gr.Dropdown(statuses, value=statuses, multiselect=True, label="Status")
            cells = gr.Dataframe(value=published, interactive=False, label="Published and capeval", elem_id="published")
            gr.on([chosen_papers.change, chosen_statuses.change], lambda p, s: published_rows(published, p, s),
                  inputs=[chosen_papers, chosen_statuses], outputs=cells, api_name="published")
        if plots:
            gr.Markdown("## Metric scores against human judgments (the harness's scatter plots)")
            gr.Gallery(plots, columns=3, label="Scatter plots")
    return demo
