"""The parts of metric cards and module docs that come from a scorer's declaration (its options).

A card (``metrics/<name>/README.md``) holds its option table between two markers; :func:`update_card` rewrites
that part from the scorer, and a test keeps every card equal to its declaration
(``python scripts/write_cards.py`` rewrites them all).

>>> from capeval.scoring.coco import BleuScorer
>>> print(options_table(BleuScorer))
| option | type | default | values | meaning |
|---|---|---|---|---|
| `order` | int | `4` | `1`, `2`, `3`, `4` | which BLEU-n fills `scores` and the corpus value `bleu` |
| `tokenizer` | str | `'ptb'` | `'ptb'`, `'ptb-java'`, `'none'` | PTB tokenization as the toolkit does it: `ptb` (pure Python), `ptb-java` (the CoreNLP jar) or `none` (text already tokenized) |
| `smoothing` | str | `'coco'` | `'coco'`, `'none'` | per-caption BLEU: `coco` (the toolkit's tiny epsilons) or `none` (a zero n-gram precision gives 0, as NLTK's sentence BLEU) |
"""

from __future__ import annotations

from ..declaration import declared_options

BEGIN = "<!-- options: written from the scorer's declaration by scripts/write_cards.py; do not edit -->"
END = "<!-- /options -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def options_table(scorer_class: type) -> str:
    """The scorer's options as a Markdown table: name, type, default, valid values (the choices, or a number's
    interval), meaning."""
    rows = ["| option | type | default | values | meaning |", "|---|---|---|---|---|"]
    for spec in declared_options(scorer_class):
        default = "required" if spec.required else f"`{spec.default!r}`"
        values = ", ".join(f"`{choice!r}`" for choice in spec.choices) if spec.choices else spec.within or ""
        rows.append(f"| `{spec.name}` | {_cell(spec.type)} | {_cell(default)} | {_cell(values)} | {_cell(spec.doc)} |")
    return "\n".join(rows)


def options_text(scorer_class: type) -> str:
    """The scorer's options as the plain-text block of an evaluate module's inputs description."""
    lines = ["Constructor options (``capeval.load(name, ...)`` or ``evaluate.load(path, ...)``):"]
    for spec in declared_options(scorer_class):
        default = "required" if spec.required else f"default {spec.default!r}"
        values = (f"; one of {', '.join(map(repr, spec.choices))}" if spec.choices
                  else f"; in {spec.within}" if spec.within else "")
        lines.append(f"    {spec.name} ({spec.type}, {default}{values}): {spec.doc}")
    return "\n".join(lines)


def card_section(scorer_class: type) -> str:
    return f"{BEGIN}\n{options_table(scorer_class)}\n{END}"


def update_card(text: str, scorer_class: type) -> str:
    """``text`` (a card) with its option table rewritten from ``scorer_class``; ``ValueError`` if it has no markers."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"the card has no option-table markers: put the two lines {BEGIN} and {END} under its Options heading")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + card_section(scorer_class) + tail
