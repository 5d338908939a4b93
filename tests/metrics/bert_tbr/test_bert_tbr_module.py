"""The BERT-TBR evaluate module: loading offline by path, options, bad input, real weights."""

import warnings

import pytest

PREDICTIONS = ["a dog runs on the grass", "a cat sleeps on a chair", ""]
REFERENCES = [
    ["a dog running on grass", "the brown dog runs in a park", "a dog plays outside"],
    ["a cat is sleeping", "a kitten naps on a wooden chair"],
    ["two people walk on a beach"],
]


@pytest.fixture(scope="module")
def tiny_tbr(load_metric, tiny_bert_path):
    return load_metric("bert_tbr", model_name=tiny_bert_path, layer=8, beta=0.4)


def test_tiny_model_scores_through_the_module(tiny_tbr):
    result = tiny_tbr.compute(predictions=PREDICTIONS, references=REFERENCES)
    scores = result["scores"]
    assert scores == tiny_tbr.scorer.score(PREDICTIONS, REFERENCES)["bert_tbr"]  # the module adds nothing to the scorer's values
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[0] > 0.0
    assert scores[2] == 0.0  # empty candidate: documented score 0
    assert result["bert_tbr"] == pytest.approx(sum(scores) / 3)
    assert "layer=8" in result["hashcode"] and "mode=code" in result["hashcode"] and "idf=corpus" in result["hashcode"]


def test_single_string_references_are_accepted(tiny_tbr):
    result = tiny_tbr.compute(predictions=["a dog runs"], references=["a dog running on grass"])
    assert result["scores"] == tiny_tbr.compute(predictions=["a dog runs"], references=[["a dog running on grass"]])["scores"]


def test_identity_scores_one_with_minilm(load_metric, minilm_path):
    metric = load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4)
    refs = ["a brown dog runs across the grass", "a brown dog runs across the grass"]
    result = metric.compute(predictions=["a brown dog runs across the grass", "a red bus"],
                            references=[refs, ["a red bus parked on the street", "a bus"]])
    assert result["scores"][0] == pytest.approx(1.0, abs=1e-5)


def test_paper_mode_and_idf_sentences(load_metric, minilm_path):
    paper = load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4, mode="paper")
    code = load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4, idf_sentences=["a dog", "a cat"])
    a = paper.compute(predictions=PREDICTIONS, references=REFERENCES)
    b = code.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert "mode=paper" in a["hashcode"] and "idf=given:2" in b["hashcode"]
    assert a["scores"] != b["scores"]


def test_references_that_are_all_blank_are_rejected(tiny_tbr):
    # The generic bad-input checks for every module are in test_metric_common.py.
    with pytest.raises(ValueError, match="only empty strings"):
        tiny_tbr.compute(predictions=["a dog"], references=[["", " "]])


def test_caption_over_512_tokens_is_truncated_with_a_warning(tiny_tbr):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = tiny_tbr.compute(predictions=["dog " * 700], references=[["a dog", "dogs " * 600]])
    assert any("truncated" in str(w.message) for w in caught)
    assert 0.0 < result["scores"][0] <= 1.0  # the truncated "dog dog ..." still matches "dogs ..." and "a dog"


def test_option_errors(load_metric, tiny_bert_path):
    with pytest.raises(TypeError, match="BertTbr: unknown option\\(s\\) \\['layr'\\]"):
        load_metric("bert_tbr", model_name=tiny_bert_path, layr=8)
    with pytest.raises(ValueError, match="mode must be one of"):
        load_metric("bert_tbr", mode="fast")
    with pytest.raises(ValueError, match="no published β"):
        load_metric("bert_tbr", model_name=tiny_bert_path)


def test_unigram_mode_needs_no_model(load_metric):
    metric = load_metric("bert_tbr", mode="unigram")
    result = metric.compute(predictions=["The dog is running", "two dogs in the snow"],
                            references=[["The dog runs on the grass", "a dog running"], ["two dogs play in the snow", "Two dogs playing in snow"]])
    assert result["scores"] == pytest.approx([0.6, 0.4])


def test_real_bert_base_uncased_when_available(load_metric):
    """Needs the real bert-base-uncased weights in the local HuggingFace cache."""
    from capeval.models import ModelUnavailableError, load_hf_model

    try:
        load_hf_model("bert-base-uncased")
    except ModelUnavailableError:
        pytest.skip("bert-base-uncased weights are not in the local HuggingFace cache (offline); run `hf download bert-base-uncased` to enable")
    metric = load_metric("bert_tbr")  # the paper's defaults: layer 8, β = 0.4
    refs = ["a dog runs across the grass", "a dog runs across the grass"]
    result = metric.compute(predictions=["a dog runs across the grass", "a red bus"], references=[refs, ["a red bus on the street", "a bus"]])
    assert result["scores"][0] == pytest.approx(1.0, abs=1e-5)
    assert "bert-base-uncased" in result["hashcode"] and "layer=8" in result["hashcode"] and "beta=0.4" in result["hashcode"]


def test_two_modules_share_one_loaded_model(load_metric, minilm_path):
    from capeval import models
    from capeval.scoring.bertscore import BERTScorer

    first = load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4)
    second = load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.5, mode="paper")
    first.compute(predictions=["a dog"], references=[["a dog runs"]])
    second.compute(predictions=["a dog"], references=[["a dog runs"]])
    BERTScorer(minilm_path, layer=3).score(["a dog"], [["a dog runs"]])
    # One MiniLM (without eager attentions; SMURF tests may load an eager one) for both modules and the scorer.
    loaded = [key for key in models._CACHE if key[:3] == ("hf-model", minilm_path, None)]
    assert len(loaded) == 1


def test_combine_with_a_second_module(load_metric, minilm_path):
    import evaluate

    combined = evaluate.combine([load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4), load_metric("bleu")])
    result = combined.compute(predictions=PREDICTIONS[:2], references=REFERENCES[:2], images=None, batch_size=8)
    # Shared key names are prefixed with the module name; the rest stay as they are.
    alone = [load_metric(name, **options).compute(predictions=PREDICTIONS[:2], references=REFERENCES[:2])
             for name, options in (("bert_tbr", {"model_name": minilm_path, "layer": 6, "beta": 0.4}), ("bleu", {}))]
    assert result["bert_tbr_scores"] == alone[0]["scores"] and result["bleu_scores"] == alone[1]["scores"]
    assert (result["bert_tbr"], result["bleu"]) == (alone[0]["bert_tbr"], alone[1]["bleu"])
    assert result["bert_tbr_hashcode"].startswith("bert_tbr(") and result["bleu_hashcode"].startswith("bleu(")
