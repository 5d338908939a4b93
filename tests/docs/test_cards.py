"""Every card and README renders as written: no code span that swallows the text after it, no dead relative
link, no table whose rows have different widths (GitHub and the Hub render CommonMark with GFM tables)."""

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from markdown_it import MarkdownIt

from fixtures import REPO, load_script

DOCUMENTS = sorted([REPO / "README.md", *REPO.glob("metrics/*/README.md"), *REPO.glob("hub/*/README.md"),
                    *REPO.glob("docs/**/*.md")])
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
# A cell boundary is a pipe not escaped with a backslash.
CELL_BOUNDARY = re.compile(r"(?<!\\)\|")
#: The pages scripts/docs_hooks.py makes from the cards at build time (docs/metrics/bleu.md from metrics/bleu/README.md).
docs_hooks = load_script("docs_hooks")
GENERATED_PAGES = {REPO / "docs" / page for section in docs_hooks.CARD_SECTIONS for page, _ in docs_hooks.cards(section)}


def table_row_width(line: str) -> int:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return len(CELL_BOUNDARY.split(row))


def rendering_problems(text: str, source: Path) -> list[str]:
    """Line-numbered problems of one Markdown document (its YAML front matter is skipped)."""
    front = FRONT_MATTER.match(text)
    if front:  # blank lines keep the line numbers of the body
        text = "\n" * front.group(0).count("\n") + text[front.end():]
    lines = text.splitlines()
    problems = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        line = token.map[0] + 1 if token.map else 0
        if token.type == "table_open":
            start, end = token.map
            widths = {table_row_width(row) for row in lines[start:end] if row.strip()}
            if len(widths) > 1:
                problems.append(f"line {line}: table rows have {sorted(widths)} cells")
        elif token.type == "paragraph_open" and re.match(r"\s*\|.*\|\s*$", lines[token.map[0]]):
            problems.append(f"line {line}: a table whose delimiter row does not match its header renders as text")
        elif token.type == "inline":
            for child in token.children or ():
                if child.type == "text" and "`" in child.content:
                    problems.append(f"line {line}: unmatched backtick before {child.content[child.content.index('`'):][:40]!r}")
                elif child.type == "code_inline" and "`" in child.content and child.markup == "`":
                    problems.append(f"line {line}: code span `{child.content[:40]}` holds a backtick: use a longer delimiter")
                elif child.type in ("link_open", "image"):
                    target = child.attrs.get("href") or child.attrs.get("src") or ""
                    parsed = urlparse(target)
                    if parsed.scheme or parsed.netloc or not parsed.path:
                        continue
                    linked = (source.parent / unquote(parsed.path)).resolve()
                    if not (linked.exists() or linked in GENERATED_PAGES):
                        problems.append(f"line {line}: dead link {target!r}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_document_renders_as_written(document):
    assert rendering_problems(document.read_text(encoding="utf-8"), document) == []


@pytest.mark.parametrize("text, problem", [
    ("A `stray backtick.\n", "line 1: unmatched backtick before '`stray backtick.'"),
    ("Run `a `` b` and `c`.\n", "line 1: code span `a `` b` holds a backtick: use a longer delimiter"),
    ("See [the card](no/such/README.md).\n", "line 1: dead link 'no/such/README.md'"),
    ("\n| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "line 2: table rows have [2, 3] cells"),
    ("| a | b |\n|---|\n| 1 | 2 |\n", "line 1: a table whose delimiter row does not match its header renders as text"),
])
def test_each_problem_is_found(text, problem, tmp_path):
    assert rendering_problems(text, tmp_path / "README.md") == [problem]


def test_well_formed_markdown_passes(tmp_path):
    (tmp_path / "docs").mkdir()
    text = ("---\ntitle: x\n---\n# Card\n\nTokens ``` `` ` ``` and `x|y`; [docs](docs) and [web](https://example.org).\n\n"
            "| a | b \\| c |\n|---|---|\n| 1 | 2 |\n")
    assert rendering_problems(text, tmp_path / "README.md") == []
