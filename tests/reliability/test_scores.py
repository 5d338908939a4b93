"""Scores in their documented ranges, BERT-TBR's bounded memory on huge reference sets, and tests that pin the
thresholds, the IDF option, BERTScore's padding floors and UMIC's box selection (each fails on a one-line change)."""

import numpy as np
import pytest
import torch

from capeval.scoring import bert_tbr
from capeval.scoring.bert_tbr import (BertTbrScorer, EncodedCaption, bert_tbr_score, stack_references, stopword_recall,
                                      thresholded_recall)
from capeval.scoring.bertscore import BERTScorer
from capeval.scoring.coco import CiderScorer
from capeval.scoring.umic import umic_from_logit, umic_num_boxes
from capeval.text.encoder import EncodedSequence
from capeval.text.idf import idf_weights
from capeval.vision.regions import RegionFeatures

CAPTIONS = ["A golden retriever running on short grass wearing an orange outfit .", "A dog gets on a trampoline .",
            "A youth playing hockey .", "two dogs play in the snow"]


def test_cider_d_of_a_caption_equal_to_its_reference_is_at_most_10():
    for scorer in (CiderScorer(), CiderScorer(idf="flickr8k")):
        scores = scorer.score(CAPTIONS, [[c] for c in CAPTIONS])["cider"]
        assert max(scores) <= 10.0 and scores[1] == pytest.approx(10.0)


def test_bert_tbr_of_a_caption_equal_to_its_references_is_at_most_1(minilm_path):
    scorer = BertTbrScorer(minilm_path, layer=6, beta=0.4, idf="flickr8k", device="cpu")
    scores = scorer.score(CAPTIONS, [[c, c] for c in CAPTIONS])["bert_tbr"]
    assert max(scores) <= 1.0 and scores == pytest.approx([1.0] * 4, abs=1e-6)


def test_umic_reaches_its_closed_ends_only_for_extreme_logits():
    assert umic_from_logit(-710.0) == 0.0 and umic_from_logit(40.0) == 1.0 and 0.0 < umic_from_logit(-700.0) < 1e-300


def random_caption(generator, pieces, dim=8):
    rows = torch.nn.functional.normalize(torch.randn(len(pieces) + 2, dim, generator=generator) + 0.5, dim=-1)
    return EncodedCaption(rows.numpy(), [101, *(1000 + sum(map(ord, p)) for p in pieces), 102], list(pieces))


@pytest.mark.slow
def test_huge_reference_sets_are_matched_in_bounded_chunks(monkeypatch):
    generator = torch.Generator().manual_seed(0)
    words = ["a", "dog", "runs", "on", "the", "grass", "park"]
    references = [random_caption(generator, [words[(i + k) % 7] for k in range(7)]) for i in range(2000)]
    candidate = random_caption(generator, ["a", "dog", "runs"])
    idf = idf_weights([r.ids for r in references] + [candidate.ids])
    monkeypatch.setattr(bert_tbr, "SIMILARITY_CHUNK", 10**9)  # whole, as before
    whole = bert_tbr_score(candidate, references[:300], idf, frozenset(["a", "the"]))
    sizes = []
    original = bert_tbr.segment_max
    monkeypatch.setattr(bert_tbr, "segment_max", lambda matrix, lengths: sizes.append(matrix.size) or original(matrix, lengths))
    monkeypatch.setattr(bert_tbr, "SIMILARITY_CHUNK", 50_000)
    assert bert_tbr_score(candidate, references[:300], idf, frozenset(["a", "the"])) == pytest.approx(whole, abs=1e-12)
    sizes.clear()
    monkeypatch.setattr(bert_tbr, "SIMILARITY_CHUNK", 1 << 20)
    assert 0.0 < bert_tbr_score(candidate, references, idf, frozenset(["a", "the"])) <= 1.0
    assert max(sizes) <= 1 << 20 and len(sizes) > 1  # 14,000 pieces: never the 14,000 × 14,000 matrix


def test_a_maximum_equal_to_beta_does_not_pass():
    maxima, weights = np.array([0.4, 0.9]), np.ones(2)
    assert thresholded_recall(maxima, weights, 0.4) == pytest.approx(0.9)
    assert stopword_recall(maxima, 0.4, "code") == pytest.approx(0.9)
    assert stopword_recall(maxima, 0.4, "paper") == pytest.approx(0.45)
    eye = np.eye(4, dtype=np.float32)  # orthogonal pieces: every cross-reference cosine is exactly 0 = β
    references = [EncodedCaption(eye[[0, 1, 0]], [101, 11, 102], ["x"]), EncodedCaption(eye[[0, 2, 0]], [101, 12, 102], ["y"])]
    assert stack_references(references, beta=0.0).matches.tolist() == [[True, False], [False, True]]


def test_fixed_idf_sentences_are_used_in_code_mode(minilm_path):
    predictions, references = CAPTIONS[:2], [[CAPTIONS[2], CAPTIONS[3]], [CAPTIONS[0], CAPTIONS[3]]]
    corpus = BertTbrScorer(minilm_path, layer=6, beta=0.4, mode="code", device="cpu")
    documents = ["a dog", "a dog runs", "grass", "a man on a horse", "snow"]
    fixed = BertTbrScorer(minilm_path, layer=6, beta=0.4, mode="code", idf_sentences=documents, device="cpu")
    encoded = fixed.encode([*predictions, *(r for refs in references for r in refs)])
    idf = fixed.encoder.idf_weights(documents)
    expected = [bert_tbr_score(encoded[p], [encoded[r] for r in refs], idf, fixed.stop_words, beta=0.4, mode="code")
                for p, refs in zip(predictions, references)]
    assert fixed.score(predictions, references)["bert_tbr"] == pytest.approx(expected, abs=1e-12)
    assert corpus.score(predictions, references)["bert_tbr"] != pytest.approx(expected, abs=1e-3)


class FixedEncoder:
    """Token vectors given per sentence (an encoder stand-in), so similarities can be chosen exactly."""

    name_or_path = "fixed-encoder"

    def __init__(self, vectors):
        self.vectors = vectors

    def encode(self, sentences, *, batch_size=64, show_progress=None):
        return [EncodedSequence(ids=list(range(len(self.vectors[s]))), special=[True] + [False] * (len(self.vectors[s]) - 2) + [True],
                                hidden=torch.tensor(self.vectors[s], dtype=torch.float32)) for s in sentences]


def test_bertscore_padding_floors_apply_to_the_padded_side_only(monkeypatch):
    right, left = [1.0, 0.0], [-1.0, 0.0]
    vectors = {"c0": [right] * 4, "c1": [right] * 4, "r0": [left] * 3, "r1": [right] * 5}
    scorer = BERTScorer("fixed-encoder")
    monkeypatch.setattr(BERTScorer, "encoder", property(lambda self: FixedEncoder(vectors)))
    # One padded batch of two pairs: candidates are 4 and 4 tokens long, references 3 and 5, so only r0 is padded.
    scores = scorer.score(["c0", "c1"], [["r0"], ["r1"]], batch_size=2)
    # Every similarity of (c0, r0) is -1: the candidate's maxima take r0's padding zeros (precision 0), the
    # reference's maxima have no padding to take (recall -1).
    assert scores["precision"][0] == 0.0 and scores["recall"][0] == pytest.approx(-1.0)
    assert scores["precision"][1] == pytest.approx(1.0) and scores["recall"][1] == pytest.approx(1.0)


def regions(count, conf=None):
    return RegionFeatures.from_butd(np.zeros((count, 4), np.float32), np.zeros((count, 6), np.float32), conf)


def test_umic_box_selection_at_the_threshold_and_the_cap():
    assert umic_num_boxes(regions(30, np.float32([0.2] * 30))) == 10  # float32 0.2 is not above 0.2
    assert umic_num_boxes(regions(30, np.float32([0.21] * 30))) == 30
    assert umic_num_boxes(regions(120)) == 100  # no conf: every stored box counts, at most 100
    assert umic_num_boxes(regions(120, np.float32([0.9] * 120))) == 100
    assert umic_num_boxes(regions(6)) == 6
