"""The judges' shared layer against a real OpenAI-compatible server on 127.0.0.1 (tests/fixtures/judge_server.py:
a tiny GPT-2 served over HTTP): retries, errors, the key variable, the cache and the dry run."""

import json
import threading
import time
import types
import warnings

import pytest

import capeval
import capeval.judges.server
from capeval.cli import main
from capeval.judges import ChatServer, JudgeServerError, ResponseCache
from capeval.judges.cache import request_key
from capeval.scoring.clair import ClairScorer
from fixtures.judge_server import JudgeServer

PREDICTIONS = ["a dog runs", "a cat", "two men ride horses"]
REFERENCES = [["a dog running"], ["a cat sleeps", "a small cat"], ["men on horses"]]
BODY = {"model": "judge", "messages": [{"role": "user", "content": "a dog"}], "temperature": 0.0}


def clair(server, **options):
    return ClairScorer(base_url=server.url, **options)


def test_a_rerun_sends_no_request_and_gives_the_same_numbers(judge_server):
    first = clair(judge_server)
    scores = first.score(PREDICTIONS, REFERENCES)
    assert len(judge_server.requests) == 3 and first.provenance()["usage"]["requests_sent"] == 3
    again = clair(judge_server)
    assert again.score(PREDICTIONS, REFERENCES) == scores
    assert len(judge_server.requests) == 3  # counted on the server: nothing more arrived
    usage = again.provenance()["usage"]
    assert usage["requests_sent"] == 0 and usage["answers_from_cache"] == 3 and usage["prompt_tokens"] > 0


def test_an_answer_of_another_server_is_not_served_from_the_cache(judge_server, tiny_judge_path):
    """The same request to another server (another judge behind the same model name) is asked there, not read from
    the first server's answers."""
    scores = clair(judge_server).score(PREDICTIONS, REFERENCES)
    other = JudgeServer(tiny_judge_path).start()
    other.answer = lambda body: json.dumps({"score": 7, "reason": "another judge"})
    try:
        assert clair(other).score(PREDICTIONS, REFERENCES)["clair"] == [0.07] * 3 != scores["clair"]
        assert len(other.requests) == 3
        plan, = capeval.dry_run(PREDICTIONS, REFERENCES, metrics=[f"clair:base_url={other.url}"])
        assert (plan.requests, plan.cached) == (0, 3)
    finally:
        other.stop()
    assert clair(judge_server).score(PREDICTIONS, REFERENCES) == scores and len(judge_server.requests) == 3


def test_503_answers_are_tried_again(judge_server):
    judge_server.fail_next = 2
    answer = ChatServer(judge_server.url, backoff_s=0.01).complete(BODY)
    assert answer["choices"][0]["message"]["content"] and len(judge_server.requests) == 3


@pytest.fixture
def waits(monkeypatch):
    """The backoffs the client waits, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(capeval.judges.server, "time", types.SimpleNamespace(sleep=slept.append))  # this module's only
    return slept


def test_the_backoff_doubles_and_the_last_try_is_the_last(judge_server, waits):
    judge_server.fail_next = 10
    with pytest.raises(JudgeServerError, match=r"^the judge server http://127\.0\.0\.1:\d+/v1 kept failing \(HTTP 503: "
                                               r"overloaded, try again\) after 3 tries$"):
        ChatServer(judge_server.url, retries=2, backoff_s=0.5).complete(BODY)
    assert len(judge_server.requests) == 3 and waits == [0.5, 1.0]


@pytest.mark.parametrize("retry_after, wait", [("0.25", 0.25), ("7", 7.0), ("100", 30.0), ("1.2.3", 0.5), ("soon", 0.5)])
def test_retry_after_sets_the_wait_up_to_its_bound(judge_server, waits, retry_after, wait):
    judge_server.fail_next, judge_server.retry_after = 1, retry_after
    assert ChatServer(judge_server.url, backoff_s=0.5).complete(BODY)["choices"]
    assert waits == [wait]


def test_a_server_slower_than_the_timeout_is_one_line(judge_server):
    answer = judge_server.answer
    judge_server.answer = lambda body: threading.Event().wait(1.0) or answer(body)
    with pytest.raises(JudgeServerError, match=r"^cannot reach the judge server at http://127\.0\.0\.1:\d+/v1 \(timed out\) "
                                               r"after 1 tries$"):
        ChatServer(judge_server.url, timeout_s=0.2, retries=0).complete(BODY)


def test_a_refused_key_without_a_key_variable_says_so(judge_server):
    judge_server.key = "sk-test-secret-123"
    with pytest.raises(JudgeServerError, match=r"refused the key in \(no key variable\) \(HTTP 401: Incorrect API key "
                                               r"provided\): check the variable$"):
        ChatServer(judge_server.url).complete(BODY)


def test_a_restarted_server_is_reached_again(judge_server):
    port = judge_server.port
    judge_server.stop()
    restart = threading.Timer(0.5, judge_server.start, kwargs={"port": port})
    restart.start()
    started = time.monotonic()
    answer = ChatServer(f"http://127.0.0.1:{port}/v1", backoff_s=0.2, retries=5).complete(BODY)
    restart.join()
    assert answer["usage"]["completion_tokens"] > 0 and time.monotonic() - started >= 0.5
    assert len(judge_server.requests) == 1


def test_the_last_try_waits_its_backoff_too(judge_server):
    port = judge_server.port
    judge_server.stop()
    restart = threading.Timer(0.3, judge_server.start, kwargs={"port": port})
    restart.start()
    answer = ChatServer(f"http://127.0.0.1:{port}/v1", backoff_s=0.6, retries=1).complete(BODY)
    restart.join()
    assert answer["choices"] and len(judge_server.requests) == 1


def test_an_unreachable_server_is_one_line(judge_server):
    url = judge_server.url
    judge_server.stop()
    with pytest.raises(JudgeServerError, match=r"^cannot reach the judge server at http://127\.0\.0\.1:\d+/v1 \(.*\) after 2 tries$") as error:
        ChatServer(url, retries=1, backoff_s=0.01).complete(BODY)
    assert "Connection refused) after" in str(error.value) and "urlopen error" not in str(error.value)  # the reason alone


def test_a_refused_request_is_not_tried_again(judge_server):
    with pytest.raises(JudgeServerError, match=r"refused the request \(HTTP 404: no route /v1/wrong/chat/completions\)$"):
        ChatServer(judge_server.url.replace("/v1", "/v1/wrong")).complete(BODY)
    assert len(judge_server.requests) == 1


def test_the_key_comes_from_the_named_variable_and_is_kept_nowhere(judge_server, monkeypatch, tmp_path):
    judge_server.key = "sk-test-secret-123"
    monkeypatch.delenv("CAPEVAL_TEST_KEY", raising=False)
    with pytest.raises(JudgeServerError, match="^the judge server's key variable CAPEVAL_TEST_KEY is not set"):
        clair(judge_server, api_key_env="CAPEVAL_TEST_KEY").score(PREDICTIONS, REFERENCES)
    monkeypatch.setenv("CAPEVAL_TEST_KEY", "sk-wrong")
    with pytest.raises(JudgeServerError, match=r"refused the key in CAPEVAL_TEST_KEY \(HTTP 401: Incorrect API key provided\)"):
        clair(judge_server, api_key_env="CAPEVAL_TEST_KEY").score(PREDICTIONS, REFERENCES)
    monkeypatch.setenv("CAPEVAL_TEST_KEY", judge_server.key)
    scorer = clair(judge_server, api_key_env="CAPEVAL_TEST_KEY")
    scorer.score(PREDICTIONS, REFERENCES)
    kept = [json.dumps(scorer.provenance()), scorer.hashcode()] + [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    assert len(kept) == 5 and not any("sk-test-secret" in text for text in kept)


def test_a_key_in_place_of_a_variable_name_is_refused():
    with pytest.raises(ValueError, match="NAME of the environment variable"):
        ClairScorer(base_url="http://127.0.0.1:9/v1", api_key_env="sk-abc-123")


def test_nothing_is_sent_without_a_server():
    with pytest.raises(JudgeServerError, match="^clair needs a judge server: pass base_url="):
        ClairScorer().score(PREDICTIONS, REFERENCES)


def test_a_damaged_cache_entry_is_asked_again(judge_server, tmp_path):
    scores = clair(judge_server).score(PREDICTIONS, REFERENCES)
    entry = sorted((tmp_path / "cache" / "judges").rglob("*.json"))[0]
    entry.write_text(entry.read_text()[:20])
    with pytest.warns(UserWarning, match="is damaged"):
        assert clair(judge_server).score(PREDICTIONS, REFERENCES) == scores
    assert len(judge_server.requests) == 4
    json.loads(entry.read_text())  # replaced by a whole entry


def test_an_entry_under_another_key_is_not_used(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.put("ab" * 32, {"choices": []})
    cache.path("cd" * 32).parent.mkdir(parents=True)
    cache.path("cd" * 32).write_text(cache.path("ab" * 32).read_text())
    with pytest.warns(UserWarning, match="not the answer of its key"):
        assert cache.get("cd" * 32) is None
    assert cache.get("ab" * 32) == {"choices": []} and cache.get("ef" * 32) is None


def test_concurrent_writers_leave_whole_entries(judge_server, tmp_path):
    results = []
    threads = [threading.Thread(target=lambda: results.append(clair(judge_server).score(PREDICTIONS, REFERENCES)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(result == results[0] for result in results)
    entries = list((tmp_path / "cache" / "judges").rglob("*.json"))
    assert len(entries) == 3 and all(json.loads(p.read_text())["answer"]["choices"] for p in entries)
    assert not list((tmp_path / "cache" / "judges").rglob("*.partial"))


def test_dry_run_counts_before_sending_and_after(judge_server):
    spec = f"clair:base_url={judge_server.url}"
    plan, = capeval.dry_run(PREDICTIONS, REFERENCES, metrics=[spec])
    assert (plan.requests, plan.cached, plan.judge, plan.max_answer_tokens) == (3, 0, "gpt-3.5-turbo", 3 * 1024)
    assert plan.prompt_tokens == sum(len(ClairScorer().bodies([p], [r])[0]["messages"][0]["content"]) // 4 + 1
                                     for p, r in zip(PREDICTIONS, REFERENCES))
    assert judge_server.requests == []
    capeval.evaluate(PREDICTIONS[:2], REFERENCES[:2], metrics=[spec])
    plan, = capeval.dry_run(PREDICTIONS, REFERENCES, metrics=[spec])
    assert (plan.requests, plan.cached) == (1, 2) and len(judge_server.requests) == 2


def test_dry_run_on_the_command_line(judge_server, tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"candidate": p, "references": r}) for p, r in zip(PREDICTIONS, REFERENCES)))
    assert main(["score", "--input", str(rows), "--metric", f"clair:base_url={judge_server.url},model=a;b", "--metric",
                 "bleu", "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(" at ")[0] for line in lines] == ["clair: 3 request(s) to a", "clair: 3 request(s) to b"]
    assert judge_server.requests == []
    assert main(["score", "--input", str(rows), "--metric", "bleu", "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == "No judge metric among these: nothing would be sent."


def test_an_unreachable_server_on_the_command_line_is_one_line(judge_server, tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"candidate": "a dog", "references": ["a dog runs"]}))
    url = judge_server.url
    judge_server.stop()
    assert main(["score", "--input", str(rows), "--metric", f"clair:base_url={url},retries=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"capeval score: cannot reach the judge server at {url}") and err.count("\n") == 1


def test_concurrency_bounds_requests_in_flight(judge_server):
    in_flight, peak = [0], [0]
    lock = threading.Lock()
    answer = judge_server.answer

    def slow(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return answer(body)

    judge_server.answer = slow
    predictions = [f"caption {i}" for i in range(8)]
    clair(judge_server, concurrency=2).score(predictions, [["a reference"]] * 8)
    assert peak[0] == 2


def test_a_request_s_key_and_file_do_not_change_between_versions(tmp_path):
    # Kept answers are found again only while the key is the same: SHA-256 of the sorted JSON, non-ASCII kept as is.
    body = {"model": "judge", "messages": [{"role": "user", "content": "un café"}], "temperature": 0.0}
    key = request_key("openai-compatible", "judge", "r1", body, attempt=1, base_url="http://127.0.0.1:8000/v1")
    assert key == "28ac39acd89b6c65894ac32898200bc0baf67f6588aadc2991e1be5654710bd3"
    assert request_key("openai-compatible", "judge", "r1", dict(reversed(body.items())), attempt=1,
                       base_url="http://127.0.0.1:8000/v1") == key
    others = [request_key("openai-compatible", "judge", "r1", body, attempt=0, base_url="http://127.0.0.1:8000/v1"),
              request_key("openai-compatible", "judge", "r1", body, attempt=1, base_url="http://127.0.0.1:8001/v1"),
              request_key("openai-compatible", "judge", "r2", body, attempt=1, base_url="http://127.0.0.1:8000/v1"),
              request_key("openai-compatible", "other", "r1", body, attempt=1, base_url="http://127.0.0.1:8000/v1")]
    assert len({key, *others}) == 5
    assert request_key("openai-compatible", "judge", "r1", body) == request_key("openai-compatible", "judge", "r1", body,
                                                                                  attempt=0, base_url="")
    cache = ResponseCache(tmp_path)
    assert cache.path(key) == tmp_path / "28" / f"{key}.json"
    cache.put(key, {"choices": [{"message": {"content": "un café"}}]})
    assert json.loads(cache.path(key).read_text(encoding="utf-8")) == {"key": key, "answer": {"choices": [{"message": {"content": "un café"}}]}}
    assert "un café" in cache.path(key).read_text(encoding="utf-8")


def test_a_damaged_entry_is_named_with_its_error_where_it_was_read(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.path("ab" * 32).parent.mkdir(parents=True)
    cache.path("ab" * 32).write_text('{"key": "ab')
    cache.path("cd" * 32).parent.mkdir(parents=True)
    cache.path("cd" * 32).write_text('{"key": "other", "answer": {}}')
    with pytest.warns(UserWarning) as record:
        assert cache.get("ab" * 32) is None and cache.get("cd" * 32) is None
    assert [str(warning.message) for warning in record] == [
        f"judge cache entry {cache.path('ab' * 32)} is damaged (JSONDecodeError); asking the judge again",
        f"judge cache entry {cache.path('cd' * 32)} is not the answer of its key; asking the judge again"]
    assert [warning.filename for warning in record] == [__file__] * 2  # the line that read the cache
