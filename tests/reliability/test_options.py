"""Every option is checked at evaluate.load with a message naming it and its valid values."""

import math

import pytest

import capeval
from capeval.models import ModelUnavailableError
from capeval.scoring.bertscore import BERTScorer


@pytest.fixture(scope="module")
def bert_tbr(minilm_path):
    return {"model_name": minilm_path, "layer": 6, "beta": 0.4}


@pytest.mark.parametrize("options, message", [
    ({"beta": 2}, r"beta must be a number in \[0.0, 1.0\), got 2"),
    ({"beta": math.nan}, r"beta must be a number in \[0.0, 1.0\), got nan"),
    ({"beta": -1}, r"beta must be a number in \[0.0, 1.0\), got -1"),
    ({"beta": 1.0}, r"beta must be a number in \[0.0, 1.0\)"),
    ({"beta": "0.4"}, r"beta must be a number .*got '0.4' \(str\)"),
    ({"idf_sentences": "a dog"}, "idf_sentences must be a non-empty list of strings, not a single string"),
    ({"idf_sentences": []}, "idf_sentences is empty"),
    ({"idf_sentences": ["a dog", 3]}, r"idf_sentences\[1\] is int"),
    ({"layer": "8"}, r"layer must be an integer >= 0 or None, got '8' \(str\)"),
    ({"layer": 2.5}, r"layer must be an integer >= 0"),
    ({"layer": 7}, "layer=7 is out of range .* which has 6 layers"),
    ({"mode": "papers"}, r"mode must be one of \('code', 'paper', 'unigram'\), got 'papers' \(str\)"),
    ({"idf": "coco"}, r"idf must be one of \('corpus', 'flickr8k'\), got 'coco' \(str\)"),
    ({"device": "cuda:7"}, r"device='cuda:7': this machine has \d+ CUDA device"),
    ({"device": "gpu"}, "device must be None, 'cpu', 'cuda' or 'cuda:N'"),
])
def test_bert_tbr_options_fail_at_load(bert_tbr, options, message):
    with pytest.raises(ValueError, match=message):
        capeval.load("bert_tbr", **{**bert_tbr, **options})


@pytest.mark.parametrize("name, options, error, message", [
    ("bert_tbr", {"model_name": "/no/such/model", "layer": 6, "beta": 0.4}, ModelUnavailableError, "model_name='/no/such/model': no such"),
    ("cider", {"sigma": "6"}, ValueError, "sigma must be a number in \\(0\\.0, ∞\\), got '6'"),
    ("cider", {"sigma": math.nan}, ValueError, "sigma must be a number in \\(0\\.0, ∞\\)"),
    ("cider", {"sigma": 0}, ValueError, "sigma must be a number in \\(0\\.0, ∞\\), got 0"),
    ("cider", {"sigma": True}, ValueError, "sigma must be a number in \\(0\\.0, ∞\\), got True"),
    ("bleu", {"order": True}, ValueError, r"order must be one of \(1, 2, 3, 4\), got True"),
    ("bleu", {"order": 5}, ValueError, r"order must be one of \(1, 2, 3, 4\)"),
    ("rouge", {"tokenizer": "spacy"}, ValueError, "tokenizer must be one of"),
    ("smurf", {"preprocess": "no"}, ValueError, r"preprocess must be True or False, got 'no' \(str\)"),
    ("smurf", {"fusion": "sum"}, ValueError, r"fusion must be one of \('code', 'paper'\), got 'sum' \(str\)"),
    ("smurf", {"spurts_model": "./absent-model"}, ModelUnavailableError, "spurts_model='./absent-model': no such"),
    ("smurf", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("umic", {"lowercase": "no"}, ValueError, r"lowercase must be True or False, got 'no'"),
    ("umic", {"num_attention_heads": "4"}, ValueError, "num_attention_heads must be an integer >= 1 or None"),
    ("umic", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("umic", {"checkpoint": "http://example.org/umic.pt"}, ValueError, "plain http:// from 'example.org'"),
    ("umic", {"checkpoint": "/no/such/umic.pt"}, ModelUnavailableError, "checkpoint='/no/such/umic.pt': no such"),
    ("vilbertscore", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("vilbertscore", {"mode": "paper"}, ValueError, r"mode must be one of \('code', 'clean'\), got 'paper' \(str\)"),
    ("vilbertscore", {"tokenizer": "./absent-vocab"}, ModelUnavailableError, "tokenizer='./absent-vocab': no such"),
    ("qace", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("qace", {"device": "gpu"}, ValueError, "device must be None, 'cpu', 'cuda' or 'cuda:N'"),
    ("qace", {"qg_model": "/no/such/qg"}, ModelUnavailableError, "qg_model='/no/such/qg': no such"),
    ("qace", {"qa_model": "./absent-qa"}, ModelUnavailableError, "qa_model='./absent-qa': no such"),
    ("qace", {"visual_t5": "/no/such/ckpt.zip"}, ModelUnavailableError, "visual_t5='/no/such/ckpt.zip': no such"),
    ("qace", {"visual_t5": "http://example.org/ckpt.zip"}, ValueError, "plain http:// from 'example.org'"),
    ("qace", {"visual_t5_tokenizer": "~/no-such-t5-tokenizer"}, ModelUnavailableError, "visual_t5_tokenizer='~/no-such-t5-tokenizer'"),
    ("qace", {"bertscore_model": "/no/such/bert"}, ModelUnavailableError, "bertscore_model='/no/such/bert': no such"),
    ("qace", {"bertscore_layer": True}, ValueError, r"bertscore_layer must be an integer >= 0 or None, got True \(bool\)"),
    ("qace", {"bertscore_layer": -1}, ValueError, r"bertscore_layer must be an integer >= 0 or None, got -1 \(int\)"),
    ("qace", {"variant": "text"}, ValueError, r"variant must be one of \('ref', 'img'\), got 'text' \(str\)"),
    ("qace", {"answerability": 1}, ValueError, r"answerability must be one of \(None, True, False\), got 1 \(int\)"),
    ("qace", {"multi_ref": "min"}, ValueError, r"multi_ref must be one of \('max', 'mean', 'concat'\), got 'min' \(str\)"),
])
def test_module_options_fail_at_load(name, options, error, message):
    with pytest.raises(error, match=message):
        capeval.load(name, **options)


def test_bertscore_options_fail_when_built(minilm_path):
    for options, message in [({"idf": "yes"}, "idf must be True or False"), ({"layer": "6"}, "layer must be an integer"),
                             ({"pad_like_bert_score": 1}, "pad_like_bert_score must be True or False"),
                             ({"idf_sentences": "a dog"}, "not a single string"), ({"layer": 9}, "out of range")]:
        with pytest.raises(ValueError, match=message):
            BERTScorer(minilm_path, **options)


def declared_bad_values():
    """For every registered scorer's options declared as a bool, an int or a number in an interval: a value each
    declaration refuses (a string for a bool, a fraction for an int, a number past the interval's ends)."""
    from capeval.declaration import declared_options, interval

    for name in sorted(capeval.METRICS):
        for spec in declared_options(capeval.METRICS[name].scorer_class()):
            if spec.choices is not None or spec.check is not None:
                continue
            if spec.kinds == (bool,):
                yield name, spec.name, "yes", f"{spec.name} must be True or False"
            elif spec.kinds == (int,):
                yield name, spec.name, 1.5, f"{spec.name} must be an integer"
            elif spec.within is not None:
                bounds = interval(spec.within)
                yield name, spec.name, bounds["low"] - 1, f"{spec.name} must be a number in"
                if bounds["high"] is not None:
                    yield name, spec.name, bounds["high"] + 1, f"{spec.name} must be a number in"


@pytest.mark.parametrize("name, option, value, message", list(declared_bad_values()))
def test_every_declared_kind_and_interval_is_checked_at_load(name, option, value, message):
    """Nothing is loaded: the declaration refuses the value before the scorer's __init__ runs."""
    with pytest.raises(ValueError, match=message):
        capeval.METRICS[name].scorer_class()(**{option: value})
