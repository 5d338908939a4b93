"""MkDocs hooks (mkdocs.yml ``hooks:``): the metric and dataset cards become documentation pages at build time.

Each ``metrics/<name>/README.md`` becomes ``metrics/<name>.md`` and each ``hub/<name>/README.md``
``datasets/<name>.md``, without the Hub's YAML header, so the cards stay the one source; the pages join the
navigation under "Metrics" and "Datasets", titled by the card's ``title`` (or ``pretty_name``).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from mkdocs.structure.files import File

REPO = Path(__file__).resolve().parents[1]
#: Navigation section -> (folder of card folders, folder of the generated pages).
CARD_SECTIONS = {"Metrics": (REPO / "metrics", "metrics"), "Datasets": (REPO / "hub", "datasets")}


def split_card(text: str) -> tuple[dict, str]:
    """A card's YAML header (``{}`` without one) and its markdown body.

    >>> split_card("---\\ntitle: BLEU\\n---\\n# Card\\n")
    ({'title': 'BLEU'}, '# Card\\n')
    """
    if not text.startswith("---\n"):
        return {}, text
    header, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(header) or {}, body


def cards(section: str) -> list[tuple[str, Path]]:
    """(page path, card) for every card folder of a navigation section, sorted by folder name."""
    folder, pages = CARD_SECTIONS[section]
    return [(f"{pages}/{card.parent.name}.md", card) for card in sorted(folder.glob("*/README.md"))]


def page(card: Path) -> str:
    """The documentation page of one card: its body, then where it comes from."""
    _, body = split_card(card.read_text(encoding="utf-8"))
    return f"{body.rstrip()}\n\n---\n\n*This page is the card `{card.relative_to(REPO).as_posix()}`.*\n"


def on_config(config):
    """Lists the generated pages under their navigation sections, after the section's own index page."""
    for entry in config["nav"]:
        for section, target in list(entry.items()):
            if section in CARD_SECTIONS:
                titled = []
                for path, card in cards(section):
                    meta, _ = split_card(card.read_text(encoding="utf-8"))
                    titled.append({str(meta.get("title") or meta.get("pretty_name") or card.parent.name): path})
                entry[section] = [target, *titled]
    return config


def on_files(files, config):
    for section in CARD_SECTIONS:
        for path, card in cards(section):
            files.append(File.generated(config, path, content=page(card)))
    return files
