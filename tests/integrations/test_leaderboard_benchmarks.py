"""The leaderboard shows every registered benchmark: those without stored results (the ones read from downloaded
files) as empty columns, so the board has a place for Polaris, Nebula, FOIL and LongCap-Arena before they run."""

from capeval.integrations.leaderboard import (baseline_results, board_views, load_results, pending_benchmarks, pivot,
                                              results_table)

NEW = ["Polaris", "Nebula", "FOIL-COCO", "LongCap-Arena"]


def test_benchmarks_without_stored_results_are_empty_columns():
    table = results_table(load_results(baseline_results()))
    # CapEval1k too: every stored baseline needs references, which it has none of.
    assert pending_benchmarks(table) == ["CapEval1k", *NEW]
    wide = pivot(table, pending_benchmarks(table))
    assert list(wide.columns[-5:]) == [f"{title} · no stored results" for title in ["CapEval1k", *NEW]]
    assert set(wide["Polaris · no stored results"]) == {""} and len(wide) == table["metric"].nunique()


def test_the_filters_keep_the_chosen_pending_benchmarks():
    table = results_table(load_results(baseline_results()))
    wide, long, message = board_views(table, ["Flickr8k-Expert", "Nebula"], ["tau-b"], "cider")
    # τ-c, Flickr8k-Expert's headline statistic, is filtered out: its column shows the first kept one.
    assert list(wide.columns) == ["metric", "Flickr8k-Expert · P1 mean · tau-b", "Nebula · no stored results"]
    assert list(wide["metric"]) == ["cider"] and message == ""
    wide, long, message = board_views(table, ["Polaris"], ["tau-c"], "")
    assert list(wide.columns) == ["metric", "Polaris · no stored results"] and long.empty and "No result matches" in message


def test_an_empty_board_has_no_pending_columns():
    empty = results_table([])
    assert pending_benchmarks(empty) == [] and list(pivot(empty).columns) == ["metric"]
