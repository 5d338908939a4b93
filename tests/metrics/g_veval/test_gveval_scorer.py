"""G-VEval end to end against the tests' OpenAI-compatible server on 127.0.0.1: the answers' log-probabilities are a
tiny GPT-2's, teacher-forced."""

import json
import math

import pytest

import capeval
from capeval.judges import JudgeServerError
from capeval.samples import sample_image
from capeval.scoring.gveval import GvevalScorer, score_from_logprobs

PREDICTIONS = ["a dog runs", "a cat"]
REFERENCES = [["a dog running", "a brown dog"], ["a cat sleeps"]]


def score(server, images=None, **options):
    scorer = GvevalScorer(base_url=server.url, **options)
    return scorer.score(PREDICTIONS, REFERENCES, images=images), scorer


def test_the_score_is_the_released_arithmetic_on_the_server_s_log_probabilities(judge_server):
    scores, _ = score(judge_server)
    by_caption = {json.dumps(body["messages"]): answer for body, answer in judge_server.exchanges}
    assert len(by_caption) == 2  # one request per caption
    expected = [score_from_logprobs(by_caption[json.dumps(body["messages"])]["choices"][0]["logprobs"]["content"])
                for body in GvevalScorer(base_url=judge_server.url).bodies(PREDICTIONS, REFERENCES)]
    assert scores["g_veval"] == expected and all(0 <= value <= 100 for value in expected)
    assert judge_server.requests[0]["top_logprobs"] == 5 and judge_server.requests[0]["messages"][0]["role"] == "system"


def test_images_go_into_the_request(judge_server):
    image = str(sample_image())
    scores, _ = score(judge_server, images=[image, image], setting="combined", resolution="high")
    part = judge_server.requests[0]["messages"][0]["content"][1]["image_url"]
    assert part["detail"] == "high" and part["url"].startswith("data:image/jpeg;base64,/9j/")
    assert len(scores["g_veval"]) == 2


def test_ref_free_needs_images():
    with pytest.raises(ValueError, match="setting .ref-free. shows the judge the image: pass images="):
        capeval.evaluate(PREDICTIONS, None, metrics=["g_veval:base_url=http://127.0.0.1:9/v1,setting=ref-free"])


def test_a_backend_without_log_probabilities_is_refused_in_one_line(judge_server):
    judge_server.logprobs = False
    with pytest.raises(JudgeServerError, match=r"^the judge gpt-4o-2024-05-13 at http://127.0.0.1:\d+/v1 returned no log-probabilities: [^\n]*$"):
        score(judge_server)


def test_a_score_written_as_several_tokens_is_refused(judge_server):
    judge_server.answer = lambda body: "The final score is $ 8 5 $."
    with pytest.raises(ValueError, match="writes the score 85 as several tokens"):
        score(judge_server)


def test_an_unreadable_answer_is_asked_three_times_then_nan_and_named(judge_server):
    good = judge_server.answer
    judge_server.answer = lambda body: "no score here" if "a cat" in json.dumps(body) else good(body)
    with pytest.warns(UserWarning, match=r"no score could be read .* 1 caption\(s\) after 3 tries.*#1 'a cat'"):
        scores, _ = score(judge_server)
    assert math.isnan(scores["g_veval"][1]) and scores.corpus["g_veval"] == scores["g_veval"][0]
    assert len(judge_server.requests) == 4


def test_no_readable_answer_at_all_is_an_error(judge_server):
    judge_server.answer = lambda body: "no score here"
    with pytest.raises(ValueError, match="could not read a score from any"):
        score(judge_server)


OTHER_VALUES = [("model", "other-judge"), ("temperature", 0.2), ("seed", 3), ("max_tokens", 64), ("setting", "combined"),
                ("resolution", "high")]


@pytest.mark.parametrize("option, value", OTHER_VALUES, ids=[name for name, _ in OTHER_VALUES])
def test_every_option_changes_the_scores(judge_server, option, value):
    images = [str(sample_image())] * 2
    base, base_scorer = score(judge_server, images=images, setting="ref-free")
    other, other_scorer = score(judge_server, images=images, **{"setting": "ref-free", option: value})
    assert other["g_veval"] != base["g_veval"] and other_scorer.hashcode() != base_scorer.hashcode()


def test_revision_asks_again_and_changes_the_hashcode(judge_server):
    _, base = score(judge_server)
    _, other = score(judge_server, revision="weights-2")
    assert len(judge_server.requests) == 4 and other.hashcode() != base.hashcode()
