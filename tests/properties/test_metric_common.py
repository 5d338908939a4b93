"""Checks every metric module folder the way evaluate's own test harness does (quick, in this process);
test_evaluate_harness.py runs evaluate's harness itself, unchanged."""

import doctest
import inspect
from pathlib import Path

import pytest
import yaml

import evaluate
from capeval.inputs import COMMON_COMPUTE_KWARGS
from fixtures import METRICS

MODULES = sorted(p.name for p in METRICS.iterdir() if (p / f"{p.name}.py").exists())


def card_front_matter(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), "the card must open with Space YAML"
    return yaml.safe_load(text.split("---\n")[1])


@pytest.mark.parametrize("name", MODULES)
def test_folder_anatomy_and_card(name):
    folder = METRICS / name
    for required in ("README.md", "app.py"):
        assert (folder / required).exists(), f"{name} lacks {required}"
    meta = card_front_matter(folder)
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert {"evaluate", "metric"} <= set(meta["tags"]) and meta["description"]
    body = (folder / "README.md").read_text(encoding="utf-8")
    for heading in ("## Metric Description", "## How to Use", "## Limitations and Bias", "## Citation"):
        assert heading in body, f"{name}'s card lacks {heading!r}"


@pytest.mark.parametrize("name", MODULES)
def test_compute_takes_the_common_explicit_kwargs(name):
    module = evaluate.load(str(METRICS / name))
    parameters = inspect.signature(module._compute).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()), "no **kwargs in _compute"
    assert list(parameters)[:2] == ["predictions", "references"]
    for kwarg in COMMON_COMPUTE_KWARGS:
        assert kwarg in parameters and parameters[kwarg].default is None, f"{name}._compute lacks {kwarg}=None"
    info = module._info()
    assert info.citation and info.description and info.codebase_urls and info.reference_urls


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_offline(name, monkeypatch):
    monkeypatch.chdir(METRICS.parent)  # examples load "metrics/<name>" relative to the repo root
    module = evaluate.load(str(METRICS / name))
    python_module = inspect.getmodule(type(module))
    result = doctest.testmod(python_module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 1 and result.failed == 0


PREDICTION_ERRORS = [
    (None, "predictions is None"),
    ([], "predictions is empty"),
    ([None], "predictions\\[0\\] is NoneType"),
    (["a dog", 3], "predictions\\[1\\] is int"),
]
REFERENCE_ERRORS = [
    (None, "references is None"),
    ([[]], "references\\[0\\] is empty"),
    ([["a dog"], ["a cat"]], "got 1 predictions but 2 reference lists"),
]


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("predictions, message", PREDICTION_ERRORS)
def test_bad_predictions_raise_a_clear_error(name, predictions, message):
    module = evaluate.load(str(METRICS / name))
    references = None if predictions is None or not module.needs_references else [["a dog"]] * max(len(predictions or []), 1)
    with pytest.raises(ValueError, match=message):
        module.compute(predictions=predictions, references=references if predictions is not None else [["a dog"]])


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("references, message", REFERENCE_ERRORS)
def test_bad_references_raise_a_clear_error(name, references, message):
    module = evaluate.load(str(METRICS / name))
    if not module.needs_references:
        pytest.skip(f"{name} is reference-free")
    with pytest.raises(ValueError, match=message):
        module.compute(predictions=["a dog"], references=references)
