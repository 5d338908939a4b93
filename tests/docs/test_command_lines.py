"""Every ``capeval …`` command line in the README, the docs and the cards parses with capeval's own argument parser
(``capeval.cli.build_parser``, with the named command's arguments), in shell code blocks and in inline code alike:
a renamed flag (``--out``), an unknown command, flag or metric, a missing required argument or a value outside a
flag's choices fails here rather than for a reader. An inline mention of a command alone (``capeval benchmark``) only
has to name a command."""

import contextlib
import io
import re
import shlex

import pytest
from markdown_it import MarkdownIt

from capeval.cli import COMMANDS, build_parser
from capeval.registry import METRICS, split_spec
from capeval.scoring.protocol import scorer_options
from capeval.usage import UsageError
from fixtures import REPO

DOCUMENTS = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("metrics/*/README.md"),
                    *REPO.glob("hub/*/README.md"), *REPO.glob("spaces/*/README.md")])
SHELL = {"", "bash", "sh", "shell", "console"}
#: The flags whose values are metric specs (``name:key=value,...``) or comma-separated metric names.
METRIC_FLAGS = {"--metric": "spec", "--offline": "names"}


def command_lines(text: str) -> list[tuple[int, str, bool]]:
    """``(line number, command line, whole)`` for every ``capeval`` command in ``text``: each line of a shell code block
    (continuation lines joined) and each inline code span that starts with ``capeval ``; ``whole`` is false for an
    inline span that names a command alone."""
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "fence" and token.info.strip().split(" ")[0] in SHELL:
            joined = re.sub(r"\\\n\s*", "", token.content)
            for offset, line in enumerate(joined.split("\n")):
                line = line.removeprefix("$ ").strip()
                if line == "capeval" or line.startswith("capeval "):
                    found.append((token.map[0] + 2 + offset, line, True))
        elif token.type == "inline":
            for child in token.children or ():
                if child.type == "code_inline" and child.content.startswith("capeval "):
                    words = child.content.split()
                    found.append((token.map[0] + 1, " ".join(words), len(words) > 2 or words[1].startswith("-")))
    return found


def metric_problem(flag: str, value: str) -> str:
    """What is wrong with the value of a flag that names metrics ('' when nothing is)."""
    for spec in [value] if METRIC_FLAGS[flag] == "spec" else value.split(","):
        name, pairs = split_spec(spec)
        if name not in METRICS:
            return f"{flag} {value}: no capeval metric {name!r}"
        unknown = sorted({pair.partition("=")[0] for pair in pairs} - set(scorer_options(METRICS[name].scorer_class())))
        if unknown:
            return f"{flag} {value}: {name} has no option(s) {unknown}"
    return ""


def parse_problem(line: str, whole: bool = True) -> str:
    """Why ``capeval``'s parser refuses this command line ('' when it takes it), as the parser says it."""
    args = shlex.split(line, comments=True)[1:]
    if not whole:
        return "" if args[0] in COMMANDS else f"no capeval command {args[0]!r}"
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            build_parser(args).parse_args(args)
    except SystemExit as exit:
        if exit.code:  # --help and --version exit 0
            return said.getvalue().strip().splitlines()[-1]
    except UsageError as error:  # a renamed flag
        return str(error)
    for flag, value in zip(args, args[1:]):
        if flag in METRIC_FLAGS and (problem := metric_problem(flag, value)):
            return problem
    return ""


def test_command_lines_are_found_in_shell_blocks_and_inline_code():
    text = ("Run `capeval score`, `capeval --version` or\n`capeval score --metric\n bleu`:\n\n```bash\n$ capeval score \\\n"
            "  --metric bleu  # BLEU\ncapeval-like words\n```\n\n```python\ncapeval score\n```\n")
    assert command_lines(text) == [(1, "capeval score", False), (1, "capeval --version", True),
                                   (1, "capeval score --metric bleu", True), (6, "capeval score --metric bleu  # BLEU", True)]


@pytest.mark.parametrize("line, problem", [
    ("capeval benchmark --metric bleu --dataset all --out results/", "--out is spelled --output now"),
    ("capeval scroe", "capeval: error: argument COMMAND: invalid choice: 'scroe'"),
    ("capeval score --metrics bleu", "--metrics is spelled --metric NAME (repeatable)"),
    ("capeval score --metric blue", "--metric blue: no capeval metric 'blue'"),
    ("capeval score --offline bleu,cidr", "--offline bleu,cidr: no capeval metric 'cidr'"),
    ("capeval score --metric bleu:max_order=2", "--metric bleu:max_order=2: bleu has no option(s) ['max_order']"),
    ("capeval benchmark --metric bleu", "capeval benchmark: error: the following arguments are required: --dataset"),
    ("capeval reproduce every", "capeval reproduce: error: argument paper: invalid choice: 'every'"),
    ("capeval score --engine spark", "capeval score: error: argument --engine: invalid choice: 'spark'"),
])
def test_a_wrong_command_line_is_refused_as_the_parser_says(line, problem):
    assert parse_problem(line).startswith(problem)  # argparse quotes the choices it lists differently across Pythons


def test_a_command_named_alone_must_exist():
    assert parse_problem("capeval benchmark", whole=False) == ""
    assert parse_problem("capeval bench", whole=False) == "no capeval command 'bench'"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_command_line_in_the_docs_parses(document):
    problems = [f"line {number}: {line}: {problem}" for number, line, whole in command_lines(document.read_text(encoding="utf-8"))
                if (problem := parse_problem(line, whole))]
    assert problems == []


def test_the_docs_show_every_command():
    """The lines checked here cover every command, so each has a documented, parsed example."""
    shown = {shlex.split(line, comments=True)[1] for document in DOCUMENTS
             for _, line, whole in command_lines(document.read_text(encoding="utf-8")) if whole and line != "capeval"}
    assert set(COMMANDS) <= shown
