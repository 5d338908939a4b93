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
    """One row per (metric, benchmark, row set, statistic): value, 95% interval and protocol."""
    import pandas as pd

    rows = [{"benchmark": str(result.get("title") or result.get("benchmark", "")), "row set": row["row_set"],
             "statistic": row["statistic"], "metric": row["metric"], "value": round(row["value"], DIGITS),
             "95% interval": "" if row.get("low") is None else f"[{row['low']:.{DIGITS}f}, {row['high']:.{DIGITS}f}]",
             "n": row.get("n", ""), "protocol": str(row.get("protocol", ""))}
            for result in results for row in usable_rows(result)]
    return pd.DataFrame(rows, columns=COLUMNS)


def skipped_note(results: Sequence[dict]) -> str:
    """The runs the harness skipped, and why (e.g. a reference-based metric on a reference-free benchmark)."""
    reasons = sorted({result["skipped"] for result in results if result.get("skipped")})
    return "\n".join(["Not run:"] + [f"- {reason}" for reason in reasons]) if reasons else ""


def axis_name(row) -> str:
    return f"{row['benchmark']} · {row['row set']} · {row['statistic']}"


NO_MATCH = "**No result matches these filters**: choose more benchmarks or statistics, or clear the metric text."


def filtered(table, benchmarks: Sequence[str] | None, statistics: Sequence[str] | None, metric_text: str | None):
    """The rows of the chosen benchmarks and statistics whose metric contains ``metric_text``."""
    keep = table["benchmark"].isin(benchmarks or []) & table["statistic"].isin(statistics or [])
    keep &= table["metric"].str.contains(metric_text or "", case=False, regex=False)
    return table[keep]


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
    wide = table.assign(axis=table.apply(axis_name, axis=1)).pivot_table(index="metric", columns="axis", values="value",
                                                                          sort=False)
    columns = list(dict.fromkeys(table.apply(axis_name, axis=1)))
    shown = wide[columns].map(lambda v: "" if v != v else f"{v:.{DIGITS}f}")  # NaN: no such result for the metric
    return shown.reset_index().sort_values("metric", kind="stable").reset_index(drop=True).rename_axis(columns=None)


def board_views(table, benchmarks, statistics, metric_text):
    """What the filters show: the metrics × results pivot, the long table, and a message when nothing matches."""
    rows = filtered(table, benchmarks, statistics, metric_text)
    return pivot(rows), rows, "" if not rows.empty else NO_MATCH


def scatter_frame(table, x_axis: str | None, y_axis: str | None):
    """One point per metric with a value on both axes (``axis_name`` strings)."""
    import pandas as pd

    empty = pd.DataFrame({"metric": [], "x": [], "y": []})
    if table.empty or not x_axis or not y_axis:
        return empty
    axes = table.assign(axis=table.apply(axis_name, axis=1))
    wide = axes.pivot_table(index="metric", columns="axis", values="value")
    if x_axis not in wide or y_axis not in wide:
        return empty
    points = wide[list(dict.fromkeys([x_axis, y_axis]))].dropna().reset_index()  # one column when both axes are one
    return pd.DataFrame({"metric": points["metric"], "x": points[x_axis], "y": points[y_axis]})


def scatter_figure(points, x_axis: str | None, y_axis: str | None):
    """The points as a ``matplotlib`` figure: each labelled with its metric, the axes with what they are."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4.5))
    axis.scatter(points["x"], points["y"], color="tab:blue")
    for metric, x, y in zip(points["metric"], points["x"], points["y"]):
        axis.annotate(metric, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    axis.set_xlabel(x_axis or "")
    axis.set_ylabel(y_axis or "")
    if points.empty:
        axis.text(0.5, 0.5, "no metric has both results", ha="center", va="center", transform=axis.transAxes)
    figure.tight_layout()
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


def published_rows(table, papers: Sequence[str] | None, statuses: Sequence[str] | None):
    """The cells of the chosen papers and statuses."""
    return table[table["paper"].isin(papers or []) & table["status"].isin(statuses or [])]


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


def build_leaderboard_space(results_path: str | Path | None = None):
    """The ``gr.Blocks`` leaderboard of ``results_path`` (default: :func:`baseline_results`): metrics × results,
    filterable (API ``/filter``: benchmarks, statistics, metric text → pivot, long table, message) and sortable by
    any column, and a labelled scatter of any two results (API ``/scatter``: x, y → points, figure). A file with
    nothing to show gives an empty board that says why (:func:`board_note`)."""
    import gradio as gr

    path = Path(results_path or baseline_results())
    results, note = board_note(path)
    table = results_table(results)
    benchmarks = list(dict.fromkeys(table["benchmark"]))
    statistics = list(dict.fromkeys(table["statistic"]))
    axes = list(dict.fromkeys(axis_name(row) for _, row in table.iterrows()))
    x_default, y_default = (axes[0], axes[min(1, len(axes) - 1)]) if axes else ("", "")
    plots = sorted(str(p) for p in path.parent.glob("scatter_*.png"))
    points = scatter_frame(table, x_default, y_default)
    with gr.Blocks(title="capeval leaderboard") as demo:
        gr.Markdown("# capeval leaderboard\n\nKendall τ-b / τ-c (and PASCAL-50S accuracy) of each metric against human "
                    "judgments, as stored by `capeval benchmark --output`: one row per metric, one column per benchmark · "
                    "row set · statistic (click a header to sort). The seed metrics appear in their configurations that need "
                    "no download, labelled by their options (e.g. `bert_tbr(mode=unigram)`); the papers' own numbers are "
                    "in the published-beside-reproduced table below. The long table gives each result's 95% bootstrap "
                    "interval and protocol.")
        if note:
            gr.Markdown(note)
        with gr.Row():
            chosen_benchmarks = gr.Dropdown(benchmarks, value=benchmarks, multiselect=True, label="Benchmarks")
            chosen_statistics = gr.Dropdown(statistics, value=statistics, multiselect=True, label="Statistics")
            metric_text = gr.Textbox(label="Metric contains", placeholder="e.g. cider")
        message = gr.Markdown()
        wide = gr.Dataframe(value=pivot(table), interactive=False, label="Metrics × results", elem_id="pivot")
        with gr.Accordion("Every result: interval, n and protocol", open=False):
            long = gr.Dataframe(value=table, interactive=False, label="Results")
        filters: list = [chosen_benchmarks, chosen_statistics, metric_text]  # gradio types them as their base class
        gr.on([control.change for control in filters], lambda b, s, m: board_views(table, b, s, m), inputs=filters,
              outputs=[wide, long, message], api_name="filter")
        gr.Markdown(skipped_note(results))
        gr.Markdown("## Two results against each other\n\nOne labelled point per metric: do the metrics rank alike on two "
                    "benchmarks, or under τ-b and τ-c?")
        with gr.Row():
            x_axis = gr.Dropdown(axes, value=x_default or None, label="x axis")
            y_axis = gr.Dropdown(axes, value=y_default or None, label="y axis")
        shown_points = gr.Dataframe(value=points, interactive=False, label="Points", visible=False)
        figure = gr.Plot(value=scatter_figure(points, x_default, y_default), label="Metrics on both results")

        def scatter(x, y):
            chosen = scatter_frame(table, x, y)
            return chosen, scatter_figure(chosen, x, y)

        gr.on([x_axis.change, y_axis.change], scatter, inputs=[x_axis, y_axis], outputs=[shown_points, figure], api_name="scatter")
        published = published_table(path.parent / "reproduce.json")
        if not published.empty:
            papers, statuses = list(dict.fromkeys(published["paper"])), list(dict.fromkeys(published["status"]))
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
