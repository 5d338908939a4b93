#!/usr/bin/env python
"""Write every part of the docs that comes from the metrics' declarations, so that none is kept by hand:

- each card's option table (``metrics/<name>/README.md``, between its ``<!-- options: ... -->`` markers), from its
  scorer's options;
- the metric lists, from the registry and each scorer's declaration (``title``, ``needs_references``,
  ``needs_images``, ``extras``, ``default_models``, ``faithful_to``, ``inputs_note``): the README's first line and
  metrics table, the first line of ``docs/index.md``, the table of ``docs/metrics/index.md`` and the scorer modules
  of ``docs/api/scorers.md`` (each between ``<!-- NAME: ... -->`` and ``<!-- /NAME -->``), and ``setup.cfg``'s
  ``description`` and the comment naming the metrics of its ``models`` extra;
- every speed figure, from the speed suite's stored results (``scripts/write_speed.py``, which it runs).

``python scripts/write_cards.py`` rewrites what is stale and names each file it rewrote; ``--check`` names the stale
files and writes nothing. A file it cannot process (a card without markers, a metric whose scorer cannot be
imported) is named in one line with the reason, the other files are still written, and the exit status is 1.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from capeval.registry import METRICS
from capeval.reports.cards import update_card

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import write_speed  # noqa: E402  (this folder)
#: The marked sections each file holds (``inline``: inside a sentence, not a block of its own).
SECTIONS = {"README.md": (("metric-titles", True), ("metrics-table", False)),
            "docs/index.md": (("metric-titles", True),),
            "docs/metrics/index.md": (("metrics-index", False),),
            "docs/api/scorers.md": (("scorer-modules", False),)}
DESCRIPTION = re.compile(r"^description = .*$", re.MULTILINE)
MODELS_COMMENT = re.compile(r"^# Every model metric \(.*\)\.$", re.MULTILINE)


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: written from the registry by scripts/write_cards.py; do not edit -->", f"<!-- /{name} -->"


def replace_marked(text: str, name: str, body: str, inline: bool) -> str:
    """``text`` with what stands between the markers of section ``name`` replaced by ``body``.

    >>> replace_marked("Metrics: <!-- t: written from the registry by scripts/write_cards.py; do not edit -->old"
    ...                "<!-- /t -->.", "t", "BLEU and CIDEr-D", inline=True)
    'Metrics: <!-- t: written from the registry by scripts/write_cards.py; do not edit -->BLEU and CIDEr-D<!-- /t -->.'
    >>> replace_marked("no markers", "t", "x", inline=True)
    Traceback (most recent call last):
    ValueError: no <!-- t: ... --> and <!-- /t --> markers around the generated section
    """
    begin, end = markers(name)
    if begin not in text or end not in text.partition(begin)[2]:
        raise ValueError(f"no <!-- {name}: ... --> and {end} markers around the generated section")
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    return head + begin + (body if inline else f"\n\n{body}\n\n") + end + tail


def title_list(titles: list[str]) -> str:
    """>>> title_list(["BLEU", "ROUGE-L", "CIDEr-D"])
    'BLEU, ROUGE-L and CIDEr-D'
    """
    return titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"


def inputs_text(scorer_class: type) -> str:
    """What a metric reads, from its declaration.

    >>> from capeval.scoring.coco import BleuScorer
    >>> from capeval.scoring.clip import ClipScoreScorer
    >>> from capeval.scoring.umic import UmicScorer
    >>> inputs_text(BleuScorer), inputs_text(ClipScoreScorer), inputs_text(UmicScorer)
    ('candidate + references', 'candidate + image (+ references)', 'candidate + image; no references (the image as BUTD region features)')
    """
    text = " + ".join(["candidate", *(["references"] if scorer_class.needs_references else []),
                       *(["image"] if scorer_class.needs_images else [])])
    if scorer_class.references_optional:
        text += " (+ references)"
    elif not scorer_class.needs_references:
        text += "; no references"
    return f"{text} ({scorer_class.inputs_note})" if scorer_class.inputs_note else text


def cell(text: str) -> str:
    return text.replace("|", "\\|") if text else "—"


def metrics_table(classes: dict[str, type], link: str) -> str:
    """One row per metric; ``link`` makes a metric's card link from its name (``{name}`` is filled in)."""
    rows = ["| metric | inputs | extras | default model (the paper's) | faithful to |", "|---|---|---|---|---|"]
    for name, scorer_class in classes.items():
        needs = ", ".join(f"`{extra}`" for extra in scorer_class.extras)
        if scorer_class.system_packages:
            needs += f" (Debian: {', '.join(f'`{package}`' for package in scorer_class.system_packages)})"
        rows.append(f"| [{cell(scorer_class.title)}]({link.format(name=name)}) | {cell(inputs_text(scorer_class))} | "
                    f"{cell(needs)} | {cell(scorer_class.default_models)} | {cell(scorer_class.faithful_to)} |")
    return "\n".join(rows)


def section_bodies(classes: dict[str, type]) -> dict[str, str]:
    """The text of every marked section, and ``description`` (setup.cfg's line), from the metrics' scorer classes."""
    titles = title_list([scorer_class.title for scorer_class in classes.values()])
    modules = dict.fromkeys(scorer_class.__module__ for scorer_class in classes.values())
    return {"metric-titles": titles,
            "metrics-table": metrics_table(classes, "metrics/{name}/README.md"),
            "metrics-index": metrics_table(classes, "{name}.md"),
            "scorer-modules": "\n\n".join(f"::: {module}" for module in modules),
            "description": f"description = Image-caption evaluation metrics ({', '.join(c.title for c in classes.values())}) "
                           "as HuggingFace evaluate modules",
            "models comment": f"# Every model metric ({', '.join(c.title for c in classes.values() if 'models' in c.extras)})."}


def first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"


def reason(error: OSError | ValueError) -> str:
    """Why a file cannot be processed, without its path (the line names it already)."""
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def generate(repo: Path) -> tuple[dict[Path, str], list[str]]:
    """The new text of every file this script writes in ``repo``, and a line for each file it cannot process."""
    classes, files, problems = {}, {}, []
    for name, entry in METRICS.items():
        if entry.folder is None:  # a plugin's metric: its own package documents it
            continue
        card = repo / "metrics" / name / "README.md"
        try:
            classes[name] = entry.scorer_class()
        except Exception as error:  # noqa: BLE001 - a broken metric is reported and the others are still written
            problems.append(f"{card.relative_to(repo)}: not written, and {name} is left out of the metric lists: its "
                            f"scorer {entry.scorer} cannot be imported ({first_line(error)})")
            continue
        try:
            files[card] = update_card(card.read_text(encoding="utf-8"), classes[name])
        except (OSError, ValueError) as error:
            problems.append(f"{card.relative_to(repo)}: {reason(error)}")
    bodies = section_bodies(classes)
    for relative, sections in SECTIONS.items():
        try:
            text = (repo / relative).read_text(encoding="utf-8")
            for section, inline in sections:
                text = replace_marked(text, section, bodies[section], inline)
        except (OSError, ValueError) as error:
            problems.append(f"{relative}: {reason(error)}")
            continue
        files[repo / relative] = text
    setup = (repo / "setup.cfg").read_text(encoding="utf-8")
    for line, section in ((DESCRIPTION, "description"), (MODELS_COMMENT, "models comment")):
        setup, found = line.subn(lambda _, body=bodies[section]: body, setup, count=1)
        if not found:
            problems.append(f"setup.cfg: no line matching {line.pattern!r} for the {section}")
    files[repo / "setup.cfg"] = setup
    speed_files, speed_problems = write_speed.generate(repo, files)
    files.update(speed_files)
    return files, problems + speed_problems


def main(argv: list[str] | None = None) -> int:
    return write_speed.run_writer(generate, "write_cards.py", __doc__, argv)

if __name__ == "__main__":
    sys.exit(main())
