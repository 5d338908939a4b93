"""``capeval reproduce`` on the 2024-2026 tables (Pearl, Polos, DENEB, PAC-S++, VELA): the transcribed cells
with their sources, selection by benchmark, ``needs data`` with the exact download, every cell printed as
published | capeval | Δ | status once the data (here: fixtures in the released layout) is present, and cells
that two sources print differently."""

import json

import datasets
import pytest

from capeval.benchmarks import run_benchmark
from capeval.benchmarks.published import published_cells, published_tables
from capeval.benchmarks.reproduce import CellResult, disagreements, items_digest, reproduce
from capeval.benchmarks.table_protocols import PROTOCOLS
from capeval.cli import main

from fixtures.released import POLARIS, write_longcap_arena, write_nebula, write_polaris

NEW_TABLES = {("pearl", "Table 1"), ("polos", "Table 1"), ("captionevalkit", "expected Polaris values"),
              ("deneb", "Table 1"), ("pacs_pp", "Table 1"), ("vela", "Table 1 and Appendix D Table 4")}


@pytest.fixture(autouse=True)
def offline_cache(tmp_path, monkeypatch):
    datasets.disable_progress_bars()
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path / "no-data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield
    datasets.enable_progress_bars()


def test_the_new_tables_are_cells_with_paper_table_row_column_protocol_and_source():
    tables = {(t["paper"], t["table"]): t for t in published_tables()}
    assert NEW_TABLES <= set(tables) and NEW_TABLES <= set(PROTOCOLS)
    for key in NEW_TABLES:
        assert "CaptionEvalKit" in tables[key]["source"] and tables[key]["protocol_words"] and tables[key]["citation"]
    cells = {(c.paper, c.row, c.column): c for c in published_cells()}
    pearl = cells["pearl", "BLEU-4", "Flickr8k-CF τ-b"]
    assert (pearl.printed, pearl.published, pearl.benchmark, pearl.measure) == (16.4, 0.164, "flickr8k_cf", "tau-b")
    assert "16.863" in pearl.note and "arXiv 2512.21582 Table 1" in pearl.source
    assert cells["pacs", "BLEU-4", "F8k-CF τ-b"].printed == 16.863  # the other source, kept
    # Only transcribed cells exist: Pearl's Flickr8k cells of the n-gram metrics are not in its transcription.
    assert ("pearl", "BLEU-4", "Flickr8k-EX τ-c") not in cells
    assert cells["polos", "Polos", "Polaris τ-c"].published == 0.578
    assert cells["captionevalkit", "CIDEr", "Polaris τ-c"].published == 0.521
    assert cells["deneb", "RefPAC-S", "Nebula τ-c"].note == "CLIP ViT-B/32"
    vela = cells["vela", "VELA", "TestB Flu τ-c"]
    assert (vela.published, vela.row_set, vela.benchmark) == (0.39, "TestB flu", "longcap_arena")
    by_paper = {paper: sum(c.paper == paper for c in published_cells()) for paper in ("pearl", "polos", "captionevalkit",
                                                                                        "deneb", "pacs_pp", "vela")}
    assert by_paper == {"pearl": 49, "polos": 9, "captionevalkit": 4, "deneb": 2, "pacs_pp": 6, "vela": 12}
    assert PROTOCOLS["deneb", "Table 1"].settings["nebula"].options == {"scores": "uncorrected"}
    assert PROTOCOLS["pearl", "Table 1"].settings["nebula"].options == {"scores": "corrected"}


def test_cells_two_sources_print_differently_are_listed_with_both_sources():
    def result(cell):
        return CellResult(cell.paper, cell.table, cell.row, cell.column, cell.benchmark, cell.published, None, None, "",
                          "", printed=cell.printed, metric=cell.metric, measure=cell.measure)

    picked = [c for c in published_cells() if c.metric in ("bleu-4", "pac-s") and c.benchmark == "flickr8k_cf"
              and c.measure == "tau-b" and c.paper in ("pacs", "pearl")]
    assert len(picked) == 4
    # BLEU-4: 16.863 against 16.4; PAC-S: 36.037 against 36.0, equal at the coarser rounding.
    assert disagreements([result(c) for c in picked]) == [
        "- flickr8k_cf  bleu-4 tau-b: 16.863 (pacs compute_correlations.py, BLEU-4 / F8k-CF τ-b); 16.4 (pearl Table 1, "
        "BLEU-4 / Flickr8k-CF τ-b)"]


def run_cli(capsys, *argv):
    code = main(["reproduce", *argv])
    return code, capsys.readouterr().out


def test_without_the_data_each_text_cell_names_its_download(tmp_path, capsys):
    output = tmp_path / "cells.json"
    code, out = run_cli(capsys, "polaris", "--output", str(output))
    cells = json.loads(output.read_text())
    assert code == 0 and len(cells) == 11 and {c["benchmark"] for c in cells} == {"polaris"}
    folder = tmp_path / "no-data" / "polaris"
    download = f"hf download yuwd/Polaris polaris_test.csv --repo-type dataset --local-dir {folder}"
    text = [c for c in cells if c["row"] in ("BLEU-4", "ROUGE-L", "METEOR", "CIDEr")]
    assert [c["status"] for c in text] == ["needs data: Polaris"] * 4 and all(download in c["reason"] for c in text)
    weights = {c["row"]: c["status"] for c in cells if c not in text}
    assert weights["Polos"] == "needs the Polos checkpoint (reprod.zip of the Polos release) and the benchmark's images"
    assert weights["SPICE"].startswith("needs SPICE") and weights["CLIP-S"].startswith("needs CLIP ViT-B/32")
    assert f"- needs data: Polaris: Polaris needs its released files in {folder}" in out and download in out
    assert "captionevalkit: 0 of 0 computed cells reproduced (4 printed cells)" in out


#: Nebula's rows but METEOR (whose jar takes half a minute to start here).
ROWS = ["BLEU-4", "ROUGE-L", "CIDEr", "SPICE", "CLIP-S", "PAC-S", "Polos", "RefCLIP-S", "RefPAC-S"]


def test_with_the_data_every_cell_is_printed_published_capeval_delta_status(tmp_path, capsys):
    root = tmp_path / "data"
    folder = write_nebula(root / "nebula")
    output = tmp_path / "cells.json"
    rows = [arg for row in ROWS for arg in ("--row", row)]
    code, out = run_cli(capsys, "nebula", "--data", str(root), "--output", str(output), *rows)
    cells = json.loads(output.read_text())
    assert code == 0 and len(cells) == 16  # Pearl's 16 Nebula cells but METEOR's 2, DENEB's 2
    for c in cells:
        shown = "–" if c["capeval"] is None else f"{c['capeval']:.3f}"
        assert f"| {c['row']} | {c['column']} | {c['published']:.3f} | {shown} |" in out and c["status"]
    computed = {(c["row"], c["column"]): c for c in cells if c["capeval"] is not None}
    assert sorted({row for row, _ in computed}) == ["BLEU-4", "CIDEr", "ROUGE-L"]
    cider = run_benchmark(("cider", {"tokenizer": "ptb"}), "nebula", source=folder, num_samples=0, verbose=False)
    expected = {row.statistic: row.value for row in cider.rows}
    for statistic in ("b", "c"):
        cell = computed["CIDEr", f"Nebula τ-{statistic}"]
        assert cell["capeval"] == pytest.approx(expected[f"tau-{statistic}"])
        assert cell["delta"] == pytest.approx(cell["capeval"] - cell["published"])
        assert cell["status"] == "differs"  # a fixture is not Nebula
    assert all(c["protocol"] == "human tau-c (scores=uncorrected)" for c in cells if c["paper"] == "deneb")
    assert "credited: CaptionEvalKit (commit 23f154b) reports BLEU, ROUGE, METEOR, CIDEr and SPICE reproduced" in out
    # A rerun reads every score from the cache.
    import capeval.benchmarks.harness as harness

    monkeypatch_scoring = pytest.MonkeyPatch()
    monkeypatch_scoring.setattr(harness, "as_scoring_metric", lambda *a, **k: pytest.fail("scored again"))
    try:
        again = tmp_path / "again.json"
        assert run_cli(capsys, "nebula", "--data", str(root), "--output", str(again), *rows)[0] == 0
    finally:
        monkeypatch_scoring.undo()
    assert json.loads(again.read_text()) == cells


def test_polaris_cells_from_the_default_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path / "data"))
    write_polaris(tmp_path / "data" / "polaris")
    cells = {(c.table, c.row): c for c in reproduce("polaris", rows=["BLEU-4", "Polos"])}
    assert cells["expected Polaris values", "BLEU-4"].capeval is not None
    assert cells["expected Polaris values", "BLEU-4"].protocol == "human tau-c"
    assert cells["Table 1", "Polos"].status.startswith("needs the Polos checkpoint")
    # Another data folder in the same process is read afresh: here the human scores run the other way.
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path / "other"))
    write_polaris(tmp_path / "other" / "polaris", rows=[(mt, refs, 1 - score, imgid) for mt, refs, score, imgid in POLARIS])
    other = reproduce("polaris", rows=["BLEU-4"], use_cache=False)[0]
    assert other.capeval == pytest.approx(-cells["expected Polaris values", "BLEU-4"].capeval)


def test_longcap_arena_and_foil(tmp_path, capsys):
    root = tmp_path / "data"
    write_longcap_arena(root / "longcap_arena")
    cells = reproduce("longcap_arena", data_root=root)
    assert len(cells) == 12 and {c.status for c in cells} == {
        "needs VELA, not in capeval: its model code (Ka2ukiMatsuda/VELA: the prompt per mode, how the LongCLIP-L features "
        "enter Qwen2.5-3B-Instruct, the regression head's layout) could not be read; then its regressor checkpoint, "
        "Qwen2.5-3B-Instruct, LongCLIP-L and the benchmark's images"}
    assert [c.row_set for c in cells[:4]] == ["TestA desc", "TestA desc", "TestA rel", "TestA rel"]
    code, out = run_cli(capsys, "foil")
    assert code == 0 and out.startswith("No transcribed table has a foil cell")
    assert "`capeval benchmark --dataset foil`" in out


def test_scores_are_cached_per_split_grouping():
    candidates, references = ["a", "b"], [["x"], ["y"]]
    import numpy as np

    plain = items_digest(candidates, references)
    assert plain == items_digest(candidates, references, [])
    assert items_digest(candidates, references, [np.array([0]), np.array([1])]) != plain


def test_pair_cells_are_the_accuracy_of_their_category_or_the_mean():
    import numpy as np

    from capeval.benchmarks.reproduce import measure
    from capeval.benchmarks.rowsets import Benchmark, Items, PairRows
    from capeval.benchmarks.table_protocols import BenchmarkSetting

    items = Items(["a"] * 6, [["r"]] * 6, ["i"] * 6)
    pairs = PairRows("pairs", "p", np.array([0, 1, 2]), np.array([3, 4, 5]), np.array([1, 1, 0]),
                     np.array(["1-ref", "1-ref", "4-ref"]), categories=("1-ref", "4-ref", "reference-free"), mean=False,
                     ties="fail")
    bench = Benchmark("foil", "FOIL", items, pairs=pairs)
    scores = np.array([0.9, 0.5, 0.2, 0.1, 0.5, 0.7])  # pair 1 ties (fails); pair 2's second item is preferred
    setting = BenchmarkSetting(ties="half")  # the pairs' own tie rule wins
    assert measure(scores, bench, "1-ref", setting) == pytest.approx(50.0)
    assert measure(scores, bench, "4-ref", setting) == pytest.approx(100.0)
    assert measure(scores, bench, "mean", setting) == pytest.approx(75.0)
    half = Benchmark("p", "P", items, pairs=PairRows("pairs", "p", pairs.first, pairs.second, pairs.label, pairs.category,
                                                     ("1-ref", "4-ref"), True, None))
    assert measure(scores, half, "1-ref", setting) == pytest.approx(75.0)


def test_disagreement_is_beyond_the_coarser_rounding():
    def cell(printed, factor=0.01, paper="a"):
        return CellResult(paper, "T", "BLEU-4", "c", "b", None if printed is None else round(printed * factor, 6), None,
                          None, "", "", printed=printed, metric="bleu-4", measure="tau-b")

    # 16.8 and 16.85 differ by exactly half of 16.8's last digit: equal at that rounding.
    assert disagreements([cell(16.8), cell(16.85, paper="b"), cell(None, paper="c")]) == []
    assert len(disagreements([cell(16.8), cell(16.86, paper="b")])) == 1
    assert len(disagreements([cell(0.168, factor=1), cell(16.9, paper="b")])) == 1


def test_selection_by_paper_benchmark_or_all_and_bundled_data_needs_nothing():
    from capeval.benchmarks.reproduce import data_needed, selected_cells

    assert selected_cells("vela") == published_cells("vela")
    assert selected_cells("polaris") == [c for c in published_cells() if c.benchmark == "polaris"]
    assert len(selected_cells("all")) == len(published_cells())
    assert data_needed("thumb") == ""


def test_each_table_is_printed_before_the_next_one_runs_with_a_bar_per_table(capsys, monkeypatch):
    from capeval.benchmarks import reproduce as module

    started, bars = [], []
    run_cells = module.reproduce_cells

    def watched(cells, protocol, **options):
        started.append((cells[0].paper, capsys.readouterr().out))  # what was printed when this table started
        return run_cells(cells, protocol, **options)

    def bar(items, *, desc="", **_):
        bars.append((desc, len(items)))
        return items

    monkeypatch.setattr(module, "reproduce_cells", watched)
    monkeypatch.setattr("capeval.progress.progress", bar)
    assert main(["reproduce", "polaris"]) == 0
    assert [paper for paper, _ in started] == ["polos", "captionevalkit", "expert"]
    assert started[0][1] == "" and started[1][1].startswith("### polos Table 1: 0 of 0 computed cells reproduced (6 cells)")
    assert "captionevalkit" not in started[1][1]  # the second table is printed after it runs
    assert started[2][1].startswith("### captionevalkit expected Polaris values: 0 of 0 computed cells reproduced (4 cells)")
    assert bars == [("table 1/3: polos Table 1", 6), ("table 2/3: captionevalkit expected Polaris values", 4),
                    ("table 3/3: expert Table 2", 1)]
    rest = capsys.readouterr().out
    assert rest.startswith("### expert Table 2: 0 of 0 computed cells reproduced (1 cells)")
    assert rest.rstrip().splitlines()[-3:] == ["polos: 0 of 0 computed cells reproduced (6 printed cells)",
                                               "captionevalkit: 0 of 0 computed cells reproduced (4 printed cells)",
                                               "expert: 0 of 0 computed cells reproduced (1 printed cells)"]


def test_the_printed_tables_are_the_report(capsys):
    from capeval.benchmarks.reproduce import report

    assert main(["reproduce", "polaris"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(report(reproduce("polaris")) + "\n\n")


def test_spice_rows_run_where_spice_is_installed(monkeypatch):
    from capeval.benchmarks import published

    monkeypatch.setattr("capeval.scoring.spice.spice_ready", lambda: False)
    assert published.ROW_METRICS["spice"].resolve() == (
        None, "needs SPICE's Java runtime and Stanford CoreNLP 3.6.0 (`capeval download spice`)")
    monkeypatch.setattr("capeval.scoring.spice.spice_ready", lambda: True)
    assert published.ROW_METRICS["spice"].resolve() == (("spice", {}, "spice"), "")
    # The table's tokenizer applies to SPICE (BLEU's smoothing does not).
    from capeval.benchmarks.reproduce import row_spec

    cell = next(c for c in published_cells("polos") if c.metric == "spice")
    assert PROTOCOLS[(cell.paper, cell.table)].toolkit == {"tokenizer": "ptb"}
    assert row_spec(cell, PROTOCOLS[(cell.paper, cell.table)]) == (("spice", {"tokenizer": "ptb"}, "spice"), "")


def test_a_cell_takes_its_tables_statistic_unless_it_prints_its_own():
    from capeval.benchmarks.published import ROW_METRICS
    from capeval.benchmarks.reproduce import reproduce_cells

    # Cells whose rows need weights: nothing is computed, the statistic is still named.
    cells = [c for c in published_cells("bert_tbr") if ROW_METRICS[c.metric].spec is None]
    seen = set()
    for key in dict.fromkeys((c.paper, c.table) for c in cells):
        of_table = [c for c in cells if (c.paper, c.table) == key]
        for cell, result in zip(of_table, reproduce_cells(of_table, PROTOCOLS[key])):
            setting = PROTOCOLS[key].settings[cell.benchmark]
            assert result.measure == (setting.statistic if cell.measure == "tau" else cell.measure)
            seen.add((cell.measure, result.measure))
    assert ("tau", "tau-b") in seen and ("HC", "HC") in seen


def test_a_table_with_one_cell_is_printed(capsys):
    assert main(["reproduce", "polaris", "--row", "BLEU-4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### captionevalkit expected Polaris values: 0 of 0 computed cells reproduced (1 cells)")
    assert "| BLEU-4 | Polaris τ-c | 0.463 | – | – | needs data: Polaris |" in out and "### polos" not in out
