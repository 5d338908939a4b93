#!/usr/bin/env python
"""Write every speed figure of the docs from the stored result files of the speed suite (``speed/results/*.json``,
written by ``python speed/run.py NAME... --output speed/results/FILE.json``), so that none is copied by hand.

A figure stands between markers naming the benchmarks it comes from, in the README, ``docs/*.md`` and the cards
(``metrics/<name>/README.md``)::

    <!-- speed table coco meteor: written from speed/results by scripts/write_speed.py; do not edit -->
    ...
    <!-- /speed -->

``table`` writes each benchmark's table (every side and mode: CPU and wall seconds, rate, peak RSS; then the ratios
and the largest difference of the outputs), labelled with the machine, the load average, the date, the command and
the result file; ``summary`` one row per comparison (the ratios by mode). A benchmark without a stored result is
named as such and no figure of it is printed. Where several files hold a benchmark, the latest measurement counts;
results of ``--quick`` runs (``speed/results/quick.json``, the regression check's reference) are not printed.

``python scripts/write_speed.py`` rewrites what is stale; ``--check`` names the stale files and writes nothing.
scripts/write_cards.py runs it too.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "speed"))

from harness import read_result  # noqa: E402  (speed/ is on sys.path)
from tables import benchmark_markdown, machine_line, times  # noqa: E402

SECTION = re.compile(r"(?P<begin><!-- speed (?P<kind>table|summary) (?P<names>[\w ]+?): written from speed/results by "
                     r"scripts/write_speed\.py; do not edit -->)(?P<body>.*?)(?P<end><!-- /speed -->)", re.DOTALL)


def documents(repo: Path) -> list[Path]:
    """The files that may hold speed sections: the README, the docs and the cards."""
    return [repo / "README.md", *sorted((repo / "docs").glob("**/*.md")), *sorted((repo / "metrics").glob("*/README.md"))]


def stored_results(repo: Path) -> dict[str, tuple[str, dict, dict]]:
    """Each benchmark's latest stored measurement: ``name -> (result file, the file's result, the benchmark's)``."""
    found: dict[str, tuple[str, dict, dict]] = {}
    for path in sorted((repo / "speed" / "results").glob("*.json")):
        result = read_result(path)
        if result.get("quick"):
            continue
        for name, benchmark in result["benchmarks"].items():
            if benchmark.get("skipped"):
                continue
            if name not in found or result["date"] > found[name][1]["date"]:
                found[name] = (path.relative_to(repo).as_posix(), result, benchmark)
    return found


def summary(names: list[str], results: dict) -> str:
    rows = ["| benchmark | comparison | mode | CPU-time ratio | wall-time ratio | outputs | measured on |",
            "|---|---|---|---|---|---|---|"]
    missing = []
    for name in names:
        if name not in results:
            missing.append(name)
            continue
        source, result, benchmark = results[name]
        for row in benchmark.get("comparisons", []):
            mode = row["ours_mode"] if row["ours_mode"] == row["peer_mode"] else f"{row['ours_mode']} vs {row['peer_mode']}"
            outputs = "not compared" if "equal" not in row else ("equal" if row["max_abs_diff"] == 0 else (
                f"within {row['max_abs_diff']:.0e}" if row["equal"] else "**differ**"))
            sides = benchmark["sides"]
            rows.append(f"| `{name}` | {sides[row['ours']].get('label', row['ours'])} vs {sides[row['peer']].get('label', row['peer'])} "
                        f"| {mode} | {times(row['cpu_ratio'])} | {times(row['wall_ratio'])} | {outputs} | "
                        f"{machine_line(result, benchmark)} (`{source}`) |")
    text = "\n".join(rows)
    return text + "".join(f"\n\n{none(name)}" for name in missing)


def none(name: str) -> str:
    return f"No stored result for `{name}` (`python speed/run.py {name}`): no figure of it is printed."


def section_body(kind: str, names: list[str], results: dict) -> str:
    if kind == "summary":
        return summary(names, results)
    parts = []
    for name in names:
        if name in results:
            source, result, benchmark = results[name]
            parts.append(benchmark_markdown(name, benchmark, result, source))
        else:
            parts.append(none(name))
    return "\n\n".join(parts)


def rewrite(text: str, results: dict) -> str:
    """``text`` with every speed section written from ``results``."""
    def body(match: re.Match) -> str:
        written = section_body(match["kind"], match["names"].split(), results)
        return f"{match['begin']}\n\n{written}\n\n{match['end']}"
    return SECTION.sub(body, text)


def cited(text: str) -> list[str]:
    """The benchmarks a text's speed sections name."""
    return [name for match in SECTION.finditer(text) for name in match["names"].split()]


def generate(repo: Path, texts: dict[Path, str] | None = None) -> tuple[dict[Path, str], list[str]]:
    """The new text of every document holding a speed section (``texts``: documents already rewritten by another
    writer, read from there instead of the disk), and a line for each problem."""
    texts = texts or {}
    if not (repo / "speed" / "results").is_dir():  # a partial copy of a checkout: nothing to write the figures from
        return {}, []
    try:
        results = stored_results(repo)
    except (OSError, ValueError, KeyError) as error:
        return {}, [f"speed/results: {error}"]
    files, problems = {}, []
    for path in documents(repo):
        text = texts[path] if path in texts else path.read_text(encoding="utf-8")
        if "<!-- speed " not in text:
            continue
        files[path] = rewrite(text, results)
        if text.count("<!-- speed ") != len(SECTION.findall(text)):
            problems.append(f"{path.relative_to(repo)}: a speed section without its <!-- /speed --> end, or a malformed marker")
    return files, problems


def run_writer(generate_files, script: str, doc: str, argv: list[str] | None = None) -> int:
    """The command line of a docs writer (this one and ``write_cards.py``): write what ``generate_files(repo)`` says is
    stale, or with ``--check`` name it and write nothing; 1 on a problem or, with ``--check``, a stale file."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="name the stale files, write nothing")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to write (default: this script's)")
    args = parser.parse_args(argv)
    files, problems = generate_files(args.repo)
    stale = [path for path, text in files.items() if path.read_text(encoding="utf-8") != text]
    for path in stale:
        if args.check:
            print(f"{path.relative_to(args.repo)} is stale: run python scripts/{script}", file=sys.stderr)
        else:
            path.write_text(files[path], encoding="utf-8")
            print(f"rewrote {path.relative_to(args.repo)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems or (args.check and stale) else 0


def main(argv: list[str] | None = None) -> int:
    return run_writer(generate, "write_speed.py", __doc__, argv)

if __name__ == "__main__":
    sys.exit(main())
