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


def score_text(value: float | None, digits: int = 4) -> str:
    """A score as capeval prints it: ``digits`` decimals, so ``0`` and ``0.3433`` line up; a nonzero value too small
    for them in two significant digits (never a ``0.0000`` that is not zero); blank for none.

    >>> score_text(0.0), score_text(0.343291), score_text(5.30832), score_text(1.5e-08), score_text(-3e-9), score_text(None)
    ('0.0000', '0.3433', '5.3083', '1.5e-08', '-3e-09', '')
    >>> score_text(4e-05), score_text(5e-05)  # the first value that rounds to 0.0001 keeps its decimals
    ('4e-05', '0.0001')
    """
    if value is None:
        return ""
    return f"{value:.2g}" if value and abs(value) < 0.5 * 10 ** -digits else f"{value:.{digits}f}"
