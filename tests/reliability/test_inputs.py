"""Bad inputs through the evaluate modules: batch sizes, malformed references, generators, a failed call followed
by a good one, leftover cache files, one instance shared by threads."""

import threading

import evaluate
import pytest

import capeval
from capeval.inputs import normalize_references

PREDICTIONS = ["a dog runs on the grass", "two cats sleep on a sofa", "a man rides a red bike"]
REFERENCES = [["a dog running on grass", "the dog runs"], ["a cat sleeping on a couch", "two cats on a sofa"],
              ["a man riding a bicycle", "a person on a red bike"]]


@pytest.fixture(scope="module")
def text_modules(minilm_path):
    """One cheap configuration of each text module (MiniLM stands in for the paper's models)."""
    return {
        "bleu": capeval.load("bleu"), "rouge": capeval.load("rouge"), "cider": capeval.load("cider"),
        "bert_tbr": capeval.load("bert_tbr", model_name=minilm_path, layer=6, beta=0.4, device="cpu"),
        "smurf": capeval.load("smurf", components=["sparcs"]),
    }


@pytest.mark.parametrize("batch_size", [-3, 0, 2.5, True, "4"])
def test_invalid_batch_sizes_are_refused_by_every_module(text_modules, tiny_umic, sample_features, batch_size):
    umic = capeval.load("umic", **tiny_umic)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1 or None"):
        umic.compute(predictions=["two men riding horses"], region_features=[str(sample_features)], batch_size=batch_size)
    for name, module in text_modules.items():
        with pytest.raises(ValueError, match="batch_size must be an integer >= 1 or None"):
            module.compute(predictions=PREDICTIONS, references=REFERENCES, batch_size=batch_size)


def test_batch_size_does_not_change_model_scores(text_modules, tiny_umic, sample_features):
    umic = capeval.load("umic", **tiny_umic)
    captions = ["two men riding horses", "a man on a horse in a field", "a dog"]
    features = [str(sample_features)] * 3
    one, default = (umic.compute(predictions=captions, region_features=features, batch_size=b)["scores"] for b in (1, None))
    assert one == pytest.approx(default, abs=1e-6) and len(set(default)) == 3
    bert_tbr = text_modules["bert_tbr"]
    one, default = (bert_tbr.compute(predictions=PREDICTIONS, references=REFERENCES, batch_size=b)["scores"] for b in (1, None))
    assert one == pytest.approx(default, abs=1e-6)


@pytest.mark.parametrize("references, message", [
    ([5, ["a dog"], ["a man"]], r"references\[0\] must be a string or a list of strings, got int"),
    ([[["a dog runs"]], ["a cat"], ["a man"]], r"references\[0\]\[0\] is list, expected str"),
    ([["a dog", None], ["a cat"], ["a man"]], r"references\[0\]\[1\] is NoneType, expected str"),
    ([["a dog", 3], ["a cat"], ["a man"]], r"references\[0\]\[1\] is int, expected str"),
    ({"a": 1}, "references must be one reference, or a list of references, per prediction, not a single dict"),
])
def test_malformed_references_are_refused_not_stringified(text_modules, references, message):
    for module in text_modules.values():
        with pytest.raises(ValueError, match=message):
            module.compute(predictions=PREDICTIONS, references=references)


def test_none_inside_references_is_a_value_error():
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] is NoneType"):
        normalize_references([["a dog", None]], 1)


def test_any_iterable_is_accepted(text_modules):
    for module in text_modules.values():
        expected = module.compute(predictions=PREDICTIONS, references=REFERENCES)
        given = module.compute(predictions=(p for p in PREDICTIONS), references=(tuple(r) for r in REFERENCES))
        assert per_caption(given) == per_caption(expected)


def test_a_failed_call_does_not_break_the_next_one(text_modules):
    for module in text_modules.values():
        with pytest.raises(ValueError, match="got 2 predictions but 1 reference lists"):
            module.compute(predictions=PREDICTIONS[:2], references=["a dog"])
        flat = module.compute(predictions=PREDICTIONS[:2], references=["a dog runs", "two cats on a sofa"])
        nested = module.compute(predictions=PREDICTIONS[:2], references=[["a dog runs"], ["two cats on a sofa"]])
        assert per_caption(flat) == per_caption(nested)


def cache_files(folder):
    return {p.name for p in folder.rglob("*") if p.is_file()}


def per_caption(result):
    return result["scores"]


def test_a_call_failing_inside_the_scorer_leaves_no_cache_files(tmp_path, monkeypatch):
    module = evaluate.load(capeval.module_path("cider"), cache_dir=str(tmp_path))
    expected = module.compute(predictions=PREDICTIONS, references=REFERENCES)
    after_success = cache_files(tmp_path)  # evaluate leaves its lock file after a successful call

    def broken(*args, **kwargs):
        raise RuntimeError("the scorer failed")

    with monkeypatch.context() as patch:
        patch.setattr(module.scorer, "score", broken)
        with pytest.raises(RuntimeError, match="the scorer failed"):
            module.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert cache_files(tmp_path) <= after_success
    assert module.compute(predictions=PREDICTIONS, references=[r[0] for r in REFERENCES])["scores"] != expected["scores"]
    assert module.compute(predictions=PREDICTIONS, references=REFERENCES)["scores"] == expected["scores"]


def test_one_instance_shared_by_threads_gives_each_its_own_result(text_modules):
    module = text_modules["cider"]
    calls = [(PREDICTIONS[: 1 + i % 3], REFERENCES[: 1 + i % 3]) for i in range(24)]
    expected = [module.compute(predictions=p, references=r)["scores"] for p, r in calls]
    results, errors = [None] * len(calls), []

    def work(indices):
        for i in indices:
            try:
                results[i] = module.compute(predictions=calls[i][0], references=calls[i][1])["scores"]
            except Exception as error:  # noqa: BLE001 - collected and reported below
                errors.append(error)

    threads = [threading.Thread(target=work, args=(range(k, len(calls), 4),)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == expected


class Caption(str):
    """A subclass of str: accepted wherever a str is."""


def test_inputs_checked_at_c_speed_give_what_the_item_by_item_checks_give():
    assert normalize_references([("a dog", "the dog"), ["a cat"]], 2) == [["a dog", "the dog"], ["a cat"]]
    assert normalize_references([[Caption("a dog")], "a cat"], 2) == [["a dog"], ["a cat"]]  # not all lists: one by one
    assert capeval.inputs.validate_predictions((Caption("a dog"), "a cat")) == ["a dog", "a cat"]
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        normalize_references([["a dog"], []], 2)
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] is int"):
        normalize_references([["a dog", 3]], 1)
    with pytest.raises(ValueError, match=r"predictions\[1\] is bytes"):
        capeval.inputs.validate_predictions(["a dog", b"a cat"])
