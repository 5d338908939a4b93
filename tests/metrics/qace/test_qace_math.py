"""QACE's comparison and aggregation as pure functions (no model)."""

import pytest

from capeval.scoring.qace import (aggregate, clip01, keep_first_questions, normalize_predicted_answer, normalize_squad_answer,
                                  reduce_references, squad_f1)


@pytest.mark.parametrize("gold, predicted, expected", [
    ("two men", "two", 2 * 1 * 0.5 / 1.5),  # P = 1/1, R = 1/2
    ("ground", "field", 0.0),
    ("the horses", "horses", 1.0),  # "the" is blanked out
    ("", "", 1.0),
    ("a", "", 1.0),  # "a" normalises to nothing: both sides empty
    ("horse", "", 0.0),
    ("", "horse", 0.0),
])
def test_squad_f1_vectors(gold, predicted, expected):
    assert squad_f1(gold, predicted) == pytest.approx(expected)


def test_squad_f1_by_hand():
    # gold tokens [red, red, bike], predicted [red, bike, bike, road]: common = {red: 1, bike: 1} = 2
    # P = 2/4, R = 2/3, F1 = 2·(1/2)·(2/3)/(1/2 + 2/3) = 4/7
    assert squad_f1("Red red bike!", "a red bike, bike; road") == pytest.approx(4 / 7)
    assert squad_f1("men", "two men") == squad_f1("two men", "men")


def test_squad_normalisation():
    assert normalize_squad_answer("An apple, the pear & A fig.") == "apple pear fig"
    assert normalize_squad_answer("theatre another") == "theatre another"  # whole words only
    assert normalize_squad_answer("dog's") == "dogs"


def test_squad_normalisation_equals_the_squad_script_on_random_text():
    """The official SQuAD v1.1 evaluation script's normalize_answer, restated, on random text (punctuation, articles,
    upper case, spaces, non-ASCII)."""
    import random
    import re
    import string

    def squad_script(text):
        text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())

    rng = random.Random(0)
    pieces = ["a", "An", "THE", "the", "then", "theatre", " ", "  ", "\t", ",", "!", "'s", "-", "é", "İ", "\u00bf", "dog", "x"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        assert normalize_squad_answer(text) == squad_script(text), repr(text)


def test_aggregation_vector():
    values = aggregate([1, 0, 1], [0.9, 0.5, 1.0000002], [0.8, 0.4, 0.9])
    assert values["qace"] == pytest.approx(6.5 / 9)
    assert values["qace_f1"] == pytest.approx(2 / 3)
    assert values["qace_bertscore"] == pytest.approx(0.8)
    assert values["qace_answerability"] == pytest.approx(0.7)
    # one value per question in each list: QACE is also the mean of the three per-function means
    assert values["qace"] == pytest.approx((2 / 3 + 0.8 + 0.7) / 3)


def test_aggregation_without_answerability_and_without_questions():
    assert aggregate([1.0, 0.0], [0.5, 0.5], None) == pytest.approx({"qace": 0.5, "qace_f1": 0.5, "qace_bertscore": 0.5})
    assert aggregate([], [], []) == {"qace": 0.0, "qace_f1": 0.0, "qace_bertscore": 0.0, "qace_answerability": 0.0}
    with pytest.raises(ValueError, match="one value per question"):
        aggregate([1.0], [0.5, 0.5], None)


def test_clipping():
    assert clip01([-1e-7, 1.0000001, 0.25]) == [0.0, 1.0, 0.25]
    assert aggregate([1.0], [1.2], [-0.5])["qace"] == pytest.approx(2 / 3)


def test_reference_reduction():
    per_reference = [{"qace": 0.5, "qace_f1": 1.0}, {"qace": 0.5, "qace_f1": 0.0}, {"qace": 0.1, "qace_f1": 0.2}]
    assert reduce_references(per_reference, "max") == ({"qace": 0.5, "qace_f1": 1.0}, 0)  # first on ties
    mean, best = reduce_references(per_reference, "mean")
    assert best is None and mean == pytest.approx({"qace": 1.1 / 3, "qace_f1": 0.4})
    assert reduce_references(per_reference[:1], "concat") == (per_reference[0], None)


def test_duplicate_questions_keep_the_first_span():
    assert keep_first_questions(["Q1", "Q2", "Q1", "Q3", "Q2"], ["a", "b", "c", "d", "e"]) == [("Q1", "a"), ("Q2", "b"), ("Q3", "d")]
    assert keep_first_questions([], []) == []


def test_predicted_answers_are_normalised_like_spans():
    assert normalize_predicted_answer("The Horses") == "horses"
    assert normalize_predicted_answer("two men") == "two men"
    assert normalize_predicted_answer("on the") == ""
