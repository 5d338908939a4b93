"""A metric is declared once, on its scorer: the cards' option tables, the module docs and the option checks all
come from that declaration."""

import inspect
import typing
from pathlib import Path

import pytest

import capeval
from capeval.declaration import Opt, declared_options
from capeval.inputs import choice_option
from capeval.registry import METRICS, declared_extras, module_scorer
from capeval.reports.cards import options_table, update_card
from capeval.scoring.protocol import CaptionScorer
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


def test_declared_extras_follow_a_base_class_into_the_module_it_is_imported_from(tmp_path, monkeypatch):
    package = tmp_path / "extras_pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("class Base:\n    extras = ('models', 'clip')\nclass Plain:\n    pass\n")
    (package / "sub" / "__init__.py").write_text("from ..base import Base as Imported\n")
    (package / "sub" / "child.py").write_text("from . import Imported\nfrom ..base import Plain\n"
                                               "class Child(Imported):\n    pass\nclass Other(Plain):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert declared_extras("extras_pkg.sub.child", "Child") == ("models", "clip")  # two modules away, renamed
    assert declared_extras("extras_pkg.sub.child", "Other") == ()


@pytest.mark.parametrize("name", ["fleur", "expert", "clair", "g_veval"])
def test_the_registry_reads_the_extras_the_scorer_has(name):
    entry = METRICS[name]
    assert declared_extras(*entry.scorer.split(":")) == tuple(entry.scorer_class().extras)


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

        if spec.choices is None and spec.default is not inspect.Parameter.empty and spec.default is not None \
                and spec.check is None:
            assert spec.checked(spec.default) == spec.default, f"{name}.{spec.name}'s default is outside its declaration"


class Declared(CaptionScorer):
    """A toy scorer reaching every way an option's value is checked: a bool, ints with and without a lower bound,
    closed and open intervals, an optional number, a check function that normalizes, choices."""

    metric = title = name = primary = "declared"

    def __init__(self, *, flag: typing.Annotated[bool, Opt("a bool")] = True,
                 count: typing.Annotated[int, Opt("an int, >= 0 by default")] = 0,
                 workers: typing.Annotated[int | None, Opt("an optional int >= 2", within="[2, inf)")] = None,
                 weight: typing.Annotated[float, Opt("closed", within="[0, 1]")] = 0.5,
                 scale: typing.Annotated[float | None, Opt("open below", within="(0, 10)")] = None,
                 path: typing.Annotated[str | None, Opt("normalized by its check", check=lambda name, value: f"<{value}>")] = None,
                 mode: typing.Annotated[str, Opt("choices", choices=("a", "b"))] = "a"):
        self.seen = dict(flag=flag, count=count, workers=workers, weight=weight, scale=scale, path=path, mode=mode)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None):
        raise NotImplementedError

    def options(self):
        return self.seen


@pytest.mark.parametrize("options, message", [
    ({"flag": 1}, r"flag must be True or False, got 1 \(int\)"),
    ({"count": -1}, r"count must be an integer >= 0, got -1"),
    ({"count": 2.0}, r"count must be an integer >= 0, got 2.0 \(float\)"),
    ({"workers": 1}, r"workers must be an integer >= 2 or None, got 1"),
    ({"weight": 1.5}, r"weight must be a number in \[0.0, 1.0\], got 1.5"),
    ({"weight": float("nan")}, r"weight must be a number in \[0.0, 1.0\]"),
    ({"scale": 0}, r"scale must be a number in \(0.0, 10.0\), got 0"),
    ({"scale": 10}, r"scale must be a number in \(0.0, 10.0\), got 10"),
    ({"mode": "c"}, r"mode must be one of \('a', 'b'\)"),
])
def test_declared_bounds_and_kinds_are_checked_before_init(options, message):
    with pytest.raises(ValueError, match=message):
        Declared(**options)


def test_init_receives_the_checked_and_normalized_values():
    import numpy as np

    seen = Declared(flag=np.bool_(False), count=np.int64(3), workers=2, weight=1, scale=9.5, path="m").seen
    assert seen == {"flag": False, "count": 3, "workers": 2, "weight": 1.0, "scale": 9.5, "path": "<m>", "mode": "a"}
    assert [type(seen[k]) for k in ("flag", "count", "weight")] == [bool, int, float]
    # None passes an optional option without calling its check; the defaults are not checked (they are declared).
    assert Declared(path=None).seen["path"] is None
    # A real scorer: the path is a string and the number a float by the time __init__ stores them.
    from capeval.scoring.coco import CiderScorer

    assert type(CiderScorer(sigma=3).sigma) is float
    assert type(capeval.load("cider", sigma=np.float32(3.0)).scorer.sigma) is float


def test_the_llava_judges_modules_share_their_usage_text():
    from capeval.scoring.expert import ExpertScorer
    from capeval.scoring.fleur import FleurScorer

    fleur = FleurScorer.module_usage(references="needed with reference_based=True (RefFLEUR)", example_options="",
                                     example_scores="[0.5672]")
    expert = ExpertScorer.module_usage(references=None, example_options="adapter=None, ", example_scores="[0.2286]")
    assert ("    predictions (list of str): candidate captions.\n    references (list of list of str, optional): needed "
            "with reference_based=True (RefFLEUR).\n    images (list)") in fleur
    assert "references" not in expert and "    expert (float): mean smoothed rating" in expert
    assert ('judge = capeval.load("expert", model=save_scripted_llava(tempfile.mkdtemp()), adapter=None, device="cpu")'
            in expert and "    ([0.2286], ['0.7'])" in expert and "(default 8)" in fleur)
