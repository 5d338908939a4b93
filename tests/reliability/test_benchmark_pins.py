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


# --------------------------------------------------------------------------- capeval benchmark's table and its errors


def benchmark_command(capsys, folder, *flags):
    from capeval.cli import main

    code = main(["benchmark", "--metric", "bleu:order=1", "--dataset", "polaris", "--data", str(folder), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def polaris_data(tmp_path, rows):
    from fixtures.released import write_polaris

    write_polaris(tmp_path / "data" / "polaris", rows=rows)
    return tmp_path / "data"


def test_benchmark_prints_tau_b_and_tau_c_each_under_its_heading(tmp_path, capsys):
    """The cells are Kendall's τ-b and τ-c of BLEU-1's own scores, counted pair by pair; they differ at the third
    decimal (0.276 and 0.278), so a swap of the columns or of the variants shows."""
    from capeval.benchmarks.harness import as_scoring_metric
    from fixtures.released import POLARIS, hand_kendall

    scores, _ = as_scoring_metric("bleu:order=1").score([row[0] for row in POLARIS], [row[1] for row in POLARIS], None, None)
    tau_b, tau_c = hand_kendall(list(scores), [row[2] for row in POLARIS])
    assert (f"{tau_b:.3f}", f"{tau_c:.3f}") == ("0.276", "0.278")
    code, out, _ = benchmark_command(capsys, polaris_data(tmp_path, POLARIS), "--samples", "0")
    assert code == 0
    assert "| metric | human tau-b | human tau-c |" in out.splitlines()
    assert "| bleu(order=1) | 0.276 | 0.278 |" in out.splitlines()


def test_benchmark_intervals_follow_the_seed_flag(tmp_path, capsys):
    from fixtures.released import POLARIS

    data = polaris_data(tmp_path, POLARIS)
    runs = {seed: benchmark_command(capsys, data, "--samples", "20", "--seed", seed)[1] for seed in ("0", "1")}
    assert runs["0"] == benchmark_command(capsys, data, "--samples", "20", "--seed", "0")[1]
    row = {seed: next(line for line in out.splitlines() if line.startswith("| bleu")) for seed, out in runs.items()}
    assert row["0"] == "| bleu(order=1) | 0.276 [-0.538, 0.707] | 0.278 [-0.572, 0.744] |"
    assert row["1"] == "| bleu(order=1) | 0.276 [-0.091, 0.577] | 0.278 [-0.083, 0.517] |"


def same_caption(rows):
    return [("a dog runs", ["a dog running"], score, imgid) for _, _, score, imgid in rows]


@pytest.mark.parametrize("edit, message", [
    (lambda rows: [(*row[:2], 0.5, row[3]) for row in rows], "Polaris, human (6 rows): Kendall τ is undefined: every "
                                                             "human score is 0.5"),
    (same_caption, "Polaris, human (6 rows): Kendall τ is undefined: bleu(order=1) gives every caption the same score (0.666667)"),
    (lambda rows: rows[:1], "Polaris, human (1 row): Kendall τ is undefined: it needs two rows, there is 1"),
    (lambda rows: [], "Polaris: the released files in {data}/polaris hold no rows (polaris_test.csv)"),
], ids=["constant-human-scores", "constant-metric", "one-row", "no-rows"])
def test_benchmark_where_tau_is_undefined_says_why_in_one_line(tmp_path, capsys, edit, message):
    from fixtures.released import POLARIS

    data = polaris_data(tmp_path, edit(POLARIS))
    code, out, err = benchmark_command(capsys, data, "--samples", "0")
    assert code == 2 and err == f"capeval benchmark: {message.format(data=data)}\n", err


def test_a_bootstrap_resample_without_a_tau_asks_for_no_intervals(tmp_path, capsys):
    from fixtures.released import POLARIS

    data = polaris_data(tmp_path, POLARIS[:2])
    code, _, err = benchmark_command(capsys, data, "--samples", "50")
    assert code == 2 and err.count("\n") == 1
    assert err.endswith("Polaris, human (2 rows): Kendall τ is undefined on a bootstrap resample (its human or metric "
                        "scores all equal): too few distinct rows for an interval; pass num_samples=0 (--samples 0)\n")
    assert benchmark_command(capsys, data, "--samples", "0")[0] == 0


#: Each table's protocol, benchmark by benchmark, as its printed protocol line names it (the statistic each
#: column's "τ" is: τ-b or τ-c, per table and benchmark).
PROTOCOL_LINES = {('bert_tbr', 'Table 3'): ['flickr8k_expert P1 mean tau-b (include_self_captions=False, drop_reference=4)',
                                            'composite correctness tau-b (candidate_reference=remove)'],
                  ('bert_tbr', 'Table 4'): ['pascal50s ties count 0 (refs=fleur5)'],
                  ('vilbertscore', 'Table 1'): ['flickr8k_expert P1 mean tau-b (include_self_captions=False, drop_reference=4)',
                                                'composite correctness tau-b (candidate_reference=remove)'],
                  ('vilbertscore', 'Table 2'): ['pascal50s ties count 0 (refs=fleur5)'],
                  ('umic', 'Table 2'): ['flickr8k_expert P2 all tau-b (include_self_captions=False, drop_reference=1)',
                                        'composite correctness tau-c (candidate_reference=keep)',
                                        'capeval1k overall tau-b',
                                        'pascal50s ties count 0 (refs=random5:1)'],
                  ('qace', 'Table 2'): ['flickr8k_expert P2 all tau-b (include_self_captions=False, drop_reference=0)',
                                        'composite correctness tau-c (candidate_reference=keep)',
                                        'pascal50s ties count 0 (refs=random5:0)'],
                  ('smurf', 'Table 3'): ['pascal50s ties count 0 (refs=fleur5)'],
                  ('smurf', 'Table 4'): ['composite correctness tau-c (candidate_reference=keep)',
                                         'flickr8k_expert P2 all tau-b (include_self_captions=False, drop_reference=1)'],
                  ('pacs', 'compute_correlations.py'): ['flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                                        'flickr8k_cf fraction yes tau-b (include_self_captions=True)'],
                  ('clipscore', 'Tables 1-2'): ['flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                                'flickr8k_cf fraction yes tau-b (include_self_captions=True)'],
                  ('pearl', 'Table 1'): ['composite correctness tau-c (candidate_reference=remove)',
                                         'flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                         'flickr8k_cf fraction yes tau-b (include_self_captions=True)',
                                         'nebula human tau-c (scores=corrected)'],
                  ('polos', 'Table 1'): ['composite correctness tau-c (candidate_reference=remove)',
                                         'flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                         'flickr8k_cf fraction yes tau-b (include_self_captions=True)',
                                         'polaris human tau-c'],
                  ('captionevalkit', 'expected Polaris values'): ['polaris human tau-c'],
                  ('deneb', 'Table 1'): ['nebula human tau-c (scores=uncorrected)'],
                  ('pacs_pp', 'Table 1'): ['composite correctness tau-c (candidate_reference=remove)',
                                           'flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                           'flickr8k_cf fraction yes tau-b (include_self_captions=True)'],
                  ('fleur', 'Table 1'): ['composite correctness tau-c (candidate_reference=remove)',
                                         'flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                         'flickr8k_cf fraction yes tau-b (include_self_captions=True)'],
                  ('expert', 'Table 2'): ['composite correctness tau-c (candidate_reference=remove)',
                                          'flickr8k_expert P2 all tau-c (include_self_captions=False)',
                                          'flickr8k_cf fraction yes tau-b (include_self_captions=True)',
                                          'polaris human tau-c', 'nebula human tau-c (scores=uncorrected)'],
                  ('clair', 'Table 1'): ['composite correctness tau-c (candidate_reference=remove)',
                                         'flickr8k_expert P2 all tau-c (include_self_captions=False)'],
                  ('clair', 'Table 3'): ['pascal50s ties count 0.5 (refs=first5)'],
                  ('vela', 'Table 1 and Appendix D Table 4'): ['longcap_arena TestA desc tau-b']}


def test_every_tables_protocol_names_its_statistic_per_benchmark():
    assert {key: [setting.describe(name) for name, setting in protocol.settings.items()]
            for key, protocol in PROTOCOLS.items()} == PROTOCOL_LINES


@pytest.mark.parametrize("paper, line", [
    ("vela", "Protocol: longcap_arena TestA desc tau-b; baselines: tokenizer=ptb"),
    ("deneb", "Protocol: nebula human tau-c (scores=uncorrected); baselines: tokenizer=ptb"),
])
def test_the_released_benchmarks_tables_print_their_protocol_line(paper, line, tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path))  # no data here: every cell needs it, the line is printed still
    assert line in report(reproduce(paper)).splitlines()
