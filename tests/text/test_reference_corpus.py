"""The shipped Flickr8k reference corpus as IDF for CIDEr-D and BERT-TBR, and the encoder's cross-call cache."""

import pytest
import torch

from capeval.scoring.bert_tbr import BertTbrScorer
from capeval.scoring.coco import CiderScorer
from capeval.text.encoder import TextEncoder
from capeval.text.reference_corpus import reference_sentences

CANDIDATES = ["a dog runs on the grass", "two men ride horses"]
REFERENCES = [["a dog running on grass", "the brown dog runs"], ["two people riding horses", "riders on horses"]]


def test_fixed_idf_makes_each_score_independent_of_the_others(minilm_path):
    assert len(reference_sentences("flickr8k")) == 5000
    for scorer in (CiderScorer(idf="flickr8k"), BertTbrScorer(minilm_path, layer=6, beta=0.4, idf="flickr8k")):
        together = scorer.score(CANDIDATES, REFERENCES)[scorer.primary]
        alone = scorer.score(CANDIDATES[:1], REFERENCES[:1])[scorer.primary]
        assert alone[0] == pytest.approx(together[0], abs=1e-6) and alone[0] > 0.3
        assert not scorer.corpus_dependent and scorer.options()["idf"] == "flickr8k"
    assert CiderScorer().corpus_dependent and "idf" not in CiderScorer().options()  # the toolkit's default is unchanged


def test_idf_option_errors(minilm_path):
    with pytest.raises(ValueError, match="idf must be one of"):
        CiderScorer(idf="coco")
    with pytest.raises(ValueError, match="not both"):
        BertTbrScorer(minilm_path, layer=6, beta=0.4, idf="flickr8k", idf_sentences=["a dog"])


def test_cache_keeps_single_call_outputs_identical(minilm_path, monkeypatch):
    sentences = ["a dog runs", "two cats sleep on a sofa", "a dog runs"]
    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", "0")
    uncached = TextEncoder(minilm_path, layer=6)
    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", "64")
    cached = TextEncoder(minilm_path, layer=6)
    for first, second in zip(uncached.encode(sentences), cached.encode(sentences)):
        assert first.ids == second.ids and torch.equal(first.hidden, second.hidden)
    assert len(uncached.cache) == 0 and len(cached.cache) == 2
    assert cached.encode(sentences[1:2])[0] is cached.encode(sentences)[1]  # the second call reuses the first's
