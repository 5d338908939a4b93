"""The leaderboard and the registered benchmarks: every column has results (a benchmark without stored results, such
as those read from downloaded files, is named in one line under the pivot, not shown as an empty column)."""

import gradio as gr

from capeval.integrations.leaderboard import (baseline_results, board_views, build_leaderboard_space, load_results,
                                              pending_benchmarks, pending_note, pivot, results_table)

NEW = ["Polaris", "Nebula", "FOIL-COCO", "LongCap-Arena"]


def test_benchmarks_without_stored_results_are_named_not_shown_as_empty_columns():
    table = results_table(load_results(baseline_results()))
    # CapEval1k too: every stored baseline needs references, which it has none of.
    assert pending_benchmarks(table) == ["CapEval1k", *NEW]
    wide = pivot(table)
    assert not any(title in column for column in wide.columns for title in ["CapEval1k", *NEW])
    assert all((wide[column] != "").any() for column in wide.columns)  # no empty column
    assert pending_note(pending_benchmarks(table)) == (
        "No stored results yet for CapEval1k, Polaris, Nebula, FOIL-COCO, LongCap-Arena: `capeval benchmark --dataset "
        "all --output DIR` with their data here adds their columns.")
    (note,) = [b for b in build_leaderboard_space().blocks.values() if isinstance(b, gr.Markdown) and b.elem_id == "pending"]
    assert note.value == pending_note(pending_benchmarks(table))


def test_the_filters_show_no_empty_column():
    table = results_table(load_results(baseline_results()))
    wide, long, message = board_views(table, ["Flickr8k-Expert", "Nebula"], ["tau-b"], "cider")
    # τ-c, Flickr8k-Expert's headline statistic, is filtered out: its column shows the first kept one.
    assert list(wide.columns) == ["metric", "Flickr8k-Expert · P1 mean · tau-b"]
    assert list(wide["metric"]) == ["cider"] and message == ""
    wide, long, message = board_views(table, ["Polaris"], ["tau-c"], "")
    assert list(wide.columns) == ["metric"] and long.empty and "No result matches" in message


def test_an_empty_board_names_no_pending_benchmark():
    empty = results_table([])
    assert pending_benchmarks(empty) == [] and list(pivot(empty).columns) == ["metric"] and pending_note([]) == ""
