"""What every server-backed judge (scoring/judge.py) makes of the server options, shown on CLAIR (on G-VEval for a dry
run with images): the client it builds, the options and provenance that name a run, the dry run and the token counts
of a call."""

import json

import pytest

from capeval.judges import JudgeServerError
from capeval.scoring.clair import ClairScorer

URL = "http://127.0.0.1:9/v1"


def test_the_client_carries_the_declared_defaults_and_the_given_settings():
    client = ClairScorer(base_url=URL).server()
    assert (client.base_url, client.api_key_env, client.timeout_s, client.retries, client.concurrency) == (URL, None, 120.0, 5, 8)
    client = ClairScorer(base_url=URL, api_key_env="JUDGE_KEY", timeout_s=3.5, retries=1, concurrency=2).server()
    assert (client.api_key_env, client.timeout_s, client.retries, client.concurrency) == ("JUDGE_KEY", 3.5, 1, 2)


def test_without_a_server_nothing_is_sent_and_the_error_says_how_to_give_one():
    with pytest.raises(JudgeServerError, match=r"^clair needs a judge server: pass base_url=\.\.\. \(an OpenAI-compatible "
                                               r"endpoint, e\.g\. a local vLLM's http://127\.0\.0\.1:8000/v1\); nothing is "
                                               r"sent anywhere without one$"):
        ClairScorer().server()


def test_the_options_name_the_judge_and_its_decoding():
    assert ClairScorer().options() == {"backend": "openai-compatible", "model": "gpt-3.5-turbo", "revision": "",
                                       "temperature": 0.0, "max_tokens": 1024}
    assert ClairScorer(revision="r2", seed=7, max_tokens=None).options() == {
        "backend": "openai-compatible", "model": "gpt-3.5-turbo", "revision": "r2", "temperature": 0.0, "seed": 7}


def test_the_provenance_names_the_server_and_counts_nothing_before_a_call():
    provenance = ClairScorer(base_url=URL).provenance()
    assert (provenance["base_url"], provenance["usage"]) == (URL, {})


def test_the_dry_run_without_a_server_says_nothing_can_be_sent(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    plan, = ClairScorer().plan(["a dog"], [["a dog runs"]])
    assert (plan.base_url, plan.requests, plan.cached, plan.tries) == ("(no base_url: nothing can be sent)", 1, 0, 3)
    assert plan.max_answer_tokens == 1024 and ClairScorer(max_tokens=None).plan(["a dog"], [["a dog runs"]])[0].max_answer_tokens is None


def test_a_call_counts_its_requests_its_cached_answers_and_every_answers_tokens(judge_server):
    ClairScorer(base_url=judge_server.url).score(["a dog runs", "a cat"], [["a dog running"], ["a cat sleeps"]])
    scorer = ClairScorer(base_url=judge_server.url)
    scorer.score(["a dog runs", "a cat", "two men"], [["a dog running"], ["a cat sleeps"], ["men on horses"]])
    answers = [answer["usage"] for _, answer in judge_server.exchanges]
    assert len(answers) == 3 and scorer.provenance()["usage"] == {
        "requests_sent": 1, "answers_from_cache": 2, "prompt_tokens": sum(a["prompt_tokens"] for a in answers),
        "completion_tokens": sum(a["completion_tokens"] for a in answers)}


def test_a_calls_counts_add_up_over_its_rounds_and_a_server_without_counts_adds_no_tokens(judge_server):
    """A caption answered unreadably asks again: the second round's request and tokens add to the first's."""
    asked: list[str] = []

    def answer(body):
        asked.append(json.dumps(body))
        return "I cannot tell." if "cat" in asked[-1] and sum("cat" in a for a in asked) == 1 else '{"score": 70}'

    judge_server.answer = answer
    scorer = ClairScorer(base_url=judge_server.url)
    scorer.score(["a dog runs", "a cat"], [["a dog running"], ["a cat sleeps"]])
    usages = [reply["usage"] for _, reply in judge_server.exchanges]
    assert len(usages) == 3 and scorer.provenance()["usage"] == {
        "requests_sent": 3, "answers_from_cache": 0, "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
        "completion_tokens": sum(u["completion_tokens"] for u in usages)}
    judge_server.usage = lambda body: None
    scorer = ClairScorer(base_url=judge_server.url, seed=3)  # another request: nothing from the cache
    scorer.score(["two men"], [["men on horses"]])
    assert scorer.provenance()["usage"] == {"requests_sent": 1, "answers_from_cache": 0, "prompt_tokens": 0,
                                            "completion_tokens": 0}


def test_the_dry_run_shows_the_judge_the_images_it_would_send(tmp_path, monkeypatch):
    from PIL import Image

    from capeval.judges.plan import IMAGE_TOKENS
    from capeval.scoring.gveval import GvevalScorer

    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    image = Image.new("RGB", (8, 8), (120, 30, 200))
    with_image, = GvevalScorer(setting="ref-free").plan(["a dog"], images=[image])
    assert with_image.requests == 1 and with_image.prompt_tokens > IMAGE_TOKENS
    with pytest.raises(ValueError, match="pass images="):
        GvevalScorer(setting="ref-free").plan(["a dog"])
