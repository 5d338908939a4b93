"""CAPTURE's parts without models, against the released package's recorded outputs (to 1e-6) and by hand: reading and
cleaning scene-graph text, the parser's input truncation, element extraction and filtering, greedy matching, the
soft sums, the F-scores, WordNet's lemmas and synonyms."""

import numpy as np
import pytest

from capeval.scoring.capture import (EPS, Elements, capture_value, greedy_match, is_mentioned, keep_mentioned, merge_graphs,
                                     precision_recall_f1, soft_totals, synonymous, text_nouns)
from capeval.text.scene_graph import clean_graph_text, graph_from_text, graph_text_from_decoded, input_limits, space_out_symbols
from capeval.text.stopwords import stopwords

from fixtures.english import requires_wordnet


def as_package_graph(graph) -> dict:
    """capeval's graph in the JSON shape the golden run stored FACTUAL's graph objects in (attributes sorted)."""
    return {"entities": [{"head": e.head, "quantity": e.quantity, "attributes": sorted(e.attributes)} for e in graph.entities],
            "relations": [{"subject": s, "relation": r, "object": o} for s, r, o in graph.relations]}


@pytest.mark.parametrize("version", ["0.5", "0.7"])
def test_graphs_read_from_text_equal_factuals(golden, fixtures, version):
    recorded = golden[version]
    for sentence, graph in recorded["fixture_graphs"].items():
        assert as_package_graph(graph_from_text(fixtures["graphs"][sentence])) == graph, sentence
    for text, graphs in recorded["parser_graphs"].items():
        assert [as_package_graph(graph_from_text(g)) for g in recorded["parser_text"][text]] == graphs, text


@pytest.mark.parametrize("version", ["0.5", "0.7"])
def test_decoded_text_is_cleaned_as_factual_cleans_it(golden, version):
    for decoded, cleaned in golden[version]["cleanup"].items():
        assert graph_text_from_decoded(decoded) == cleaned, decoded
        assert as_package_graph(graph_from_text(cleaned)) == golden[version]["cleanup_graphs"][decoded], decoded


def test_graph_text_by_hand():
    assert space_out_symbols("a(b,c)") == "a ( b , c )"
    assert clean_graph_text("( b , is , x ) , ( a , on , c )") == "( a , on , c ) , ( b , is , x )"
    assert clean_graph_text("( b , is , x ) , ( a , on") == "( b , is , x )"  # the cut-off last fact goes
    graph = graph_from_text("( man , is , 3 ) , ( man , is , tall ) , ( man , is , tall ) , ( man , ride , horse ) , ( horse , on , man )")
    assert [(e.head, e.quantity, e.attributes) for e in graph.entities] == [("man", "3", ["tall"]), ("horse", "", [])]
    assert graph.relations == [(0, "ride", 1), (1, "on", 0)]
    assert [e.head for e in graph_from_text("( dog , run )").entities] == ["dog"]  # a lone short fact is an entity


def test_input_limits_per_batch_of_32():
    counts = [9] * 31 + [12] + [5, 7]
    assert input_limits(counts, "0.7") == [12] * 32 + [7, 7]
    assert input_limits(counts, "0.5") == [64] * 34
    assert input_limits([80, 3], "0.7") == [64, 64] and input_limits([], "0.7") == []


LEMMAS = {("dogs", "n"): "dog", ("pedestrians", "n"): "pedestrian", ("greener", "a"): "green"}


def lemma(word, pos):
    return LEMMAS.get((word, pos), word)


def test_merge_graphs_keeps_first_mentions_and_drops_of_attributes():
    graphs = [graph_from_text("( dogs , is , greener ) , ( dogs , is , full of joy ) , ( dogs , near , pedestrians )"),
              graph_from_text("( dog , is , green ) , ( dog , is , 2 ) , ( cat , is , green ) , ( dog , near , pedestrian )")]
    elements = merge_graphs(graphs, lemma)
    assert elements.objects == ("dog", "pedestrian", "cat")
    assert elements.attributes == (("dog", ("green",)), ("cat", ("green",)))
    assert elements.relations == (("dog", "near", "pedestrian"),)
    assert elements.attribute_words() == ["green", "green"]
    assert elements.as_dict()["relations"] == [["dog", "near", "pedestrian"]]
    # Only " of" (a phrase such as "full of joy") drops an attribute; words holding "of" stay.
    pillow = merge_graphs([graph_from_text("( pillow , is , soft ) , ( pillow , is , waterproof ) , ( roof , is , out of reach )")],
                          lemma)
    assert pillow.attributes == (("pillow", ("soft", "waterproof")),)


def test_keep_mentioned_checks_stop_words_for_objects_only():
    elements = Elements(("red", "dog", "hot dog", "cloud"), (("red", ("bright",)), ("cloud", ("white",))),
                        (("dog", "on", "red"), ("cloud", "over", "dog")))
    kept = keep_mentioned(elements, {"red", "dog", "hot"}, stopwords("capture"))
    assert kept.objects == ("dog", "hot dog")  # "red" is a stop word, "cloud" not a noun of the text
    assert kept.attributes == (("red", ("bright",)),)
    assert kept.relations == (("dog", "on", "red"),)
    assert "red" in stopwords("capture") and "background" in stopwords("capture") and len(stopwords("capture")) == 317
    assert not is_mentioned("hot  dog", {"hot", "dog"})  # split on single spaces, as the package does


def test_text_nouns_take_every_nn_tag():
    tagged = [("Dogs", "NNS"), ("Paris", "NNP"), ("Alps", "NNPS"), ("run", "VB"), ("fast", "RB"), ("dog", "NN")]
    assert text_nouns(tagged, lambda word, pos: word.lower()) == {"dogs", "paris", "alps", "dog"}


def test_greedy_match_order_and_exhaustion():
    same_first_letter = lambda a, b: a[0] == b[0]  # noqa: E731
    assert greedy_match(["bat", "ball"], ["bell", "bat"], same_first_letter) == greedy_match(["bat", "ball"], ["bell", "bat"], same_first_letter)
    match = greedy_match(["bat", "ball", "cow"], ["bell", "bat", "box"], same_first_letter)
    assert (match.count, match.candidates_left, match.references_left) == (2, (2,), (2,))  # exact bat first, then ball-bell
    match = greedy_match(["ball", "bat"], ["bat", "bell"], same_first_letter)
    assert (match.count, match.candidates_left, match.references_left) == (2, (), ())
    assert greedy_match([], ["a"]).references_left == (0,) and greedy_match(["a"], []).candidates_left == (0,)
    assert greedy_match(["b"], ["bell"], None).count == 0


def test_soft_totals_and_f_scores():
    sims = np.array([[0.2, 0.9, -0.1], [0.4, 0.3, 0.8]], dtype=np.float32)
    candidate, reference = soft_totals(sims)
    assert candidate == pytest.approx(0.9 + 0.8) and reference == pytest.approx(0.4 + 0.9 + 0.8)
    precision, recall, f1 = precision_recall_f1(1 + candidate, 1 + reference, 3, 4)
    assert precision == pytest.approx(2.7 / (3 + EPS), abs=1e-6) and recall == pytest.approx(3.1 / (4 + EPS), abs=1e-6)
    assert f1 == pytest.approx(2 * precision * recall / (precision + recall + EPS))
    assert capture_value([0.2, 0.4, 0.8], 0.7, 0.3, 0.5) == pytest.approx((0.14 + 0.12 + 0.4) / 1.5)
    assert precision_recall_f1(1, 1, 1, 1)[:2] == (1 / (1 + EPS), 1 / (1 + EPS))  # ε is added to the counts


def test_synonym_test_by_hand():
    names = {"clock_tower": frozenset({"clock_tower"}), "tower": frozenset({"tower", "column"}), "pillar": frozenset({"column"})}
    lookup = lambda word: names.get(word, frozenset())  # noqa: E731
    assert synonymous("clock tower", "tower", lookup)  # contains
    assert synonymous("tower", "pillar", lookup) and not synonymous("clock tower", "pillar", lookup)
    assert synonymous("", "anything", lookup)  # the empty string is in every string


@requires_wordnet
@pytest.mark.parametrize("version", ["0.5", "0.7"])
def test_synonyms_and_lemmas_equal_the_packages(golden, version):
    from capeval.text.wordnet import wordnet

    lemma_names, lemmatize = wordnet().lemma_names, wordnet().lemmatize
    for pair, score in golden[version]["synonym_scores"].items():
        first, second = pair.split("|")
        assert synonymous(first, second, lemma_names) == (score > 0), pair
    for text, nouns in golden[version]["nouns"].items():
        assert sorted(text_nouns([tuple(t) for t in golden[version]["tags"][text]], lemmatize)) == nouns, text
    assert lemmatize("women", "n") == "woman" and lemmatize("larger", "a") == "large" and lemmatize("qwzx", "n") == "qwzx"
    assert {"auto", "automobile", "car"} <= lemma_names("car")
