"""The harness end to end with cheap metrics: statistics, skips, outputs."""

import json

import numpy as np
import pytest

from capeval.benchmarks import results_markdown
from capeval.benchmarks import run_benchmark
from capeval.benchmarks import run_benchmarks
from capeval.benchmarks import write_outputs
from capeval.benchmarks.stats import kendall_both


def word_count(predictions, references):
    return [len(p.split()) for p in predictions]


def test_correlations_report_both_variants_on_the_stated_rows():
    result = run_benchmark(word_count, "flickr8k_expert", num_samples=20, verbose=False)
    table = {(r.row_set, r.statistic): r for r in result.rows}
    assert {k: table[k].n for k in table} == {("P1 mean", "tau-b"): 5664, ("P1 mean", "tau-c"): 5664,
                                              ("P2 all", "tau-b"): 16992, ("P2 all", "tau-c"): 16992}
    p1 = result.prepared.correlations[0]
    assert table["P1 mean", "tau-b"].value == pytest.approx(kendall_both(result.scores, p1.human)["b"])
    assert all(r.low <= r.value <= r.high for r in result.rows)
    # Longer captions get slightly lower expert scores: pinned τ of caption length under both protocols.
    assert {k: round(table[k].value, 6) for k in table} == {("P1 mean", "tau-b"): -0.086789, ("P1 mean", "tau-c"): -0.080988,
                                                            ("P2 all", "tau-b"): -0.098136, ("P2 all", "tau-c"): -0.095022}
    assert "self-captions excluded" in table["P2 all", "tau-c"].protocol


def test_pascal_accuracy_per_category_and_tie_rule():
    by_length = run_benchmark(word_count, "pascal50s", num_samples=0, verbose=False)
    fail = run_benchmark(word_count, "pascal50s", num_samples=0, ties="fail", verbose=False)
    half = {r.row_set: r.value for r in by_length.rows}
    assert list(half) == ["HC", "HI", "HM", "MM", "mean"]
    # Pinned: the longer caption wins (PASCAL-50S label direction), equal lengths count 0.5.
    assert half == pytest.approx({"HC": 50.7, "HI": 52.35, "HM": 63.8, "MM": 50.25, "mean": 54.275})
    assert by_length.settings["tie_counts"] == {"HC": 116, "HI": 85, "HM": 50, "MM": 51}
    assert half["mean"] == pytest.approx(np.mean([half[c] for c in ("HC", "HI", "HM", "MM")]))
    ties = by_length.settings["tie_counts"]
    for row in fail.rows[:4]:
        assert half[row.row_set] - row.value == pytest.approx(100 * 0.5 * ties[row.row_set] / 1000)
    assert "first 5" in by_length.rows[0].protocol and "0.5" in by_length.rows[0].protocol


def test_missing_references_or_images_skip_with_a_message(capsys):
    result = run_benchmark(word_count, "capeval1k", verbose=True)
    assert result.skipped and "needs references" in capsys.readouterr().out

    def reference_free(predictions, references):
        return [len(p) for p in predictions]

    reference_free.needs_references = False
    assert len(run_benchmark(reference_free, "capeval1k", num_samples=0, verbose=False).rows) == 2

    def with_images(predictions, references, images=None):
        return [len(p) for p in predictions]

    with_images.needs_images = True
    skipped = run_benchmark(with_images, "thumb", verbose=False)
    assert "needs images" in skipped.skipped and "images_dir" in skipped.skipped


def test_composite_reference_metrics_use_the_flickr8k_subset():
    result = run_benchmark(word_count, "composite", num_samples=0, verbose=False)
    assert result.rows[0].n == 2991 and "restricted" in result.rows[0].protocol


def test_bad_metric_output_is_an_error():
    with pytest.raises(ValueError, match="one per caption"):
        run_benchmark(lambda p, r: [1.0], "thumb", verbose=False)
    with pytest.raises(ValueError, match="non-finite"):
        run_benchmark(lambda p, r: [float("nan")] * len(p), "thumb", verbose=False)
    with pytest.raises(KeyError, match="score_key"):
        run_benchmark(lambda p, r: {"x": [0.0] * len(p)}, "thumb", verbose=False)


def test_outputs_markdown_csv_json_and_plots(tmp_path):
    results = run_benchmarks(word_count, ["thumb", "pascal50s", "capeval1k"], num_samples=10, verbose=False,
                             metric_name="words")
    files = write_outputs(results, tmp_path)
    names = sorted(p.name for p in files)
    assert names == ["results.csv", "results.json", "results.md", "scatter_words_pascal50s.png",
                     "scatter_words_thumb.png"]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved[0]["settings"]["versions"]["capeval"] and saved[2]["skipped"]
    assert (tmp_path / "results.csv").read_text().count("\n") == 1 + 6 + 5
    table = results_markdown(results)
    assert "### THumB 1.0 (MSCOCO)" in table and "| words |" in table and "skipped" in table


def test_image_metric_module_is_skipped_without_images(repo_root):
    import evaluate

    from capeval.benchmarks.harness import run_benchmark

    umic = evaluate.load(str(repo_root / "metrics" / "umic"))
    result = run_benchmark(umic, "capeval1k", num_samples=0)
    assert result.skipped and "image" in result.skipped
