"""The metric registry, the scorer protocol every module declares, and the package's import graph."""

import ast
import inspect
import sys
from pathlib import Path

import pytest

import capeval
from capeval.metric_base import CaptionMetric, scorer_options
from capeval.registry import METRICS, load, module_path, offline_runs
from capeval.scoring.protocol import CaptionScorer, Scores

PACKAGE = Path(capeval.__file__).parent


@pytest.mark.parametrize("name", sorted(METRICS))
def test_each_module_only_declares_its_scorer(name):
    module = load(name)
    entry = METRICS[name]
    assert isinstance(module, CaptionMetric) and type(module.scorer) is entry.scorer_class()
    assert (module.needs_references, module.needs_images) == (entry.needs_references, entry.needs_images)
    source = Path(module_path(name), f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    methods = [node.name for node in cls.body if isinstance(node, ast.FunctionDef)]
    assert methods == ["_info"], f"{name} holds logic of its own: {methods}"
    imports = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert imports == {"CaptionMetric", entry.scorer.partition(":")[2]}
    assert entry.scorer.partition(":")[2] in {c.__name__ for c in CaptionScorer.__subclasses__()} | {
        c.__name__ for base in CaptionScorer.__subclasses__() for c in base.__subclasses__()}


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(TypeError, match=r"Bleu: unknown option\(s\) \['ordr'\]; valid options: \['order', 'tokenizer', 'smoothing'\]"):
        load("bleu", ordr=2)
    assert scorer_options(METRICS["cider"].scorer_class()) == ["tokenizer", "sigma", "idf"]


def test_a_constructor_option_passed_to_compute_says_where_it_belongs():
    bleu = load("bleu")
    with pytest.raises(TypeError, match=r"\['order'\] is a constructor option: pass it to evaluate.load\(path, order=...\)"):
        bleu.compute(predictions=["a dog"], references=[["a dog"]], order=2)
    with pytest.raises(TypeError, match=r"compute\(\) got unexpected argument\(s\) \['colour'\]"):
        bleu.compute(predictions=["a dog"], references=[["a dog"]], colour="red")
    # The module still works after both errors.
    inputs = {"predictions": ["a dog runs"], "references": [["a dog runs fast"]]}
    assert bleu.compute(**inputs) == load("bleu").compute(**inputs)


def test_hashcode_names_a_local_model_by_folder_and_content(load_metric, tiny_bert_path):
    metric = load_metric("bert_tbr", model_name=tiny_bert_path, layer=2, beta=0.4)
    code = metric.compute(predictions=["a dog"], references=[["a dog runs"]])["hashcode"]
    assert tiny_bert_path not in code and "model=tiny-bert0@" in code
    provenance = metric.provenance()
    assert provenance["metric"] == "bert_tbr" and provenance["model"].startswith("tiny-bert0@")
    assert set(provenance["versions"]) >= {"capeval", "torch", "transformers"}


def test_scores_fill_corpus_means_and_check_lengths():
    scores = Scores({"a": [1.0, 2.0], "b": [0.0, 1.0]}, corpus={"a": 5.0})
    assert scores.corpus == {"a": 5.0, "b": 0.5}
    with pytest.raises(ValueError, match="different lengths"):
        Scores({"a": [1.0], "b": [1.0, 2.0]})


def test_offline_runs_cover_the_text_metrics():
    runs = {run.label: run for run in offline_runs()}
    assert {"BLEU-4", "ROUGE-L", "CIDEr-D", "SPARCS", "BERT-TBR (unigram)"} <= set(runs)
    assert runs["SPARCS"].resolved_options() == {"components": ["sparcs"]}


def module_imports(path: Path) -> set[str]:
    """capeval modules imported anywhere in ``path``, also inside functions (relative imports resolved)."""
    name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("capeval"):
                found.add(base)
                found |= {f"{base}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("capeval")}
    return found


def test_no_import_cycle_among_library_modules():
    files = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py") if "metric_modules" not in p.parts and "hub_datasets" not in p.parts}
    graph = {name: {m for m in module_imports(path) if m in files and m != name} for name, path in files.items()}
    # A package's __init__ re-exporting its submodules is not a cycle through them.
    graph = {name: {m for m in deps if not name.startswith(m + ".")} for name, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail, node, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_scoring_never_imports_evaluate_or_gradio():
    for path in (PACKAGE / "scoring").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import evaluate" not in text and "import gradio" not in text, path.name
    assert "self" in inspect.signature(CaptionScorer.score).parameters


class EvaluateMissing:
    """A meta-path finder that makes ``import evaluate`` fail as an uninstalled package, or as an installed one whose
    own dependency ``missing`` is absent."""

    def __init__(self, missing: str = "evaluate"):
        self.missing = missing

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "evaluate":
            raise ModuleNotFoundError(f"No module named {self.missing!r}", name=self.missing)


@pytest.mark.parametrize("name, options, inputs", [
    ("bleu", {"order": 2}, {"references": [["a dog runs fast", "the dog runs"], ["a cat sits"]]}),
    ("cider", {"idf": "flickr8k"}, {"references": [["a dog runs fast"], ["a cat sits on a mat"]]}),
    ("rouge", {}, {"references": ["a dog runs fast", "a cat"]}),
])
def test_without_evaluate_load_gives_a_standalone_metric_with_the_modules_results(monkeypatch, name, options, inputs):
    predictions = ["a dog runs", "a cat sits"]
    module_result = load(name, **options).compute(predictions=predictions, **inputs)
    monkeypatch.delitem(sys.modules, "evaluate")
    monkeypatch.setattr(sys, "meta_path", [EvaluateMissing(), *sys.meta_path])
    standalone = load(name, **options)
    assert type(standalone).__name__ == "StandaloneMetric" and standalone.scorer.options() == load_options(name, options)
    assert standalone.compute(predictions=predictions, **inputs) == module_result
    with pytest.raises(ValueError, match="got 2 predictions but 1 reference lists"):
        standalone.compute(predictions=predictions, references=inputs["references"][:1])


def load_options(name, options):
    from capeval.registry import build_scorer

    return build_scorer(name, options).options()


def test_a_broken_evaluate_install_is_reported_as_it_is(monkeypatch):
    monkeypatch.delitem(sys.modules, "evaluate")
    monkeypatch.setattr(sys, "meta_path", [EvaluateMissing("datasets"), *sys.meta_path])
    with pytest.raises(ModuleNotFoundError, match="No module named 'datasets'"):
        load("bleu")
