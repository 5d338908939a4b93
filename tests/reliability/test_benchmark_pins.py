"""Behaviour of the harness and of ``capeval reproduce`` that only a printed line or an option showed: each table's
protocol line (τ-b or τ-c per benchmark), the bootstrap seed, and SMURF's two checkpoints under ``--weights``."""

import os
import subprocess
import sys

import pytest

from capeval.benchmarks.harness import run_benchmark
from capeval.benchmarks.published import ROW_METRICS
from capeval.benchmarks.reproduce import report, reproduce
from capeval.benchmarks.table_protocols import PROTOCOLS

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}


def test_the_protocol_line_names_each_benchmarks_statistic():
    expected = ("Protocol: flickr8k_expert P2 all tau-c (include_self_captions=False); flickr8k_cf fraction yes tau-b "
                "(include_self_captions=True); baselines: tokenizer=ptb")
    assert expected in report(reproduce("clipscore")).splitlines()
    done = subprocess.run([sys.executable, "-m", "capeval.cli", "reproduce", "clipscore"], capture_output=True, text=True,
                          env=ENV, timeout=300)
    assert done.returncode == 0 and expected in done.stdout.splitlines(), done.stderr
    assert PROTOCOLS[("umic", "Table 2")].describe() == (
        "flickr8k_expert P2 all tau-b (include_self_captions=False, drop_reference=1); composite correctness tau-c "
        "(candidate_reference=keep); capeval1k overall tau-b; pascal50s ties count 0 (refs=random5:1); baselines: tokenizer=none")
    assert PROTOCOLS[("bert_tbr", "Table 4")].describe() == "pascal50s ties count 0 (refs=fleur5); baselines: tokenizer=none"


def length(predictions, references):
    return [float(len(p)) for p in predictions]


def intervals(benchmark, seed):
    result = run_benchmark(length, benchmark, num_samples=30, seed=seed, verbose=False, metric_name="length")
    return [(row.row_set, row.statistic, row.value, row.low, row.high) for row in result.rows]


@pytest.mark.parametrize("benchmark", ["thumb", "pascal50s"])
def test_the_bootstrap_follows_its_seed(benchmark):
    """The same seed gives the same intervals; another seed other intervals around the same values (correlations on
    THumB, accuracies on PASCAL-50S, whose pairs are drawn within their category)."""
    first, again, other = intervals(benchmark, 0), intervals(benchmark, 0), intervals(benchmark, 1)
    assert first == again
    assert [row[:3] for row in other] == [row[:3] for row in first]
    assert [row[3:] for row in other] != [row[3:] for row in first]


def test_smurf_needs_both_of_its_checkpoints(tmp_path):
    row = ROW_METRICS["smurf"]
    needs = "needs distilroberta-base and distilbert-base-uncased"
    for present in (("distilroberta-base",), ("distilbert-base-uncased",)):
        folder = tmp_path / "_".join(present)
        for name in present:
            (folder / name).mkdir(parents=True)
        assert row.resolve(folder) == (None, needs)
    both = tmp_path / "both"
    for name in ("distilroberta-base", "distilbert-base-uncased"):
        (both / name).mkdir(parents=True)
    assert row.resolve(both) == (("smurf", {"spurts_model": str(both / "distilroberta-base"),
                                            "mima_model": str(both / "distilbert-base-uncased")}, "smurf"), "")


def test_reproduce_says_what_a_half_filled_weights_folder_lacks(tmp_path):
    (tmp_path / "distilroberta-base").mkdir()
    cells = reproduce("smurf", rows=["SMURF"], weights=tmp_path)
    assert cells and {cell.status for cell in cells if cell.published is not None} == {
        "needs distilroberta-base and distilbert-base-uncased"}
