"""Both QACE variants load by path offline and score end to end through evaluate with tiny random models."""

import pytest

import capeval.registry

CAPTIONS = ["Two men are riding horses on the ground", "a brown horse"]


def test_ref_variant_through_evaluate(load_metric, qace_options):
    metric = load_metric("qace", **qace_options)
    result = metric.compute(predictions=CAPTIONS, references=[["two people ride horses in an arena"], ["a horse in a field"]])
    direct = capeval.registry.entry("qace").scorer_class()(**qace_options).score(
        CAPTIONS, [["two people ride horses in an arena"], ["a horse in a field"]])
    assert result["scores"] == direct["qace"] and result["qace"] == pytest.approx(sum(direct["qace"]) / 2)
    assert all(0.0 <= value <= 1.0 for value in result["scores"])
    assert [len(questions) for questions in result["questions"]] == [len(q) for q in direct.details["questions"]]
    with pytest.raises(ValueError, match="references is None"):
        metric.compute(predictions=CAPTIONS)


def test_img_variant_through_evaluate(load_metric, qace_options, sample_features):
    metric = load_metric("qace", variant="img", **qace_options)
    assert not metric.needs_references and metric.needs_images
    result = metric.compute(predictions=CAPTIONS, region_features=[str(sample_features)] * 2)
    assert len(result["scores"]) == 2 and all(0.0 <= value <= 1.0 for value in result["scores"])
    assert {"qace_f1", "qace_bertscore", "qace_answerability", "questions"} <= set(result)
    assert "features=butd:precomputed" in result["hashcode"]
    with pytest.raises(ValueError, match="QACE-Img scores captions against images"):
        metric.compute(predictions=CAPTIONS)
