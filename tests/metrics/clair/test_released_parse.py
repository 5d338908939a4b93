"""CLAIR's parse and prompt against what the released clair.py returns and sends (goldens made by
scripts/build_judge_goldens.py from DavidMChan/clair at the pinned commit)."""

import json

import pytest

from capeval.scoring.clair import RELEASED_COMMIT, clair_prompt, parse_response
from fixtures import ASSETS

GOLDENS = json.loads((ASSETS / "judges" / "clair_released.json").read_text())


def test_goldens_come_from_the_pinned_commit():
    assert GOLDENS["commit"] == RELEASED_COMMIT


@pytest.mark.parametrize("row", GOLDENS["answers"], ids=[row["answer"][:30] for row in GOLDENS["answers"]])
def test_parse_equals_the_released_code(row):
    parsed = parse_response(row["answer"])
    if "raises" in row or row["requests"] == 3:  # the released code raises, or asks again and gives up with 0
        assert parsed is None
        return
    assert row["requests"] == 1
    reason = row["reason"] if isinstance(row["reason"], str) else json.dumps(row["reason"])
    assert parsed == (row["score"], reason)


def test_the_issue_s_facts():
    assert parse_response('{"score": 0.8}')[0] == 0.008
    assert parse_response("0.8")[0] == 0.8
    assert parse_response("-20")[0] == 0.2
    assert parse_response('{"score": 150}')[0] == 1.5
    assert parse_response('{"score": null}') is None and parse_response('{"score": "x"}') is None


def test_a_non_finite_json_score_is_unparseable():
    assert parse_response('{"score": NaN}') is None and parse_response('{"score": Infinity}') is None


@pytest.mark.parametrize("case", GOLDENS["prompts"], ids=lambda case: str(len(case["candidates"])))
def test_prompt_equals_the_released_one(case):
    assert clair_prompt(case["candidates"], case["references"]) == case["prompt"]
    assert case["options"] == {"temperature": 0.0, "max_tokens": 1024}
