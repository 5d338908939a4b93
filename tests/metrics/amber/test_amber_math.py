"""AMBER's pure steps, by hand: reading its files, image ids, noun filtering, the matching of each branch of
inference.py, and the corpus values with metrics.txt's initial counters."""

import math

import pytest

from capeval.scoring.amber import (COUNTERS, INITIAL_COUNTS, AmberCounts, AmberData, AmberDataError, ObjectList,
                                   SpacySimilarity, amber_id, caption_values, corpus_values, first_similar_by, match_objects,
                                   nouns_of, read_initial_counts, read_safe_words, vocabulary_objects)

ASSOCIATION = {"dog": ["puppy"], "cat": ["kitten"], "sofa": ["couch", "cushion"], "forest": ["tree", "bush"],
               "tree": ["bush", "leaf"], "chair": ["seat"], "table": ["desk"], "person": ["man", "people"],
               "man": ["person"], "lamp": ["light"], "bird": [], "horse": []}


def data(truth, hallu, safe=("light",)):
    return AmberData([{"id": 1, "type": "generative", "truth": list(truth), "hallu": list(hallu)},
                      {"id": 2, "type": "discriminative-hallucination", "truth": "no"}], ASSOCIATION, safe, INITIAL_COUNTS)


def similar_pairs(*pairs):
    """A similarity that holds for the given (candidate, word) pairs only, and records every question."""
    asked = []

    def similar(first, second):
        asked.append((first, second))
        return (first, second) in pairs
    similar.asked = asked
    return similar


def match(objects, truth, hallu, similar=None, safe=("light",)):
    amber = data(truth, hallu, safe)
    return match_objects(objects, amber.entry(1), amber, first_similar_by(similar or similar_pairs()))


def test_safe_words_are_the_lines_without_their_newline():
    assert read_safe_words("") == []
    assert read_safe_words("a\nb") == read_safe_words("a\nb\n") == ["a", "b"]
    assert read_safe_words("a\n\n") == ["a", ""]
    assert read_safe_words("a \nb\n") == ["a ", "b"]


def test_initial_counts_read_name_value_lines_and_ignore_the_rest():
    text = "# a comment\n" + "\n".join(f"{name}={i}" for i, name in enumerate(COUNTERS)) + "\n chair_num = 0.5\nx=1=2\n"
    counts = read_initial_counts(text)
    assert list(counts) == list(COUNTERS) and counts["chair_num"] == 0.5 and counts["non_hallu_num"] == 7
    with pytest.raises(AmberDataError, match=r"metrics.txt has no initial value for \['chair_num'\]"):
        read_initial_counts("\n".join(f"{name}=1" for name in COUNTERS[:1] + COUNTERS[2:]))
    with pytest.raises(AmberDataError, match="line 2: 'chair_num=open' is not name=number"):
        read_initial_counts("chair_score=0\nchair_num=open\n")
    with pytest.raises(AmberDataError, match="is not name=number"):
        read_initial_counts("chair_num=True")


@pytest.mark.parametrize("image, expected", [(12, 12), ("12", 12), ("AMBER_12", 12), ("AMBER_12.jpg", 12), ("AMBER_7.png", 7),
                                             ("/data/image/AMBER_1004.jpg", 1004), ("images/AMBER_3.jpg", 3)])
def test_an_image_is_named_by_id_file_name_or_path(image, expected):
    from pathlib import Path

    assert amber_id(image) == expected
    if isinstance(image, str) and "/" in image:
        assert amber_id(Path(image)) == expected


def test_a_pil_image_opened_from_an_amber_file_gives_its_id():
    class Opened:
        filename = "/tmp/gradio/abc/AMBER_5.jpg"

    assert amber_id(Opened()) == 5


@pytest.mark.parametrize("image", [True, 3.0, None, "", "dog.jpg", "AMBER_x.jpg", "AMBER_12.jpg.txt", "XAMBER_1", [1]])
def test_anything_else_is_refused_naming_the_entry(image):
    with pytest.raises(ValueError, match=r"images\[4\] = .*AMBER names an image by its id"):
        amber_id(image, 4)


def test_nouns_are_the_lemmas_of_tokens_tagged_nn_star():
    tagged = [("Dogs", "NNP"), ("sofas", "NNS"), ("Alps", "NNPS"), ("chair", "NN"), ("run", "VB"), ("red", "JJ"), ("n't", "RB")]
    assert nouns_of(tagged, str.lower) == ["dogs", "sofas", "alps", "chair"]
    assert vocabulary_objects(["dog", "Dog", "dog", "car"], frozenset({"dog"})) == ["dog", "dog"]


def test_the_vocabulary_is_every_key_and_associated_word():
    amber = data(["dog"], ["cat"])
    assert amber.vocabulary == set(ASSOCIATION) | {"puppy", "kitten", "couch", "cushion", "bush", "leaf", "seat", "desk",
                                                   "people", "light"}


def test_object_lists_put_associated_words_first_then_the_objects():
    objects = ObjectList(["forest", "tree", "chair"], ASSOCIATION)
    assert objects.words == ["tree", "bush", "bush", "leaf", "seat", "forest", "tree", "chair"]
    assert objects.owners == [0, 0, 1, 1, 2, 0, 1, 2]
    assert objects.first == {"tree": 0, "bush": 1, "leaf": 3, "seat": 4, "forest": 5, "chair": 7}


def test_exact_and_associated_truth_words_cover_their_objects_without_similarity():
    similar = similar_pairs()
    counts = match(["dog", "couch", "puppy"], ["dog", "sofa", "lamp"], ["cat"], similar)
    assert counts == AmberCounts(("dog", "couch", "puppy"), (), (True, True, False), (False,))
    assert similar.asked == []


def test_a_truth_object_associated_with_an_earlier_one_covers_the_earlier_one():
    # "tree" is first found among forest's associated words: forest is covered, tree is not.
    assert match(["tree"], ["forest", "tree"], ["bird"]).covered == (True, False)
    assert match(["leaf"], ["forest", "tree"], ["bird"]).covered == (False, True)


def test_a_repeated_truth_object_is_covered_once():
    counts = match(["chair", "seat"], ["chair", "chair"], ["bird"])
    assert counts.covered == (True, False) and counts.statistics()[2:4] == [1, 2]


def test_a_safe_word_is_an_object_but_never_a_hallucination():
    similar = similar_pairs()
    counts = match(["light", "light"], ["dog"], ["lamp"], similar)
    assert counts.objects == ("light", "light") and counts.hallucinated == () and counts.named == (False,)
    assert similar.asked == [] and counts.statistics() == [0, 2, 0, 1, 0, 1, 1, 1]


def test_a_hallucination_word_is_a_hallucination_and_marks_its_object():
    similar = similar_pairs()
    counts = match(["desk", "cat"], ["dog"], ["cat", "table"], similar)
    assert counts.hallucinated == ("desk", "cat") and counts.named == (True, True)
    # Each still runs the similarity search: over the hallucination list, then the truth list.
    hallucination_list = ["kitten", "desk", "cat", "table"]
    assert similar.asked == [(word, other) for word in ("desk", "cat") for other in [*hallucination_list, "puppy", "dog"]]


def test_the_hallucination_similarity_search_marks_the_first_similar_word_too():
    # bird is named; horse, first in the list and similar to bird, is marked as well.
    counts = match(["bird"], ["dog"], ["horse", "bird"], similar_pairs(("bird", "horse"), ("bird", "bird")))
    assert counts.named == (True, True) and counts.hallucinated == ("bird",)
    # Without similar words, only the word equal to it.
    assert match(["bird"], ["dog"], ["horse", "bird"]).named == (False, True)


def test_a_hallucination_word_similar_to_a_truth_word_is_not_a_hallucination():
    counts = match(["cat"], ["dog"], ["cat"], similar_pairs(("cat", "dog")))
    assert counts.hallucinated == () and counts.covered == (True,) and counts.named == (True,)


def test_a_word_in_neither_list_is_a_hallucination_unless_similar_to_a_truth_word():
    assert match(["horse"], ["dog"], ["cat"]).hallucinated == ("horse",)
    assert match(["horse"], ["dog"], ["cat"]).named == (False,)
    # The first similar word of the truth list, associated words first, marks its object.
    counts = match(["horse"], ["dog", "sofa"], ["cat"], similar_pairs(("horse", "couch"), ("horse", "dog")))
    assert counts.hallucinated == () and counts.covered == (False, True)
    counts = match(["horse"], ["dog", "sofa"], ["cat"], similar_pairs(("horse", "kitten")))
    assert counts.named == (True,) and counts.hallucinated == ("horse",)


def test_the_similarity_threshold_is_strict():
    similarity = SpacySimilarity("unused", threshold=0.8)
    similarity._similarities.update({("a", "b"): 0.8, ("a", "c"): 0.8000001, ("a", "d"): -1.0})
    assert [similarity("a", word) for word in "bcd"] == [False, True, False]


def test_statistics_are_inference_py_increments():
    counts = AmberCounts(("dog", "cat", "cat"), ("cat", "cat"), (True, False, True), (True, False))
    assert counts.statistics() == [2, 3, 2, 3, 1, 2, 0, 1]
    assert caption_values(counts) == pytest.approx({"amber_chair": 200 / 3, "amber_cover": 200 / 3, "amber_hal": 100.0,
                                                    "amber_cog": 50.0})
    assert caption_values(AmberCounts((), (), (), ())) == {"amber_chair": 0.0, "amber_cover": 0.0, "amber_hal": 0.0,
                                                           "amber_cog": 0.0}


def test_corpus_values_are_ratios_of_sums_from_the_initial_counters():
    # 3 of 8 objects hallucinated, 5 of 6 truth objects covered, 1 of 4 hallucination objects named, 2 of 3 clean.
    sums = [3, 8, 5, 6, 1, 4, 2, 3]
    exact = corpus_values(sums, INITIAL_COUNTS, rounded=False)
    assert exact == {"amber_chair": 3 / 8.001 * 100, "amber_cover": 5 / 6.001 * 100, "amber_hal": 100 - 2 / 3.001 * 100,
                     "amber_cog": 1 / 4.001 * 100}
    assert corpus_values(sums, INITIAL_COUNTS) == {"amber_chair": 37.5, "amber_cover": 83.3, "amber_hal": 33.4, "amber_cog": 25.0}
    # One clean description: Hal is 0.1, not 0, as inference.py prints it.
    assert corpus_values([0, 2, 1, 1, 0, 1, 1, 1], INITIAL_COUNTS) == {"amber_chair": 0.0, "amber_cover": 99.9,
                                                                       "amber_hal": 0.1, "amber_cog": 0.0}
    other = {**INITIAL_COUNTS, "chair_score": 1, "chair_num": 2}
    assert corpus_values(sums, other, rounded=False)["amber_chair"] == 40.0
    assert math.isclose(corpus_values([0] * 8, INITIAL_COUNTS)["amber_hal"], 100.0)


def test_entries_are_read_by_position_and_checked():
    amber = data(["dog"], ["cat"])
    assert amber.entry(1).truth == ("dog",) and amber.generative_ids() == [1]
    with pytest.raises(KeyError, match="AMBER id 2 is a discriminative-hallucination question, not a generative one"):
        amber.entry(2)
    for missing in (0, 3, -1):
        with pytest.raises(KeyError, match=rf"AMBER id {missing} is not in annotations.json \(ids 1 to 2\)"):
            amber.entry(missing)
    shuffled = AmberData([{"id": 2, "type": "generative", "truth": [], "hallu": []}], ASSOCIATION, [], INITIAL_COUNTS)
    with pytest.raises(AmberDataError, match="entry 0 should be id 1, found 2"):
        shuffled.entry(1)
    unknown = AmberData([{"id": 1, "type": "generative", "truth": ["unicorn"], "hallu": []}], ASSOCIATION, [], INITIAL_COUNTS)
    with pytest.raises(AmberDataError, match=r"id 1's truth objects \['unicorn'\] are not keys of relation.json"):
        unknown.entry(1)
    no_list = AmberData([{"id": 1, "type": "generative", "truth": ["dog"], "hallu": "cat"}], ASSOCIATION, [], INITIAL_COUNTS)
    with pytest.raises(AmberDataError, match="id 1 has no list of words 'hallu'"):
        no_list.entry(1)
