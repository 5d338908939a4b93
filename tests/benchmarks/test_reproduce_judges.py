"""The language-model judges' published cells in ``capeval reproduce``: FLEUR and RefFLEUR (FLEUR Table 1) and EXPERT
(EXPERT Table 2) as CaptionEvalKit-for-VLMs transcribes them, CLAIR's Tables 1 and 3 as its paper prints them; each
cell says what computes it (the judge's weights and the images, or a judge server) with its source."""

import json

import pytest

from capeval.benchmarks.published import published_cells
from capeval.benchmarks.reproduce import report, reproduce
from capeval.cli import main

LLAVA = "LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf)"
CEK = "CaptionEvalKit-for-VLMs (YuigaWada/CaptionEvalKit-for-VLMs, commit 23f154b)"


def printed(paper):
    return {(c.table, c.row, c.column): c.printed for c in published_cells(paper)}


def test_the_judges_cells_are_the_printed_numbers():
    assert printed("fleur") == {
        ("Table 1", "FLEUR", "Composite τ-c"): 63.5, ("Table 1", "FLEUR", "Flickr8k-EX τ-c"): 53.0,
        ("Table 1", "FLEUR", "Flickr8k-CF τ-b"): 38.6, ("Table 1", "RefFLEUR", "Composite τ-c"): 64.2,
        ("Table 1", "RefFLEUR", "Flickr8k-EX τ-c"): 51.9, ("Table 1", "RefFLEUR", "Flickr8k-CF τ-b"): 38.8}
    assert printed("expert") == {("Table 2", "EXPERT", column): value for column, value in [
        ("Composite τ-c", 65.0), ("Flickr8k-EX τ-c", 56.7), ("Flickr8k-CF τ-b", 39.3), ("Polaris τ-c", 61.1),
        ("Nebula τ-c", 54.9)]}
    clair = printed("clair")
    assert [clair["Table 1", row, column] for row in ("CLAIR + GPT3.5", "CLAIR + Claude", "CLAIR + PaLM", "CLAIRE")
            for column in ("COMPOSITE", "Flickr8K", "MS-COCO")] == [0.604, 0.616, 0.296, 0.542, 0.563, 0.320, 0.580,
                                                                     0.546, 0.355, 0.592, 0.627, 0.374]
    assert [clair["Table 3", "CLAIRE", column] for column in ("HC", "HI", "HM", "MM", "All")] == [57.7, 99.8, 94.6, 75.6,
                                                                                                  81.93]
    assert len(clair) == 32 and clair["Table 3", "CLAIR + GPT3.5", "All"] == 78.67
    cells = {(c.row, c.column): c for c in published_cells("fleur") + published_cells("expert")}
    assert (cells["EXPERT", "Polaris τ-c"].published, cells["EXPERT", "Polaris τ-c"].measure) == (0.611, "tau-c")
    assert cells["FLEUR", "Flickr8k-CF τ-b"].benchmark == "flickr8k_cf"


def statuses(paper):
    return {(r.row, r.column): r.status for r in reproduce(paper)}


def test_each_judge_cell_says_what_computes_it():
    command = "`capeval benchmark --metric {} --images DIR` computes it"
    assert set(statuses("fleur").items()) == {
        *(((row, column), f"needs {LLAVA} and the benchmark's images: " + command.format(spec))
          for row, spec in (("FLEUR", "fleur"), ("RefFLEUR", "fleur:reference_based=true"))
          for column in ("Composite τ-c", "Flickr8k-EX τ-c", "Flickr8k-CF τ-b"))}
    assert set(statuses("expert").values()) == {
        f"needs {LLAVA} with the EXPERT LoRA (hjkim811/EXPERT-llava-13b-lora) and the benchmark's images: "
        + command.format("expert")}
    clair = statuses("clair")
    assert clair["CLAIR + GPT3.5", "Flickr8K"] == clair["CLAIR + GPT3.5", "HC"] == (
        "needs an OpenAI-compatible server serving the paper's GPT-3.5 judge (the released code's gpt-3.5-turbo): "
        "`capeval benchmark --metric 'clair:base_url=URL,model=gpt-3.5-turbo'` computes it")
    assert clair["CLAIRE", "All"] == (
        "needs an OpenAI-compatible server serving the paper's three judges (GPT-3.5, Claude, PaLM; CLAIR_E is the mean "
        "of their scores): `capeval benchmark --metric 'clair:base_url=URL,model=A;B;C'` computes it")
    assert clair["CLAIR + Claude", "COMPOSITE"].startswith("needs an OpenAI-compatible server serving the paper's Claude "
                                                           "judge (its version is not stated)")
    assert {clair[row, "MS-COCO"] for row in ("CLAIR + GPT3.5", "CLAIRE")} == {
        "needs the MS-COCO ratings of Rohrbach et al. (2018): 500 Karpathy-test images, 5 models' captions (not in capeval)"}


@pytest.mark.parametrize("paper, source", [
    ("fleur", f"read from FLEUR Table 1, as transcribed in {CEK} benchmarks/expected/fleur/<benchmark>.json"),
    ("expert", f"read from EXPERT Table 2, as transcribed in {CEK} benchmarks/expected/expert/<benchmark>.json"),
    ("clair", "read from the paper's PDF in DavidMChan/clair (commit 429fa8b)"),
])
def test_each_judge_table_names_its_source(paper, source):
    sources = [line for line in report(reproduce(paper)).splitlines() if line.startswith("Source: ")]
    assert sources and all(source in line for line in sources)


def test_reproduce_clair_on_the_command_line(tmp_path, capsys):
    assert main(["reproduce", "clair", "--output", str(tmp_path / "clair.json")]) == 0
    out = capsys.readouterr().out
    cells = json.loads((tmp_path / "clair.json").read_text())
    assert len(cells) == 32 and all(c["capeval"] is None and c["status"].startswith("needs ") for c in cells)
    assert "clair: 0 of 0 computed cells reproduced (32 printed cells)" in out

