"""The table of capeval's metrics, discovered rather than written: every surface looks metrics up here.

A metric is one scorer class (:class:`~capeval.scoring.protocol.CaptionScorer`, which declares everything about
it) and one evaluate module folder in ``metrics/`` (shipped as ``capeval.metric_modules``) whose module sets
``scorer_class``. The registry reads each folder's module source for the scorer it names (without importing
``evaluate``), and adds the metrics other installed packages declare in the ``capeval.scorers`` entry-point
group (``name = "package.module:ScorerClass"``), so a lab can publish a metric for capeval without forking it.

:func:`resolve` is the one way from a metric spec (a name, ``"name:key=value,..."``, ``(name, options)``, a
scorer, an evaluate module) to a scorer; :func:`load` gives the evaluate module of a name.

>>> {'bleu', 'cider', 'umic'} <= set(METRICS)  # every folder of metrics/ with a module (docs/metrics lists them)
True
>>> [run.label for run in offline_runs() if run.metric == "smurf"]
['SPARCS']
>>> resolve("bleu:order=2").options()
{'order': 2, 'tokenizer': 'ptb'}
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .scoring.protocol import CaptionScorer

#: The entry-point group through which other packages add metrics.
ENTRY_POINT_GROUP = "capeval.scorers"

#: Below this many captions, IDF from the scored corpus says little (CIDEr-D's is 0 for one caption).
SMALL_CORPUS = 100

#: What a metric's name may be: it names a module folder, a file in capeval's cache and a command-line spec.
METRIC_NAME = re.compile(r"[a-z][a-z0-9_]*")


class UnknownMetricError(ValueError, KeyError):
    """A metric name the registry does not hold (a ``ValueError``; also a ``KeyError`` for older callers)."""

    def __str__(self) -> str:  # KeyError's own would quote the message
        return str(self.args[0]) if self.args else ""


class BrokenPluginError(ValueError):
    """A metric requested by name whose ``capeval.scorers`` entry point cannot give a scorer class."""


@dataclass(frozen=True)
class MetricEntry:
    """One metric: its name, its scorer (``module:Class``) and, for in-tree metrics, its module folder; every
    other fact is read from the scorer class's declaration."""

    name: str
    scorer: str
    #: The evaluate module folder; ``None`` for a metric added through an entry point (one is written on demand).
    folder: str | None = None

    def scorer_class(self) -> type[CaptionScorer]:
        """The scorer class; :class:`MissingExtraError` when a package it needs (one of its declared ``extras``) is not
        installed, ``TypeError`` when what the entry names is no scorer class."""
        from .scoring.protocol import CaptionScorer

        module, _, name = self.scorer.partition(":")
        extras = declared_extras(module, name)
        if missing := missing_packages(extras):
            raise MissingExtraError(self.name, extras, missing[0])
        try:
            found = getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as error:  # capeval's metadata could not say (e.g. run from a checkout)
            if not extras or error.name is None or error.name.partition(".")[0] == "capeval":
                raise
            raise MissingExtraError(self.name, extras, error.name) from error
        if not (isinstance(found, type) and issubclass(found, CaptionScorer)):
            # Never call what an entry point names unless it is a scorer: `os:system` is no metric.
            raise TypeError(f"{self.scorer} is a {type(found).__name__}, not a capeval CaptionScorer class")
        return found

    @property
    def title(self) -> str:
        return self.scorer_class().title

    @property
    def columns(self) -> tuple[str, ...]:
        return self.scorer_class().all_columns()

    @property
    def needs_references(self) -> bool:
        return self.scorer_class().needs_references

    @property
    def needs_images(self) -> bool:
        return self.scorer_class().needs_images

    @property
    def offline_runs(self) -> tuple:
        return tuple(dataclasses.replace(run, metric=self.name) for run in self.scorer_class().offline_runs)

    @property
    def offline(self) -> bool:
        """Whether the default configuration runs with nothing to download."""
        return any(run.options == {} for run in self.scorer_class().offline_runs)


class MissingExtraError(ImportError):
    """A metric needs one of capeval's extras that is not installed: one line naming it and the pip command."""

    def __init__(self, metric: str, extras: tuple[str, ...], missing: str):
        self.metric, self.extras = metric, extras
        super().__init__(f"{metric} needs capeval's {' and '.join(extras)} extra{'s' if len(extras) > 1 else ''} "
                         f"({missing} is not installed): pip install 'capeval[{','.join(extras)}]'")


@functools.lru_cache(maxsize=None)
def missing_packages(extras: tuple[str, ...]) -> list[str]:
    """The packages that capeval's extras ``extras`` require and that are not installed, read from capeval's own
    metadata (none where capeval is not installed, e.g. run from a checkout).

    >>> missing_packages(())
    []
    """
    try:
        requirements = importlib.metadata.requires("capeval") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    missing = []
    for requirement in requirements:
        project, _, marker = requirement.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", project)
        if extra is None or extra.group(1) not in extras or name is None or name.group(1).lower() == "capeval":
            continue
        try:
            importlib.metadata.version(name.group(1))
        except importlib.metadata.PackageNotFoundError:
            missing.append(name.group(1))
    return missing


@functools.lru_cache(maxsize=None)
def declared_extras(module: str, name: str) -> tuple[str, ...]:
    """The ``extras`` that class ``name`` of ``module`` declares, or the nearest base class that declares them, read
    from the modules' source without importing them (they may import what those extras bring); a base imported with
    ``from ... import`` is followed into its own module.

    >>> declared_extras("capeval.scoring.coco", "MeteorScorer"), declared_extras("capeval.scoring.coco", "BleuScorer")
    (('meteor',), ())
    >>> declared_extras("capeval.scoring.expert", "ExpertScorer")  # its base is capeval.scoring.fleur's
    ('models',)
    """
    seen = set()
    while (module, name) not in seen:
        seen.add((module, name))
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None or not spec.has_location:  # a frozen or built-in module has no source
            return ()
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"), spec.origin)
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        if name not in classes:  # imported here: follow it to the module that defines it
            source = imported_from(tree, module, name, spec.submodule_search_locations is not None)
            if source is None:
                return ()
            module, name = source
            continue
        for node in classes[name].body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "extras" for t in node.targets)
                    and isinstance(node.value, ast.Tuple)):
                return tuple(element.value for element in node.value.elts
                             if isinstance(element, ast.Constant) and isinstance(element.value, str))
        name = next((base.id for base in classes[name].bases if isinstance(base, ast.Name)), "")
    return ()


def imported_from(tree: ast.Module, module: str, name: str, is_package: bool) -> tuple[str, str] | None:
    """(module, name) that a top-level ``from ... import`` of ``module``'s source brings ``name`` from, or ``None``.

    >>> imported_from(ast.parse("from .fleur import LlavaJudgeScorer as Base"), "capeval.scoring.expert", "Base", False)
    ('capeval.scoring.fleur', 'LlavaJudgeScorer')
    """
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) == name:
                package = module if is_package else module.rpartition(".")[0]
                if node.level:
                    package = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                    source = ".".join(filter(None, [package, node.module]))
                else:
                    source = node.module or ""
                return source, alias.name
    return None


def module_scorer(source: str) -> str | None:
    """``module:Class`` of the scorer an evaluate module's source assigns to ``scorer_class`` (found by reading
    the source, so that listing metrics imports neither ``evaluate`` nor any model code).

    >>> module_scorer("from capeval.scoring.coco import BleuScorer\\nclass Bleu(CaptionMetric):\\n    scorer_class = BleuScorer")
    'capeval.scoring.coco:BleuScorer'
    """
    tree = ast.parse(source)
    imported = {alias.asname or alias.name: f"{node.module}:{alias.name}"
                for node in tree.body if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                and any(isinstance(t, ast.Name) and t.id == "scorer_class" for t in node.targets)):
            return imported.get(node.value.id)
    return None


def in_tree_metrics() -> dict[str, MetricEntry]:
    """The metrics whose module folders ship in ``capeval.metric_modules``."""
    found = {}
    for folder in sorted(resources.files("capeval.metric_modules").iterdir(), key=lambda f: f.name):
        module = folder / f"{folder.name}.py"
        if folder.is_dir() and module.is_file():
            scorer = module_scorer(module.read_text(encoding="utf-8"))
            if scorer is not None:
                found[folder.name] = MetricEntry(folder.name, scorer, str(folder))
    return found


def plugin_metrics() -> dict[str, MetricEntry]:
    """The metrics installed packages add through the ``capeval.scorers`` entry-point group."""
    return {point.name: MetricEntry(point.name, point.value)
            for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def plugin_problem(entry: MetricEntry) -> str:
    """Why a plugin's entry point gives no metric ('' when it does): a name that is no metric name, a value that is
    not ``module:Class``, a module that fails to import, or an object that is not a scorer class.

    >>> plugin_problem(MetricEntry("../../x", "os:getcwd")), plugin_problem(MetricEntry("tool", "os:getcwd"))
    ("'../../x' is not a metric name (lower-case letters, digits and _)", 'os:getcwd is a builtin_function_or_method, not a capeval CaptionScorer class')
    >>> plugin_problem(MetricEntry("rouge_too", "capeval.scoring.coco:RougeScorer"))
    ''
    """
    if not METRIC_NAME.fullmatch(entry.name):
        return f"{entry.name!r} is not a metric name (lower-case letters, digits and _)"
    module, _, attribute = entry.scorer.partition(":")
    if not (module and attribute):
        return f"{entry.scorer!r} is not 'package.module:ScorerClass'"
    try:
        entry.scorer_class()
    except Exception as error:  # noqa: BLE001 - whatever a third-party import raises, the plugin is what is broken
        return str(error) if isinstance(error, TypeError) else f"{type(error).__name__}: {error}"
    return ""


class Registry(Mapping):
    """``name -> MetricEntry``, discovered on first use (in-tree metrics win over a plugin of the same name).

    A plugin that gives no scorer class (:func:`plugin_problem`) is left out with one warning naming its entry
    point, so the other metrics still work; asking for it by name raises :class:`BrokenPluginError` saying why.
    """

    @functools.cached_property
    def _discovered(self) -> tuple[dict[str, MetricEntry], dict[str, str]]:
        entries, broken = in_tree_metrics(), {}
        for name, entry in plugin_metrics().items():
            where = f"the {ENTRY_POINT_GROUP} entry point {name!r} ({entry.scorer})"
            if name in entries:
                warnings.warn(f"{where} is shadowed by capeval's own metric of that name")
            elif problem := plugin_problem(entry):
                broken[name] = f"{where} is left out: {problem}"
                warnings.warn(broken[name])
            else:
                entries[name] = entry
        return entries, broken

    @property
    def _entries(self) -> dict[str, MetricEntry]:
        return self._discovered[0]

    @property
    def broken(self) -> dict[str, str]:
        """``name -> why`` for the plugins left out."""
        return self._discovered[1]

    def __getitem__(self, name: str) -> MetricEntry:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({sorted(self._entries)})"


METRICS = Registry()


def entry(name: str) -> MetricEntry:
    """The registry entry of metric ``name``; :class:`UnknownMetricError` listing the known names, or
    :class:`BrokenPluginError` for a plugin that cannot load.

    >>> entry("blue")
    Traceback (most recent call last):
    capeval.registry.UnknownMetricError: no capeval metric 'blue' (did you mean 'bleu'?); choose from [...]
    """
    if name in METRICS:
        return METRICS[name]
    if isinstance(name, str) and name in METRICS.broken:
        raise BrokenPluginError(METRICS.broken[name])
    close = difflib.get_close_matches(name, list(METRICS)) if isinstance(name, str) else []
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UnknownMetricError(f"no capeval metric {name!r}{hint}; choose from {sorted(METRICS)}")


def parse_options(pairs: list[str] | None, where: str) -> dict:
    """``key=value`` strings to a dict; values are JSON when they parse (numbers, true/false, lists), else text.

    >>> parse_options(["order=2", "tokenizer=ptb", "include_human=false"], "--option")
    {'order': 2, 'tokenizer': 'ptb', 'include_human': False}
    """
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{where} takes key=value, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def split_spec(spec: str) -> tuple[str, list[str]]:
    """``name:key=value,key=value`` (a metric with its own options) unless ``spec`` is an existing path.

    >>> split_spec("bleu:order=2,tokenizer=none")
    ('bleu', ['order=2', 'tokenizer=none'])
    """
    if Path(spec).exists() or ":" not in spec:
        return spec, []
    name, _, options = spec.partition(":")
    return name, options.split(",")


def parse_spec(spec: str) -> tuple[str, dict]:
    """A ``name:key=value,...`` string as ``(name, options)``.

    >>> parse_spec("bleu:order=2")
    ('bleu', {'order': 2})
    """
    name, pairs = split_spec(spec)
    return name, parse_options(pairs, f"metric {spec!r}")


def build_scorer(name: str, options: dict | None = None):
    """The scorer of metric ``name`` with constructor ``options`` (checked now; models load on first use);
    an unknown option raises ``TypeError`` listing the valid ones.

    >>> build_scorer("bleu", {"max_order": 2})
    Traceback (most recent call last):
    TypeError: bleu: unknown option(s) ['max_order']; valid options: ['order', 'tokenizer', 'smoothing']
    """
    from .scoring.protocol import build_checked

    return build_checked(entry(name).scorer_class(), options or {}, name)


def spec_options(spec: Any, options: Mapping | None = None) -> tuple[str, dict]:
    """``(name, options)`` of a spec given as a name, ``"name:key=value,..."`` or ``(name, options)``, with
    ``options`` added; an option given both in the spec and in ``options`` with different values is a
    ``ValueError`` (neither silently wins).

    >>> spec_options("bert_tbr:model_name=/m/a=b,layer=8", {"beta": 0.4})
    ('bert_tbr', {'model_name': '/m/a=b', 'layer': 8, 'beta': 0.4})
    >>> spec_options(("bleu", {"order": 1}), {"order": 2})
    Traceback (most recent call last):
    ValueError: bleu: order is given twice, as 1 in the spec and as 2 beside it
    """
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], Mapping):
        name, own = spec[0], dict(spec[1])
    elif isinstance(spec, str):
        name, own = parse_spec(spec)
    else:
        raise ValueError("a metric spec is a name, 'name:key=value,...', (name, options), a scorer or a capeval module; "
                         f"got {type(spec).__name__} {spec!r}"[:200])
    extra = dict(options or {})
    for key in own.keys() & extra.keys():
        if type(own[key]) is not type(extra[key]) or own[key] != extra[key]:
            raise ValueError(f"{name}: {key} is given twice, as {own[key]!r} in the spec and as {extra[key]!r} beside it")
    return name, {**own, **extra}


def resolve(spec: Any, options: dict | None = None):
    """The scorer a metric spec stands for: a registry name (with ``options``), a ``"name:key=value,..."``
    string, a ``(name, options)`` pair, a scorer (returned as is) or a capeval evaluate module (its scorer).
    Every surface (``capeval.evaluate``, the command line, the harness, the Spaces, the Trainer hook, Ray)
    turns what the user gave into a scorer here, once, and passes the scorer on.

    >>> resolve(("cider", {"sigma": 3.0})).options()
    {'sigma': 3.0, 'tokenizer': 'ptb'}
    >>> resolve(["bleu"])
    Traceback (most recent call last):
    ValueError: a metric spec is a name, 'name:key=value,...', (name, options), a scorer or a capeval module; got list ['bleu']
    """
    from .scoring.protocol import CaptionScorer

    if isinstance(spec, CaptionScorer):
        return spec
    scorer = getattr(spec, "scorer", None)
    if isinstance(scorer, CaptionScorer):
        return scorer
    return build_scorer(*spec_options(spec, options))


def idf_note(scorer, num_captions: int | None = None) -> str:
    """Where a corpus-level metric's IDF comes from, for the people reading its scores ('' for other metrics).

    >>> from capeval.scoring.coco import CiderScorer
    >>> idf_note(CiderScorer(), 2)
    'IDF from the references of the 2 scored captions (too few for meaningful weights: try idf=flickr8k)'
    >>> idf_note(CiderScorer(idf="flickr8k"))
    'IDF from the Flickr8k references shipped with capeval'
    """
    idf = getattr(scorer, "idf", "corpus")  # a shipped corpus's name, "corpus", or BERTScore's on/off
    if isinstance(idf, str) and idf != "corpus":
        return f"IDF from the {idf.capitalize()} references shipped with capeval"
    if not scorer.corpus_dependent or num_captions is None:
        return ""
    few = " (too few for meaningful weights: try idf=flickr8k)" if num_captions < SMALL_CORPUS else ""
    return f"IDF from the references of the {num_captions} scored captions{few}"


GENERATED_MODULE = '''"""evaluate module of the capeval metric {name!r}, written by capeval from its scorer {scorer}."""

from capeval.metric_base import CaptionMetric
from {module} import {cls}


class {camel}(CaptionMetric):
    scorer_class = {cls}

    def _info(self):
        return self.module_info()
'''


def module_path(name: str) -> str:
    """The folder of metric ``name``'s evaluate module, for ``evaluate.load``: inside the installed package, or,
    for a metric added by an entry point, a module written into capeval's cache from its scorer.

    >>> Path(module_path("bleu")).joinpath("bleu.py").is_file()
    True
    """
    metric = entry(name)
    if metric.folder is not None:
        return metric.folder
    from .settings import cache_dir

    module, _, cls = metric.scorer.partition(":")
    folder = cache_dir() / "metric_modules" / name
    text = GENERATED_MODULE.format(name=name, scorer=metric.scorer, module=module, cls=cls,
                                   camel="".join(part.capitalize() for part in name.split("_")))
    path = folder / f"{name}.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        from .atomic import partial_file

        folder.mkdir(parents=True, exist_ok=True)
        with partial_file(path, mode="w") as out:
            out.write(text)
    return str(folder)


class StandaloneMetric:
    """One metric with an evaluate module's ``compute`` and result dict, built without the ``evaluate`` package: what
    :func:`load` returns where evaluate is not installed. The same options, validation and values; evaluate's
    own machinery (``add_batch``, ``evaluate.combine``, its distributed mode and Arrow caching) needs evaluate.

    >>> bleu = StandaloneMetric("bleu", order=1)
    >>> bleu.compute(predictions=["a dog"], references=[["a dog runs"]])["bleu"]
    0.606530659...
    """

    def __init__(self, name: str, **options: Any):
        self.name = name
        self.scorer = build_scorer(name, options)

    def compute(self, *, predictions: Any, references: Any = None, images: Any = None, region_features: Any = None,
                batch_size: Any = None, show_progress: bool | None = None) -> dict[str, Any]:
        """The result dict of the metric's evaluate module (:func:`~capeval.scoring.protocol.shape_result`)."""
        from .scoring.protocol import score_checked, shape_result

        scores = score_checked(self.scorer, predictions, references, images=images, region_features=region_features,
                               batch_size=batch_size, show_progress=show_progress)
        return shape_result(self.scorer, scores)


def load(name: str, **options: Any):
    """The evaluate module of metric ``name`` with constructor ``options``, from any working directory; where the
    ``evaluate`` package is not installed, a :class:`StandaloneMetric` with the same ``compute``
    and results.

    >>> bleu = load("bleu", order=2)
    >>> round(bleu.compute(predictions=["a dog runs"], references=[["a dog runs fast"]])["bleu"], 4)
    0.7165
    """
    # A missing extra is the one MissingExtraError line that evaluate() and the command line give, raised here before
    # evaluate imports the module (whose first import would fail with a bare "No module named 'torch'").
    entry(name).scorer_class()
    try:
        evaluate = import_evaluate()
    except ModuleNotFoundError as error:
        if error.name not in ("evaluate", None):  # evaluate is there but lacks a dependency: say so, not hide it
            raise
        return StandaloneMetric(name, **options)
    return evaluate.load(module_path(name), **options)


def import_evaluate():
    """The ``evaluate`` package, imported without transformers where nothing imported transformers yet.

    evaluate's ``__init__`` imports its pipeline ``Evaluator``, which imports ``transformers.pipelines`` (and torch)
    if it can: ~5 s of CPU that no capeval module needs (a model metric imports transformers itself). Within the
    import, ``transformers`` is made unimportable, so evaluate takes its own "transformers is not installed" branch;
    its ``evaluate.evaluator(...)`` then says transformers is missing, unless transformers was imported first.
    """
    if "evaluate" in sys.modules or "transformers" in sys.modules:
        import evaluate
        return evaluate
    sys.modules["transformers"] = None  # type: ignore[assignment]  # `import transformers` raises ImportError
    try:
        import evaluate
    finally:
        if "transformers" in sys.modules and sys.modules["transformers"] is None:
            del sys.modules["transformers"]
    return evaluate


class LeftOutWarning(UserWarning):
    """A metric left out of a set of metrics because it is broken; the message is one line naming it and why."""


#: The left-out warnings already shown (each once per process, as Python shows a warning from one place).
_LEFT_OUT_SHOWN: dict = {}


def left_out(metric: MetricEntry) -> bool:
    """Whether ``metric`` is broken, so that the sets of metrics (``"offline"``, ``"all"``) leave it out and still
    run the others: its module does not import, or its scorer leaves ``score`` or ``options`` abstract. One line (a
    :class:`LeftOutWarning`) says which and why. A missing extra is no fault (:func:`capeval.readiness.lacking` names it).

    >>> left_out(METRICS["bleu"])
    False
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as shown:
    ...     warnings.simplefilter("always")
    ...     left_out(MetricEntry("toy", "capeval.scoring.protocol:CaptionScorer"))
    True
    >>> print(shown[0].message)
    toy is left out: CaptionScorer does not define options() or score() (every scorer defines score() and options())
    """
    try:
        scorer_class = metric.scorer_class()
    except MissingExtraError:
        return False
    except Exception as error:  # noqa: BLE001 - whatever a broken module raises, the other metrics still run
        problem = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:300]}"
    else:
        if not inspect.isabstract(scorer_class):
            return False
        undefined = " or ".join(f"{method}()" for method in sorted(scorer_class.__abstractmethods__))
        problem = f"{scorer_class.__name__} does not define {undefined} (every scorer defines score() and options())"
    # Where in capeval this is noticed says nothing to the user: a warning with no source line prints as one line.
    warnings.warn_explicit(f"{metric.name} is left out: {problem}", LeftOutWarning, "capeval", 0, registry=_LEFT_OUT_SHOWN)
    return True


def offline_runs() -> list:
    """Every offline configuration of every metric (:class:`~capeval.declaration.OfflineRun`) that can run with the
    extras installed here (:func:`capeval.readiness.lacking` names what the others lack), in registry order; a broken metric is left out
    with one line saying why (:func:`left_out`)."""
    runs = []
    for metric in METRICS.values():
        if left_out(metric):
            continue
        try:
            runs += metric.offline_runs
        except MissingExtraError:
            continue
    return runs
