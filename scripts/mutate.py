"""One-line mutation testing: apply each single-token mutation of a module in turn, run the given tests, and count
the mutants the tests kill (fail or time out) against those that survive.

    python scripts/mutate.py shared/capeval/benchmarks/stats.py "tests/benchmarks/test_benchmarks_stats.py" [--limit 60] \
        [--new-tests "tests/reliability/test_stats_options.py -k seed"]

With ``--new-tests``, a mutant the tests leave alive is run against these too, which gives the score before
and after them in one pass (a mutant the first tests kill is killed by both sets).

Mutations (one per line and kind, in a deterministic order): comparison and arithmetic operators swapped
(``<``/``<=``, ``==``/``!=``, ``+``/``-``, ``*``/``/``), ``and``/``or``, ``True``/``False``, ``min``/``max``, integer
constants ± 1, and ``return x`` → ``return None``. Docstrings and comments are left alone. The module file is
restored after every run (and on interrupt). Prints one line per mutant and the killed/total score; ``--json``
writes the survivors for reading.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time
import tokenize
from pathlib import Path
from typing import Iterator

SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "+": "-", "-": "+", "*": "/", "/": "*",
         "//": "/", "and": "or", "or": "and", "True": "False", "False": "True", "min": "max", "max": "min",
         "is": "is not", "in": "not in"}


def mutations(source: str) -> list[tuple[int, str, str]]:
    """(line number, description, mutated line) for every one-token mutation of a code line."""
    lines = source.splitlines()
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        row, col = token.start
        if row > len(lines) or token.type in (tokenize.STRING, tokenize.COMMENT):
            continue
        line = lines[row - 1]
        if line.lstrip().startswith(("def ", "class ", "import ", "from ", "@")):
            continue
        replacement = None
        if token.type in (tokenize.OP, tokenize.NAME) and token.string in SWAPS:
            if token.string == "-" and line[:col].rstrip().endswith(("(", "[", ",", "=", "return")):
                continue  # unary minus
            if token.string == "in" and line[:col].rstrip().endswith("not"):
                continue
            if token.string == "*" and line[:col].rstrip().endswith(("(", ",")):
                continue  # star-args
            replacement = SWAPS[token.string]
        elif token.type == tokenize.NUMBER and re.fullmatch(r"\d+", token.string):
            replacement = str(int(token.string) + 1)
        elif token.type == tokenize.NAME and token.string == "return" and line[token.end[1]:].strip():
            found.append((row, f"{line.strip()[:60]} -> return None", line[:col] + "return None"))
            continue
        if replacement is not None:
            mutated = line[:col] + replacement + line[token.end[1]:]
            found.append((row, f"{token.string} -> {replacement}: {line.strip()[:70]}", mutated))
    return found


def definitions(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.stmt]]:
    """(name, node) of the top-level functions and of the methods of top-level classes, named ``Class.method``."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef) and not prefix:
            yield from definitions(node.body, f"{node.name}.")


def run_tests(tests: list[str], timeout: float) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "killed (timeout)"
    return "survived" if done.returncode == 0 else "killed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("tests", type=shlex.split, help="pytest arguments, one string")
    parser.add_argument("--functions", type=lambda text: text.split(","), default=None,
                        help="mutate only these functions (comma-separated; a method as Class.method)")
    parser.add_argument("--limit", type=int, default=0, help="a seeded random sample of this many mutants (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--new-tests", type=shlex.split, default=[], help="pytest arguments run on the survivors of the first ones")
    parser.add_argument("--json", help="write every mutant and its outcome here")
    args = parser.parse_args()
    path = Path(args.module)
    original = path.read_text()
    candidates = mutations(original)
    if args.functions:
        defined = dict(definitions(ast.parse(original).body))
        unknown = sorted(set(args.functions) - set(defined))
        if unknown:
            print(f"{path} defines no {', '.join(unknown)} (a method is named Class.method)", file=sys.stderr)
            return 1
        spans = [(defined[name].lineno, defined[name].end_lineno) for name in args.functions]
        candidates = [c for c in candidates if any(first <= c[0] <= last for first, last in spans)]
    if args.limit and len(candidates) > args.limit:
        candidates = sorted(random.Random(args.seed).sample(candidates, args.limit))
    if run_tests(args.tests, args.timeout) != "survived":
        print("the tests fail on the unmutated module", file=sys.stderr)
        return 1
    outcomes = []
    try:
        for row, description, mutated in candidates:
            lines = original.splitlines(keepends=True)
            lines[row - 1] = mutated + ("\n" if lines[row - 1].endswith("\n") else "")
            path.write_text("".join(lines))
            start = time.monotonic()
            outcome = run_tests(args.tests, args.timeout)
            if outcome == "survived" and args.new_tests:
                new = run_tests(args.new_tests, args.timeout)
                outcome = "survived" if new == "survived" else f"{new} by the new tests"
            outcomes.append({"line": row, "mutation": description, "outcome": outcome})
            print(f"{outcome:>16}  {path.name}:{row}  {description}  ({time.monotonic() - start:.0f} s)", flush=True)
    finally:
        path.write_text(original)
    before = sum(o["outcome"] != "survived" and not o["outcome"].endswith("by the new tests") for o in outcomes)
    after = sum(o["outcome"] != "survived" for o in outcomes)
    print(f"{path}: {before}/{len(outcomes)} mutants killed" + (f", {after}/{len(outcomes)} with the new tests" if args.new_tests else "")
          + f" ({len(mutations(original))} possible)")
    if args.json:
        Path(args.json).write_text(json.dumps(outcomes, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
