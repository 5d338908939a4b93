"""Plain BERTScore mode equals bert_score.score on the same real MiniLM weights."""

import pytest

from capeval.scoring.bertscore import BERTScorer

bert_score = pytest.importorskip("bert_score")

CANDIDATES = [
    "a man rides a bicycle on the street",
    "A black dog is running through the grass .",
    "two children play with a ball on the beach",
    "a woman in a red coat walks past a shop window",
    "an old man sitting on a park bench reading a newspaper",
    "a dog",
    "Several people are standing near a fountain in a city square .",
]
REFERENCES = [
    ["a man riding a red bike down the street", "a person cycles along a road"],
    ["A dog runs in the grass .", "The black dog is running .", "a dog running outside", "Dog in a field", "a black puppy plays"],
    ["kids playing on the sand", "two boys kick a ball near the water"],
    ["a woman walking in the city"],
    ["an elderly man reads on a bench", "a man reading the paper in a park", "someone sits outside"],
    ["a cat on a chair", "two dogs"],
    ["People gather around a fountain .", "A crowd in a plaza with a fountain ."],
]


@pytest.mark.slow
@pytest.mark.parametrize("idf", [False, True])
def test_equals_bert_score(minilm_path, idf):
    ours = BERTScorer(minilm_path, layer=6, idf=idf).score(CANDIDATES, REFERENCES)
    precision, recall, f1 = bert_score.score(CANDIDATES, REFERENCES, model_type=minilm_path, num_layers=6, idf=idf, lang="en")
    assert ours["precision"] == pytest.approx(precision.tolist(), abs=1e-6)
    assert ours["recall"] == pytest.approx(recall.tolist(), abs=1e-6)
    assert ours["f1"] == pytest.approx(f1.tolist(), abs=1e-6)


def test_published_test_vector(minilm_path):
    scorer = BERTScorer(minilm_path, layer=6)
    out = scorer.score(CANDIDATES[:1], REFERENCES[:1])
    assert out["f1"][0] == pytest.approx(0.778, abs=5e-4)
    assert "layer=6" in scorer.hashcode(out) and "idf=False" in scorer.hashcode(out)


def test_empty_candidate_scores_zero(minilm_path):
    out = BERTScorer(minilm_path, layer=6).score(["", "  "], [["a dog"], ["a cat"]])
    assert out["f1"] == [0.0, 0.0] and out["precision"] == [0.0, 0.0]
