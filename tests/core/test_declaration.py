"""A metric is declared once, on its scorer: the cards' option tables, the module docs and the option checks all
come from that declaration."""

import inspect
import typing
from pathlib import Path

import pytest

import capeval
from capeval.declaration import Opt, declared_options
from capeval.inputs import choice_option
from capeval.registry import METRICS, module_scorer
from capeval.reports.cards import options_table, update_card
from capeval.scoring.bertscore import BERTScorer


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
    assert [spec.name for spec in declared_options(BleuScorer)] == ["order", "tokenizer", "smoothing"]


#: The registered metrics' scorers, and the plain BERTScore scorer that QACE builds.
SCORERS = {name: capeval.METRICS[name].scorer_class() for name in capeval.METRICS} | {"bertscore": BERTScorer}


def init_parameters(scorer_class: type) -> list[inspect.Parameter]:
    parameters = inspect.signature(scorer_class.__init__).parameters.values()
    return [p for p in parameters if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


@pytest.mark.parametrize("name", sorted(SCORERS))
def test_every_option_is_declared_with_a_doc(name):
    scorer_class = SCORERS[name]
    hints = typing.get_type_hints(scorer_class.__init__, include_extras=True)
    parameters = init_parameters(scorer_class)
    undeclared = [p.name for p in parameters if not any(isinstance(m, Opt) for m in getattr(hints.get(p.name), "__metadata__", ()))]
    assert undeclared == [], f"{name}: annotate these __init__ parameters with Opt"
    specs = declared_options(scorer_class)
    assert [(s.name, s.default) for s in specs] == [(p.name, p.default) for p in parameters]
    for spec in specs:
        assert spec.doc.strip() and "\n" not in spec.doc, f"{name}.{spec.name} needs a one-line doc"
        if spec.choices is not None and spec.default is not None:
            choice_option(f"{name}.{spec.name}'s default", spec.default, spec.choices)

