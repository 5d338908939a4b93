"""BLEU, ROUGE-L and CIDEr-D modules against pycocoevalcap; METEOR's Java handling; the Spaces' handlers."""

import shutil

import numpy as np
import pytest

from capeval.benchmarks import prepare
from capeval.scoring.ngram import lcs_length

pycoco = pytest.importorskip("pycocoevalcap")


@pytest.fixture(scope="module")
def flickr_rows():
    """300 Flickr8k-Expert rows, tokenized once by the pure-Python PTB tokenizer for both sides."""
    from capeval.text.ptb import tokenize_corpus

    items = prepare("flickr8k_expert").items
    raw = items.candidates[:300], items.references[:300]
    candidates, references = tokenize_corpus(*raw)
    gts = dict(enumerate(references))
    res = {i: [c] for i, c in enumerate(candidates)}
    return raw, gts, res


def test_bleu_equals_pycocoevalcap(load_metric, flickr_rows):
    from pycocoevalcap.bleu.bleu import Bleu

    (predictions, references), gts, res = flickr_rows
    corpus, per_caption = Bleu(4).compute_score(gts, res, verbose=0)
    for order in (1, 2, 3, 4):
        result = load_metric("bleu", order=order).compute(predictions=predictions, references=references)
        assert np.allclose(result["scores"], per_caption[order - 1], atol=1e-9, rtol=0)
        assert result["bleu"] == pytest.approx(corpus[order - 1], abs=1e-12)


def test_rouge_and_cider_equal_pycocoevalcap(load_metric, flickr_rows):
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    (predictions, references), gts, res = flickr_rows
    for name, scorer in (("rouge", Rouge()), ("cider", Cider())):
        corpus, per_caption = scorer.compute_score(gts, res)
        result = load_metric(name).compute(predictions=predictions, references=references)
        assert np.allclose(result["scores"], per_caption, atol=1e-9, rtol=0), name
        assert result[{"rouge": "rouge_l", "cider": "cider"}[name]] == pytest.approx(corpus, abs=1e-9)


def test_lcs_equals_dynamic_programming():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = (list(rng.choice(list("abcde"), rng.integers(0, 12))) for _ in range(2))
        table = np.zeros((len(a) + 1, len(b) + 1), int)
        for i in range(len(a)):
            for j in range(len(b)):
                table[i + 1, j + 1] = table[i, j] + 1 if a[i] == b[j] else max(table[i, j + 1], table[i + 1, j])
        assert lcs_length(a, b) == table[-1, -1]


@pytest.mark.parametrize("name", ["bleu", "rouge", "cider", "meteor"])
def test_bad_inputs_and_options(load_metric, name):
    metric = load_metric(name)
    with pytest.raises(ValueError, match="empty"):
        metric.compute(predictions=["a dog"], references=[[]])
    with pytest.raises(ValueError, match="got 2 predictions but 1 reference lists"):
        metric.compute(predictions=["a dog", "a cat"], references=[["a dog"]])
    with pytest.raises(ValueError, match="tokenizer"):
        load_metric(name, tokenizer="spacy")
    with pytest.raises(TypeError, match="unknown option"):
        load_metric(name, tokeniser="ptb")


def test_single_string_references_and_tokenizer_none(load_metric):
    rouge = load_metric("rouge", tokenizer="none")
    assert rouge.compute(predictions=["A dog ."], references=["a dog ."])["scores"] == [pytest.approx(2 / 3)]


def test_meteor_without_java_says_so(load_metric, monkeypatch):
    meteor = load_metric("meteor", engine="jar")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="needs a Java runtime"):
        meteor.compute(predictions=["a dog"], references=[["a dog runs"]])
