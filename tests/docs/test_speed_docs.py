"""Every speed figure of the README, the docs and the cards is written by scripts/write_speed.py from a result file
stored in speed/results/: a table that disagrees with its result file fails here, every benchmark the docs cite is one
the suite lists, every stored result carries its machine record, and no speed figure stands outside the sections the
writer owns."""

import re
import sys

import pytest

from fixtures import REPO, load_script

write_speed = load_script("write_speed")
sys.path.insert(0, str(REPO / "speed"))
import harness  # noqa: E402
from benchmarks import BENCHMARKS  # noqa: E402

DOCUMENTS = write_speed.documents(REPO)
#: What a speed figure looks like in prose: a rate, a ratio said of a mode or a peer, seconds of a mode or of CPU.
FIGURE = re.compile(r"\d[\d,.]*\s*(?:captions|questions|images|rows|pairs|descriptions)/s\b"
                    r"|\d(?:\.\d+)?\s?[×x]\s+(?:cold|warm|faster|slower|fewer|less|more|the|pycocoevalcap|over)\b"
                    r"|\d(?:\.\d+)?[×x] (?:/|vs)|\b\d+(?:\.\d+)? s (?:cold|warm|of CPU|CPU)\b|\bCPU s\b")


def test_every_speed_section_is_what_its_result_file_writes():
    files, problems = write_speed.generate(REPO)
    assert problems == []
    assert files, "no document holds a speed section"
    stale = [str(path.relative_to(REPO)) for path, text in files.items() if path.read_text(encoding="utf-8") != text]
    assert stale == [], "run python scripts/write_speed.py"


def test_a_table_that_disagrees_with_its_result_file_is_rewritten():
    text = (REPO / "docs" / "speed.md").read_text(encoding="utf-8")
    results = write_speed.stored_results(REPO)
    assert write_speed.rewrite(text, results) == text
    figure = re.search(r"\| (\d+\.\d\d+) \|", text)
    assert figure, "docs/speed.md shows no figure"
    edited = text.replace(figure.group(0), f"| {float(figure.group(1)) * 2:.2f} |", 1)
    assert write_speed.rewrite(edited, results) == text


def test_a_benchmark_without_a_stored_result_prints_no_figure():
    marker = "<!-- speed table nothing_stored: written from speed/results by scripts/write_speed.py; do not edit -->"
    written = write_speed.rewrite(f"{marker}\n| 1.00× |\n<!-- /speed -->", write_speed.stored_results(REPO))
    assert "1.00×" not in written and "No stored result for `nothing_stored`" in written


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_cited_benchmark_is_listed_and_no_figure_stands_outside_a_section(document):
    text = document.read_text(encoding="utf-8")
    cited = write_speed.cited(text) + re.findall(r"python speed/run\.py ((?:[a-z0-9_]+ ?)+)", text)
    names = {name for entry in cited for name in entry.split()}
    assert names <= set(BENCHMARKS), sorted(names - set(BENCHMARKS))
    outside = write_speed.SECTION.sub("", text)
    assert FIGURE.findall(outside) == [], "a speed figure outside a section written from speed/results"


def test_every_stored_result_carries_its_machine_and_modes():
    paths = sorted((REPO / "speed" / "results").glob("*.json"))
    assert paths
    for path in paths:
        result = harness.read_result(path)
        assert result["date"] and result["command"] and result["machine"]["cpu"] and result["machine"]["cores"], path.name
        for name, benchmark in result["benchmarks"].items():
            assert name in BENCHMARKS, f"{path.name}: {name} is not declared"
            if benchmark.get("skipped"):
                continue
            assert benchmark["data"]["items"] > 0 and benchmark["sides"], f"{path.name}: {name}"
            for side in benchmark["sides"].values():
                assert "skipped" in side or "failed" in side or side["runs"], f"{path.name}: {name}"


def test_the_docs_cite_every_stored_benchmark():
    cited = {name for document in DOCUMENTS for name in write_speed.cited(document.read_text(encoding="utf-8"))}
    assert set(write_speed.stored_results(REPO)) <= cited
