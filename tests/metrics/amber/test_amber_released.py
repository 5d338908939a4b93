"""AMBER against the outputs of its released inference.py (run unchanged on the fixture, see
tests/assets/PROVENANCE.md): every description's counters, and the printed CHAIR, Cover, Hal and Cog at three
thresholds; the similarity equal to spaCy's own; the NLTK steps equal to NLTK's where its data is installed."""

import itertools
import json
import warnings

import pytest

from fixtures.amber import ASSETS, DATA_DIR, SMALL_SPACY, fixture_scorer, responses
from fixtures.english import requires_wordnet
from capeval.scoring.amber import COUNTERS, INITIAL_COUNTS, AmberData, NounExtractor, corpus_values, data_files

RELEASED = json.loads((ASSETS / "released_outputs_sm.json").read_text(encoding="utf-8"))
PRINTED = {"CHAIR": "amber_chair", "Cover": "amber_cover", "Hal": "amber_hal", "Cog": "amber_cog"}


def released_values(run):
    return {PRINTED[name]: value for name, value in run["printed"].items()}


def score_fixture(threshold=0.8):
    items = responses()
    return fixture_scorer(similarity_threshold=threshold).score([r["response"] for r in items], images=[r["id"] for r in items])


def test_the_goldens_cover_every_branch(small_spacy):
    assert RELEASED["model"] == SMALL_SPACY and len(RELEASED["per_response"]) == len(responses()) == 36
    counters = [run["counters"] for run in RELEASED["per_response"]]
    assert any(c["chair_num"] == 0.001 for c in counters)  # descriptions naming no AMBER object
    assert sum(c["non_hallu_score"] == 0 for c in counters) == 18  # and 18 with a hallucination
    thresholds = {key: tuple(run["printed"].values()) for key, run in RELEASED["corpus"].items()}
    assert len(set(thresholds.values())) == 3  # the threshold changes every released number


def test_every_description_has_the_released_counters(small_spacy):
    scores = score_fixture()
    for index, (statistics, run) in enumerate(zip(scores.sufficient_statistics, RELEASED["per_response"])):
        released = [run["counters"][name] - INITIAL_COUNTS[name] for name in COUNTERS]
        assert statistics == pytest.approx(released, abs=1e-9), f"description {index}"
        assert corpus_values(statistics, INITIAL_COUNTS) == released_values(run), f"description {index}"


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.9])
def test_the_corpus_values_are_the_released_ones(small_spacy, threshold):
    released = RELEASED["corpus"][str(threshold)]
    scores = score_fixture(threshold)
    assert scores.corpus == released_values(released)
    sums = [sum(column) for column in zip(*scores.sufficient_statistics)]
    assert [INITIAL_COUNTS[name] + value for name, value in zip(COUNTERS, sums)] == \
        pytest.approx([released["counters"][name] for name in COUNTERS], abs=1e-9)


def vocabulary_pairs():
    words = sorted(AmberData.load(data_files(DATA_DIR)).vocabulary)
    return list(itertools.product(words, words))


def assert_spacy_similarity(model):
    """The scorer's similarity is nlp(a).similarity(nlp(b)) of fresh documents, for every pair of fixture words."""
    from capeval.text.spans import load_spacy

    nlp = load_spacy(model)
    similarity = fixture_scorer(spacy_model=model).similarity
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        docs = {word: nlp(word) for word in {word for pair in vocabulary_pairs() for word in pair}}
        for first, second in vocabulary_pairs():
            assert similarity.similarity(first, second) == docs[first].similarity(docs[second]), (first, second)


def test_the_similarity_is_spacys_with_the_small_model(small_spacy):
    assert_spacy_similarity(small_spacy)


def test_the_similarity_is_spacys_with_en_core_web_lg():
    pytest.importorskip("en_core_web_lg", reason="en_core_web_lg (AMBER's model) is not installed: python -m spacy "
                                                 "download en_core_web_lg; it is not on the package index")
    assert_spacy_similarity("en_core_web_lg")


@requires_wordnet
def test_the_fixture_lemmas_are_wordnets():
    lemmatize = NounExtractor().lemmatizer()
    for item in responses():
        for word, tag, lemma in item["tagged"]:
            if tag.startswith("NN"):
                assert lemmatize(word) == lemma, word
    assert [lemmatize(w) for w in ("Dogs", "men", "leaves", "people")] == ["Dogs", "men", "leaf", "people"]


def nltk_tagger_data() -> bool:
    import nltk

    try:
        nltk.data.find("taggers/averaged_perceptron_tagger_eng/")
    except LookupError:
        return False
    return True


@pytest.mark.skipif(not nltk_tagger_data(), reason="NLTK's tagger weights are not installed "
                                                   "(python -m nltk.downloader averaged_perceptron_tagger_eng)")
def test_the_tagging_is_nltks_word_tokenize_and_pos_tag():
    import nltk

    texts = [item["response"] for item in responses()]
    assert NounExtractor().tagged(texts) == [nltk.pos_tag(nltk.word_tokenize(text)) for text in texts]


def test_without_the_taggers_weights_the_error_says_what_to_download(monkeypatch):
    import nltk.data

    from capeval import models
    from capeval.models import ModelUnavailableError

    monkeypatch.setattr(models, "_CACHE", {})  # nothing loaded yet
    find = nltk.data.find
    monkeypatch.setattr(nltk.data, "find", lambda name, *args, **kwargs: (_ for _ in ()).throw(LookupError(name))
                        if name.startswith("taggers/") else find(name, *args, **kwargs))
    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: pytest.fail("downloaded while scoring"))
    with pytest.raises(ModelUnavailableError, match="NLTK's POS tagger weights are not installed: run capeval download chair \\(or python -m "
                                                    "nltk.downloader averaged_perceptron_tagger_eng"):
        NounExtractor()(["A dog sleeps on a sofa."])


def test_with_word_vectors_the_similarity_is_spacys_whole_pipeline(small_spacy, tmp_path):
    """With vectors the scorer parses words with the tokenizer alone: the same similarities as whole-pipeline documents."""
    import numpy as np
    import spacy

    nlp = spacy.load(small_spacy)
    words = sorted({word for pair in vocabulary_pairs() for word in pair})
    rng = np.random.default_rng(0)
    for word in words[::2]:  # half the words have a vector, the others none (similarity 0)
        nlp.vocab.set_vector(word, rng.standard_normal(16).astype("float32"))
    nlp.to_disk(tmp_path / "with-vectors")
    similarity = fixture_scorer(spacy_model=str(tmp_path / "with-vectors")).similarity
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        docs = {word: nlp(word) for word in words}
        values = {(a, b): docs[a].similarity(docs[b]) for a, b in vocabulary_pairs()}
    assert {pair: similarity.similarity(*pair) for pair in values} == values
    assert similarity.nlp().vocab.vectors.size and len(set(values.values())) > 100
