"""CLAIR end to end against the tests' OpenAI-compatible server on 127.0.0.1 (a tiny GPT-2 over HTTP)."""

import json

import pytest

import capeval
from capeval.scoring.clair import ClairScorer, answer_text, clair_prompt

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


@pytest.mark.parametrize("model", ["a;;b", "", 3, None])
def test_bad_model_names_are_refused(model):
    with pytest.raises(ValueError, match="must name the judge model"):
        ClairScorer(model=model)


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


def candidate(body: dict) -> str:
    """The candidate caption of a CLAIR request (its one ``- caption`` line under "Candidate set:")."""
    return body["messages"][0]["content"].split("Candidate set:\n- ")[1].split("\n")[0]


def test_clair_e_gives_each_caption_its_own_answers(judge_server):
    # Three captions and two judges that disagree: each caption's score, reasons and tokens come from its two answers.
    predictions, references = ["a dog runs", "a cat", "a red bus"], [["a dog"], ["a cat sleeps"], ["a bus"]]
    ratings = {"judge-a": {"a dog runs": 90, "a cat": 10, "a red bus": 50},
               "judge-b": {"a dog runs": 70, "a cat": 30, "a red bus": 20}}
    judge_server.answer = lambda body: json.dumps({"score": ratings[body["model"]][candidate(body)],
                                                   "reason": f"{body['model']} on {candidate(body)}"})
    judge_server.usage = lambda body: {"prompt_tokens": 10 * predictions.index(candidate(body)) + int(body["model"] == "judge-b") + 1,
                                       "completion_tokens": len(candidate(body))}
    scores = ClairScorer(base_url=judge_server.url, model="judge-a;judge-b").score(predictions, references)
    assert scores["clair"] == pytest.approx([0.8, 0.2, 0.35], abs=1e-12)
    assert scores.details["reason"] == [f"judge-a on {caption}; judge-b on {caption}" for caption in predictions]
    assert scores.details["prompt_tokens"] == [3, 23, 43] and scores.details["completion_tokens"] == [20, 10, 18]
    assert scores.details["unparsed"] == [[], [], []]


def test_clair_e_names_each_judge_whose_answer_did_not_parse(judge_server):
    judge_server.answer = lambda body: ('{"score": 60, "reason": "fine"}' if (body["model"], candidate(body)) == ("judge-a", "a dog runs")
                                        else "I cannot tell.")
    with pytest.warns(UserWarning) as record:
        scores = ClairScorer(base_url=judge_server.url, model="judge-a;judge-b").score(PREDICTIONS, REFERENCES)
    assert str(record[0].message) == ("CLAIR: the judge's answers to 2 caption(s) did not parse after 3 tries; each such answer "
                                      "counts 0, as in the released code: #0 'a dog runs' (judge-b); #1 'a cat' (judge-a, judge-b)")
    assert record[0].filename == __file__  # the warning points at the line that called score
    assert scores["clair"] == [0.3, 0.0] and scores.details["reason"] == ["fine; ", "; "]
    assert scores.details["unparsed"] == [["judge-b"], ["judge-a", "judge-b"]]


def test_the_warning_names_the_first_ten_captions_cut_to_sixty_characters(judge_server):
    judge_server.answer = lambda body: "I cannot tell."
    predictions = ["a long caption " + "x" * 60] + [f"caption {number}" for number in range(1, 11)]
    with pytest.warns(UserWarning) as record:
        ClairScorer(base_url=judge_server.url).score(predictions, [["a dog"]] * 11)
    message = str(record[0].message)
    assert "to 11 caption(s)" in message
    assert message.endswith(": " + "; ".join(f"#{index} {predictions[index][:60]!r} (gpt-3.5-turbo)" for index in range(10)))
    assert "#0 'a long caption " + "x" * 45 + "' (" in message


def test_missing_or_null_token_counts_count_zero(judge_server):
    # Servers that send no usage, or null / zero counts in it: each counts 0 tokens.
    judge_server.usage = lambda body: None if "dog" in candidate(body) else {"prompt_tokens": 7, "completion_tokens": None}
    scores, _ = score(judge_server)
    assert scores.details["prompt_tokens"] == [0, 7] and scores.details["completion_tokens"] == [0, 0]
    judge_server.usage = lambda body: {"prompt_tokens": 0, "total_tokens": 5}
    scores, _ = score(judge_server, model="other-judge")
    assert scores.details["prompt_tokens"] == [0, 0] and scores.details["completion_tokens"] == [0, 0]


def test_answer_text_is_empty_without_content():
    assert answer_text({"choices": [{"message": {"role": "assistant", "content": "85"}}]}) == "85"
    assert answer_text({}) == answer_text({"choices": []}) == answer_text({"choices": [{"message": {"content": None}}]}) == ""
