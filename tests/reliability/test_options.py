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
    ({"mode": "papers"}, r"mode must be one of \('code', 'paper', 'unigram'\)"),
    ({"device": "cuda:7"}, r"device='cuda:7': this machine has \d+ CUDA device"),
    ({"device": "gpu"}, "device must be None, 'cpu', 'cuda' or 'cuda:N'"),
])
def test_bert_tbr_options_fail_at_load(bert_tbr, options, message):
    with pytest.raises(ValueError, match=message):
        capeval.load("bert_tbr", **{**bert_tbr, **options})


@pytest.mark.parametrize("name, options, error, message", [
    ("bert_tbr", {"model_name": "/no/such/model", "layer": 6, "beta": 0.4}, ModelUnavailableError, "model_name='/no/such/model': no such"),
    ("cider", {"sigma": "6"}, ValueError, "sigma must be a positive number, got '6'"),
    ("cider", {"sigma": math.nan}, ValueError, "sigma must be a positive number"),
    ("cider", {"sigma": 0}, ValueError, "sigma must be a positive number, got 0"),
    ("cider", {"sigma": True}, ValueError, "sigma must be a positive number, got True"),
    ("bleu", {"order": True}, ValueError, "order must be 1, 2, 3 or 4, got True"),
    ("bleu", {"order": 5}, ValueError, "order must be 1, 2, 3 or 4"),
    ("rouge", {"tokenizer": "spacy"}, ValueError, "tokenizer must be one of"),
    ("smurf", {"preprocess": "no"}, ValueError, r"preprocess must be True or False, got 'no' \(str\)"),
    ("smurf", {"fusion": "sum"}, ValueError, r"fusion must be one of \('code', 'paper'\)"),
    ("smurf", {"spurts_model": "./absent-model"}, ModelUnavailableError, "spurts_model='./absent-model': no such"),
    ("smurf", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("umic", {"lowercase": "no"}, ValueError, r"lowercase must be True or False, got 'no'"),
    ("umic", {"num_attention_heads": "4"}, ValueError, "num_attention_heads must be an integer >= 1 or None"),
    ("umic", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
    ("umic", {"checkpoint": "http://example.org/umic.pt"}, ValueError, "plain http:// from 'example.org'"),
    ("umic", {"checkpoint": "/no/such/umic.pt"}, ModelUnavailableError, "checkpoint='/no/such/umic.pt': no such"),
    ("vilbertscore", {"device": "cuda:7"}, ValueError, "device='cuda:7'"),
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
