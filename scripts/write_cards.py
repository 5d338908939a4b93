#!/usr/bin/env python
"""Rewrite each metric card's option table (``metrics/<name>/README.md``) from its scorer's declaration."""

from pathlib import Path

from capeval.registry import METRICS
from capeval.reports.cards import update_card


def main() -> None:
    for name, entry in METRICS.items():
        if entry.folder is None:
            continue
        card = Path(entry.folder) / "README.md"
        text = card.read_text(encoding="utf-8")
        updated = update_card(text, entry.scorer_class())
        if updated != text:
            card.write_text(updated, encoding="utf-8")
            print(f"rewrote {card}")


if __name__ == "__main__":
    main()
