"""The FLEUR/EXPERT score smoothing against the released scripts (Yebin46/FLEUR ``fleur.py``, hjkim811/EXPERT
``expert.py``) run unchanged on synthetic answers and logits (``scripts/build_llava_judge_goldens.py``), to 1e-6;
where the released code cannot score an answer, :func:`smoothed_score` gives None."""

import json

import pytest
import torch

from capeval.scoring.fleur import fleur_answer_text, parsed_rating, smoothed_score

from fixtures import ASSETS

GOLDEN = json.loads((ASSETS / "llava_judges" / "goldens.json").read_text())
CASES = GOLDEN["smoothing"]
TOLERANCE = 1e-6


@pytest.mark.parametrize("name", CASES)
def test_fleur_smoothing_matches_the_released_fleur_py(name):
    case = CASES[name]
    value = smoothed_score(fleur_answer_text(case["decoded"]), case["generated_ids"],
                           torch.tensor(case["step_logits"]), GOLDEN["digit_ids"])
    if isinstance(case["fleur"], str):  # "error" (the released except branch) or "skipped" (outside [0, 1])
        assert value is None
    else:
        assert value == pytest.approx(case["fleur"], abs=TOLERANCE)


@pytest.mark.parametrize("name", CASES)
def test_expert_smoothing_matches_the_released_expert_py(name):
    case = CASES[name]
    value = smoothed_score(case["expert_decoded"].strip(), case["generated_ids"], torch.tensor(case["step_logits"]),
                           GOLDEN["digit_ids"], search_start=1)
    if case["expert"] == "raises":
        assert value is None
    else:
        assert value == pytest.approx(case["expert"], abs=TOLERANCE)


def test_the_goldens_cover_every_case_the_issue_names():
    printed = {fleur_answer_text(case["decoded"]) for case in CASES.values()}
    assert {"0.0", "0.05", "0.5", "0.55", "0.75", "1.0", "0.66"} <= printed
    assert {"error", "skipped"} <= {case["fleur"] for case in CASES.values() if isinstance(case["fleur"], str)}
    assert sum(case["expert"] == "raises" for case in CASES.values()) >= 4


def test_the_float32_value_is_the_one_the_released_second_turn_prints():
    # fleur_exp.py writes str(score.item()) + "</s>" into the conversation: the digits must be the same.
    first = GOLDEN["prompts"]["fleur_explanation"]["first_answer"]
    value = smoothed_score("0.75", first["generated_ids"], torch.tensor(first["step_logits"]), GOLDEN["digit_ids"])
    assert f"ASSISTANT: {value}</s></s>USER:" in GOLDEN["prompts"]["fleur_explanation"]["turns"][1]


def test_a_digit_absent_from_the_generated_ids_gives_none():
    logits = torch.zeros(3, 14)
    assert smoothed_score("0.7", [10, 13, 5], logits, range(10)) is None
    assert smoothed_score("0.75", [0, 10, 7, 13], torch.zeros(4, 14), range(10)) is None


def test_the_rating_keeps_only_digits_and_dots_and_strips_dots_at_the_ends():
    # The released float(re.sub(r"[^\d.]", "", text).strip(".")): a sentence's full stop is dropped, a leading dot too.
    assert [parsed_rating(text) for text in ("Score: 0.8.", "0.8..", ".75", "0.7 out of 1.0", "none")] == [0.8, 0.8, 75.0, None, None]


def test_half_precision_logits_sum_in_half_precision_as_released():
    # The released ``0. + probs[token] * rate * 0.1`` stays in the logits' dtype (float16 on a GPU): these digits are
    # the ones the second turn prints; a float32 sum gives 0.66478.
    logits = torch.zeros(4, 12, dtype=torch.float16)
    logits[2, :10] = torch.arange(10, dtype=torch.float16) / 3
    assert smoothed_score("0.7", [0, 10, 7, 11], logits, range(10)) == 0.6650390625
