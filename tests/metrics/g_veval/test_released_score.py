"""G-VEval's arithmetic and requests against what the released scorer.py returns and sends (goldens made by
scripts/build_judge_goldens.py from ztangaj/gveval at the pinned commit)."""

import base64
import json

import pytest

from capeval.scoring.gveval import (RELEASED_COMMIT, RELEASED_DECODING, RELEASED_MODEL, gveval_messages,
                                    score_from_logprobs)
from fixtures import ASSETS

GOLDENS = json.loads((ASSETS / "judges" / "gveval_released.json").read_text())


def test_goldens_come_from_the_pinned_commit():
    assert GOLDENS["commit"] == RELEASED_COMMIT


@pytest.mark.parametrize("row", GOLDENS["contents"], ids=[row["case"] for row in GOLDENS["contents"]])
def test_score_equals_the_released_code(row):
    score = score_from_logprobs(row["content"])
    if row["score"] is None:  # the released code raised on every one of its tries
        assert score is None and row["requests"] == 3
    else:
        assert score == row["score"] and row["requests"] == 1


@pytest.mark.parametrize("case", GOLDENS["prompts"], ids=[f"{c['setting']}-{c['image']}" for c in GOLDENS["prompts"]])
def test_request_equals_the_released_one(case):
    request = case["request"]
    image = base64.b64decode(GOLDENS["image_base64"]) if case["image"] else None
    assert gveval_messages("A man is playing a guitar.", ["A person plays an instrument.", "A man strums a guitar."],
                           case["setting"], image=image) == request["messages"]
    assert {k: v for k, v in request.items() if k != "messages"} == {"model": RELEASED_MODEL, **RELEASED_DECODING}


def test_sdk_objects_score_like_parsed_json():
    from types import SimpleNamespace

    content = GOLDENS["contents"][0]["content"]
    objects = [SimpleNamespace(token=i["token"], top_logprobs=[SimpleNamespace(**t) for t in i["top_logprobs"]])
               for i in content]
    assert score_from_logprobs(objects) == score_from_logprobs(content)


def test_a_score_split_into_digit_tokens_is_found():
    from capeval.scoring.gveval import score_split

    assert score_split([{"token": "$"}, {"token": "8"}, {"token": "5"}]) == "85"
    assert score_split([{"token": "$"}, {"token": "85"}, {"token": "$"}]) is None
    assert score_split([{"token": "$"}, {"token": "8"}]) is None and score_split([{"token": "8"}, {"token": "5"}]) is None
    assert score_split([{"token": "$"}, {"token": "a"}, {"token": "5"}]) is None
    assert score_split([{"token": "$"}, {"token": "8"}, {"token": "b"}]) is None


def test_an_sdk_entry_without_top_logprobs_scores_none():
    from types import SimpleNamespace

    assert score_from_logprobs([SimpleNamespace(token="$"), SimpleNamespace(token="80")]) is None
