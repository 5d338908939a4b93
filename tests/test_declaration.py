"""A metric is declared once, on its scorer: the cards' option tables, the module docs and the option checks all
come from that declaration."""

from pathlib import Path

import pytest

import capeval
from capeval.declaration import declared_options
from capeval.registry import METRICS, module_scorer
from capeval.reports.cards import options_table, update_card


@pytest.mark.parametrize("name", sorted(METRICS))
def test_each_card_shows_its_scorers_options(name):
    entry = METRICS[name]
    card = (Path(entry.folder) / "README.md").read_text(encoding="utf-8")
    assert update_card(card, entry.scorer_class()) == card, f"run scripts/write_cards.py: {name}'s option table is stale"
    assert options_table(entry.scorer_class()) in card


@pytest.mark.parametrize("name, options", [("bleu", {}), ("cider", {"sigma": 3.0}), ("smurf", {"components": ["sparcs"]})])
def test_each_module_documents_its_scorers_options(name, options):
    from capeval.reports.cards import options_text

    module = capeval.load(name, **options)
    assert options_text(METRICS[name].scorer_class()) in module.inputs_description
    assert module.name == name  # evaluate names the module after its class: it matches the folder


def test_the_registry_reads_the_scorer_from_the_module_source():
    source = "from capeval.scoring.coco import RougeScorer as Scorer\nclass Rouge(CaptionMetric):\n    scorer_class = Scorer\n"
    assert module_scorer(source) == "capeval.scoring.coco:RougeScorer"
    assert module_scorer("class Nothing: pass") is None
    assert {name: entry.scorer for name, entry in METRICS.items()}["rouge"] == "capeval.scoring.coco:RougeScorer"


def test_declared_choices_are_checked_however_a_scorer_is_built():
    from capeval.scoring.coco import BleuScorer, RougeScorer

    for build in (lambda: BleuScorer(5), lambda: BleuScorer(order=5), lambda: capeval.resolve("bleu:order=5")):
        with pytest.raises(ValueError, match=r"order must be one of \(1, 2, 3, 4\), got 5 \(int\)"):
            build()
    with pytest.raises(ValueError, match="tokenizer must be one of"):
        RougeScorer(tokenizer="spacy")  # declared on the base class, checked for the subclass
    assert [spec.name for spec in declared_options(BleuScorer)] == ["order", "tokenizer"]
