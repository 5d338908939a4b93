"""CLAIR end to end against the tests' OpenAI-compatible server on 127.0.0.1 (a tiny GPT-2 over HTTP)."""

import json

import pytest

import capeval
from capeval.scoring.clair import ClairScorer, clair_prompt

PREDICTIONS = ["a dog runs", "a cat"]
REFERENCES = [["a dog running", "a brown dog"], ["a cat sleeps"]]


def score(server, **options):
    scorer = ClairScorer(base_url=server.url, **options)
    return scorer.score(PREDICTIONS, REFERENCES), scorer


def test_the_request_is_the_released_one(judge_server):
    score(judge_server)
    # The captions' requests run concurrently, so the server may see them in either order.
    assert {"model": "gpt-3.5-turbo", "temperature": 0.0, "max_tokens": 1024, "messages": [
        {"role": "user", "content": clair_prompt(["a dog runs"], ["a dog running", "a brown dog"])}]} in judge_server.requests


def test_scores_are_the_parsed_answers(judge_server):
    judge_server.answer = lambda body: '{"score": 85, "reason": "same dog"}' if "dog" in json.dumps(body) else "Score: 0.4"
    scores, _ = score(judge_server)
    assert scores["clair"] == [0.85, 0.4]
    assert scores.details["reason"] == ["same dog", "Unknown"] and scores.details["unparsed"] == [[], []]
    assert all(tokens > 0 for tokens in scores.details["prompt_tokens"] + scores.details["completion_tokens"])


def test_an_unparsed_answer_is_asked_three_times_then_counts_zero_and_is_named(judge_server):
    judge_server.answer = lambda body: "I cannot tell." if "cat" in json.dumps(body) else '{"score": 70}'
    with pytest.warns(UserWarning, match=r"did not parse after 3 tries; each such answer counts 0.*#1 'a cat' \(gpt-3.5-turbo\)"):
        scores, scorer = score(judge_server)
    assert scores["clair"] == [0.7, 0.0] and scores.details["unparsed"] == [[], ["gpt-3.5-turbo"]]
    assert len(judge_server.requests) == 4 == scorer.provenance()["usage"]["requests_sent"]  # the cat's three tries
    with pytest.warns(UserWarning, match="did not parse"):  # the rerun reads all four answers from the cache
        assert score(judge_server)[0]["clair"] == [0.7, 0.0]
    assert len(judge_server.requests) == 4


def test_clair_e_is_the_mean_over_the_judges(judge_server):
    judge_server.answer = lambda body: '{"score": %d}' % {"judge-a": 80, "judge-b": 40}[body["model"]]
    scores, scorer = score(judge_server, model=" judge-a ; judge-b")
    assert scores["clair"] == [pytest.approx(0.6, abs=1e-12)] * 2 and scorer.options()["model"] == "judge-a;judge-b"
    assert sorted(body["model"] for body in judge_server.requests) == ["judge-a", "judge-a", "judge-b", "judge-b"]


def test_evaluate_with_a_spec(judge_server):
    result = capeval.evaluate(PREDICTIONS, REFERENCES, metrics=[f"clair:base_url={judge_server.url}"])
    assert len(result.columns["clair"]) == 2 and all(0 <= value <= 1 for value in result.columns["clair"])


def test_bad_model_names_are_refused():
    with pytest.raises(ValueError, match="must name the judge model"):
        ClairScorer(model="a;;b")


#: Options and another value: each changes the scores (the test server's answer depends on the whole request) or,
#: for revision, what is asked and the hashcode.
OTHER_VALUES = [("model", "other-judge"), ("temperature", 0.7), ("seed", 3), ("max_tokens", 64)]


@pytest.mark.parametrize("option, value", OTHER_VALUES, ids=[name for name, _ in OTHER_VALUES])
def test_every_option_changes_the_scores(judge_server, option, value):
    base, base_scorer = score(judge_server)
    other, other_scorer = score(judge_server, **{option: value})
    assert other["clair"] != base["clair"] and other_scorer.hashcode() != base_scorer.hashcode()


def test_revision_asks_again_and_changes_the_hashcode(judge_server):
    _, base = score(judge_server)
    _, other = score(judge_server, revision="weights-2")
    assert len(judge_server.requests) == 4 and other.hashcode() != base.hashcode()


def test_transport_options_change_nothing_in_the_numbers(judge_server):
    base, _ = score(judge_server)
    assert score(judge_server, concurrency=1, timeout_s=5.0, retries=0)[0] == base
