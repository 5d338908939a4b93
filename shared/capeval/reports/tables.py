"""The one markdown-table writer of the command line, the harness and the reports."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub markdown table; line breaks inside cells become spaces.

    >>> print(markdown_table(["metric", "τ-b"], [["bleu", "0.321"], ["cider\\nD", "0.468"]]))
    | metric | τ-b |
    |---|---|
    | bleu | 0.321 |
    | cider D | 0.468 |
    """
    def line(cells: Sequence[Any]) -> str:
        return "| " + " | ".join(str(cell).replace("\n", " ") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])
