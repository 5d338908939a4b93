"""capeval.evaluate: every metric in one call, equal to each metric's own module."""

import json
import os
import subprocess
import sys

import pytest

import capeval
from capeval.benchmarks import load_benchmark

SPECS = ["bleu", "rouge", "cider", ("smurf", {"components": ["sparcs"]}), ("bert_tbr", {"mode": "unigram"})]


@pytest.fixture(scope="module")
def flickr8k_rows():
    rows = load_benchmark("flickr8k_expert")
    return list(rows["candidate"]), [list(refs) for refs in rows["references"]]


@pytest.mark.slow
def test_evaluate_equals_each_module_on_flickr8k_expert(flickr8k_rows):
    predictions, references = flickr8k_rows
    result = capeval.evaluate(predictions, references, metrics=SPECS)
    for spec in SPECS:
        name, options = (spec, {}) if isinstance(spec, str) else spec
        module = capeval.load(name, **options)
        own = module.compute(predictions=predictions, references=references)
        scorer = module.scorer
        assert result.columns[scorer.primary] == pytest.approx(own["scores"], abs=1e-9), name
        assert result.corpus[scorer.primary] == pytest.approx(own[scorer.name], abs=1e-9), name
    bleu = capeval.load("bleu").compute(predictions=predictions, references=references)
    assert [result.corpus[f"bleu_{n}"] for n in range(1, 5)] == pytest.approx([bleu[f"bleu_{n}"] for n in range(1, 5)], abs=1e-12)
    assert result.per_caption.shape == (len(predictions), len(result.columns))
    assert set(result.provenance) == {"bleu", "rouge", "cider", "smurf(components=['sparcs'])", "bert_tbr(mode=unigram)"}


def test_the_result_travels_as_json_and_markdown():
    result = capeval.evaluate(["a dog runs"], [["a dog runs fast", "a dog"]], metrics=["bleu", "rouge"])
    data = json.loads(result.to_json())
    assert data["corpus"] == result.corpus and data["per_caption"] == result.columns
    assert data["provenance"]["bleu"].startswith("bleu(order=4,tokenizer=ptb")
    assert "| rouge_l |" in result.to_markdown() and result["rouge_l"] == result.corpus["rouge_l"]


def test_a_column_two_metrics_share_is_prefixed_by_metric(tiny_bert_path):
    """ViLBERTScore and BERTScore both report precision/recall/f1: each keeps its own under its metric's name, even
    alone; the same metric twice is told apart by its label."""
    result = capeval.evaluate(["a dog runs"], [["a dog runs fast"]],
                              metrics=[("bertscore", {"model_name": tiny_bert_path, "layer": 2}), "bleu", "bleu:order=1"])
    assert {"bertscore_f1", "f1"} & set(result.corpus) == {"bertscore_f1"}
    assert "bleu" in result.corpus and "bleu_order_1" in result.corpus and result.corpus["bleu_order_1"] != result.corpus["bleu"]


@pytest.mark.parametrize("metrics, error", [([], "metrics is empty"), (["nope"], "no capeval metric 'nope'"),
                                            ([["bleu"]], "a metric spec is a name")])
def test_bad_metric_specs(metrics, error):
    with pytest.raises((ValueError, KeyError), match=error):
        capeval.evaluate(["a dog"], [["a dog"]], metrics=metrics)


def test_bad_inputs_name_the_metric():
    with pytest.raises(ValueError, match=r"rouge: references\[0\] is empty"):
        capeval.evaluate(["a dog"], [[]], metrics=["rouge"])


def test_text_metrics_import_neither_torch_nor_evaluate():
    code = ("import sys, capeval; capeval.evaluate(['a dog'], [['a dog runs']], metrics=['bleu', 'rouge', 'cider']); "
            "print(sorted(m for m in ('torch', 'evaluate', 'transformers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_loading_a_text_metric_imports_neither_transformers_nor_torch():
    """evaluate's own __init__ would import transformers.pipelines (and torch): ~5 s of CPU for nothing."""
    code = ("import sys, capeval; chair = capeval.load('chair', variant='original'); "
            "result = chair.compute(predictions=['a dog on a sofa'], references=[['a dog on a couch']]); "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules), 'evaluate' in sys.modules, "
            "sorted(result)[:2])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.stdout.strip() == "[] True ['chair_i', 'chair_s']"


@pytest.mark.slow
def test_evaluates_evaluator_still_works_where_transformers_was_imported_first():
    code = ("import sys, transformers, capeval; capeval.load('bleu'); import evaluate; "
            "print(evaluate.evaluator('text-classification').__class__.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.stdout.strip() == "TextClassificationEvaluator"


def test_all_is_every_registered_metric_with_its_papers_defaults():
    from capeval.evaluation import metric_runs

    runs = metric_runs("all")
    assert [run.scorer.metric for run in runs] == list(capeval.METRICS)
    assert [run.label for run in runs] == [capeval.METRICS[name].title for name in capeval.METRICS]
    assert {run.scorer.options()["model"] for run in runs if run.scorer.metric == "bertscore"} == {"roberta-large"}


def test_a_plugin_cannot_shadow_a_capeval_metric(monkeypatch):
    from capeval import registry

    plugin = registry.MetricEntry("bleu", "somewhere.else:OtherBleu")
    extra = registry.MetricEntry("extra", "capeval.scoring.coco:RougeScorer")
    monkeypatch.setattr(registry, "plugin_metrics", lambda: {"bleu": plugin, "extra": extra})
    fresh = registry.Registry()
    with pytest.warns(UserWarning, match="entry point 'bleu' .* is shadowed by capeval's own metric"):
        assert fresh["bleu"].scorer == "capeval.scoring.coco:BleuScorer"
    assert fresh["extra"].scorer == "capeval.scoring.coco:RougeScorer" and fresh["extra"].folder is None
