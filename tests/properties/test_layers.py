"""capeval's layers import downwards only: a module imports from its own layer or a lower one, never a higher one
(function-level imports included), so that following a call goes through each module once."""

import ast

import pytest

from fixtures import LIBRARY

PACKAGE = LIBRARY / "capeval"

#: Lowest first. A top-level module is named by its file stem, a subpackage by its folder.
LAYERS = [
    # the package's version and lazily imported public names; files, settings, caches, checkpoints, option checks and
    # declarations: what everything else stands on
    {"__init__", "atomic", "file_contents", "settings", "progress", "models", "checkpoints", "finite", "inputs", "declaration",
     "caption_files", "samples", "usage"},
    {"vision"},  # images and region features
    {"backbones"},  # ported models and the batching they share
    {"text"},  # tokenizers, n-grams, text encoders and parsers (over the backbones)
    # language-model judges (the server client, the answer cache, request plans); what a metric needs and its fetching
    {"judges", "needs"},
    {"scoring"},  # one scorer class per metric
    {"reports"},  # tables and cards of scorer outputs
    # metrics by name, evaluation over many, what runs here and the downloads that make it run
    {"registry", "evaluation", "metric_base", "distributed", "readiness", "downloads"},
    {"benchmarks", "integrations"},  # meta-evaluation; Trainer, torchmetrics, Spaces, leaderboard
    {"cli"},  # the command line
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def unit_of(parts: list[str]) -> str:
    """The layer unit of a module inside capeval, given its dotted parts after ``capeval``."""
    return parts[0] if parts else "__init__"


def imported_units(source: str, module_parts: list[str], is_package: bool) -> list[tuple[str, int]]:
    """(unit, line) of every capeval import in ``source`` (relative or ``capeval.…``, at any depth) of the module at
    ``module_parts`` (its dotted parts after ``capeval``)."""
    package = module_parts if is_package else module_parts[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
            if not target:  # from . import name: a submodule or a name of the package itself
                found += [(unit_of([alias.name]) if alias.name in RANK else "__init__", node.lineno) for alias in node.names]
                continue
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "capeval":
            target = node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            targets = [alias.name.split(".")[1:] for alias in node.names if alias.name.split(".")[0] == "capeval"]
            found += [(unit_of(target), node.lineno) for target in targets]
            continue
        else:
            continue
        found.append((unit_of(target), node.lineno))
    return found


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        yield path, (parts[:-1] if is_package else parts), is_package


def test_every_module_has_a_layer():
    assert sorted({unit_of(parts) for _, parts, _ in modules()} - set(RANK)) == []


def upward_imports(rank: dict[str, int]) -> list[str]:
    """Every import of a higher layer than the importing module's, under the layer ranks ``rank``."""
    return [f"{path.relative_to(PACKAGE)}:{line} ({unit_of(parts)}) imports {unit}"
            for path, parts, is_package in modules()
            for unit, line in imported_units(path.read_text(), parts, is_package)
            if rank[unit] > rank[unit_of(parts)]]


def test_no_layer_imports_a_higher_one():
    assert upward_imports(RANK) == []


@pytest.mark.parametrize(("unit", "placed_with", "seen"), [
    ("needs", "backbones", "needs.py"),  # needs reads text's data folders: it sits above text
    ("judges", "reports", "scoring/"),  # the judges sit below the scorers that ask them
    ("needs", "reports", "scoring/"),  # ... and below the scorers that declare what they need
    ("readiness", "scoring", "readiness.py"),  # readiness reads the registry: beside it, not below
    ("downloads", "scoring", "downloads.py"),
    ("readiness", "benchmarks", "evaluation.py"),  # evaluation names what its default set leaves out: not above
])
def test_each_layer_placement_of_the_download_and_readiness_modules_is_what_their_imports_need(unit, placed_with, seen):
    """Placed in another layer, each would be an upward import the check reports (so the table is no free choice)."""
    moved = upward_imports({**RANK, unit: RANK[placed_with]})
    assert any(line.startswith(seen) for line in moved), moved


@pytest.mark.parametrize(("source", "module", "is_package", "expected"), [
    ("from ..backbones.common import pad_ids", ["vision", "extractors"], False, [("backbones", 1)]),
    ("def f():\n    from ..scoring.qace import load_t5", ["text", "scene_graph"], False, [("scoring", 2)]),
    ("import capeval.cli\nfrom capeval.registry import METRICS", ["models"], False, [("cli", 1), ("registry", 2)]),
    ("import capeval", ["scoring", "protocol"], False, [("__init__", 1)]),
    ("from . import __version__", ["cli"], False, [("__init__", 1)]),
    ("from .images import load_image", ["vision"], True, [("vision", 1)]),
    ("from .regions import RegionFeatures\nimport numpy", ["vision", "images"], False, [("vision", 1)]),
])
def test_the_check_sees_relative_absolute_and_nested_imports(source, module, is_package, expected):
    assert imported_units(source, module, is_package) == expected
