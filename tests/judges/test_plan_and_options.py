"""The judges' pure helpers, without a server: the dry run's token estimate and line, the server options' checks, the
request headers and the server's error text."""

import dataclasses

import pytest

from capeval.judges import ChatServer, JudgeServerError
from capeval.judges.options import url_option, variable_option
from capeval.judges.plan import RequestPlan, estimate_tokens
from capeval.judges.server import _error_text

PLAN = RequestPlan("clair", "judge", "http://127.0.0.1:8000/v1", requests=1200, cached=3, prompt_tokens=45678,
                   max_answer_tokens=None, tries=3)


def test_token_estimate_counts_every_message_text_and_image():
    messages = [{"role": "system", "content": "12345"},  # 2 tokens
                {"role": "user", "content": [{"type": "text", "text": "abcdefgh"}, {"type": "image_url", "image_url": {}},
                                             {"type": "text", "text": "x"}]}]  # 2 + 85 + 1
    assert estimate_tokens(messages) == 90


def test_the_dry_run_line_names_the_answer_tokens_only_where_they_are_bounded():
    assert PLAN.line() == ("clair: 1,200 request(s) to judge at http://127.0.0.1:8000/v1 (~45,678 prompt tokens); 3 answered "
                           "from the cache; an answer that does not parse is asked again, up to 3 tries")
    bounded = dataclasses.replace(PLAN, max_answer_tokens=3072)
    assert "(~45,678 prompt tokens, at most 3,072 answer tokens);" in bounded.line()
    assert bounded.as_dict() == {"metric": "clair", "judge": "judge", "base_url": "http://127.0.0.1:8000/v1", "requests": 1200,
                              "cached": 3, "prompt_tokens": 45678, "max_answer_tokens": 3072, "tries": 3}


@pytest.mark.parametrize("url, kept", [("http://h", "http://h"), ("https://api.example.org/v1/", "https://api.example.org/v1"),
                                       ("http://127.0.0.1:8000/X/", "http://127.0.0.1:8000/X")])
def test_a_url_is_kept_without_its_trailing_slash(url, kept):
    assert url_option("base_url", url) == kept


@pytest.mark.parametrize("url", ["http://", "ftp://host/v1", "127.0.0.1:8000", 8000, None])
def test_what_is_not_an_http_url_is_refused_in_one_line(url):
    with pytest.raises(ValueError, match=r"^base_url must be an http:// or https:// URL of an OpenAI-compatible server "
                                         rf"\(e\.g\. http://127\.0\.0\.1:8000/v1\), got {url!r}$"):
        url_option("base_url", url)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "K", "K1", "_KEY"])
def test_a_variable_name_is_kept(name):
    assert variable_option("api_key_env", name) == name


@pytest.mark.parametrize("value", ["1KEY", "sk-abc-123", "MY KEY", "", 3])
def test_what_is_not_a_variable_name_is_refused(value):
    with pytest.raises(ValueError, match=r"^api_key_env is the NAME of the environment variable holding the key \(e\.g\. "
                                         r"OPENAI_API_KEY\), never the key itself; got a value that is not a variable name$"):
        variable_option("api_key_env", value)


def test_the_headers_carry_json_and_the_key_of_the_named_variable(monkeypatch):
    assert ChatServer("http://127.0.0.1:9/v1").headers() == {"Content-Type": "application/json"}
    monkeypatch.setenv("CAPEVAL_TEST_KEY", " sk-1 ")
    assert ChatServer("http://127.0.0.1:9/v1", api_key_env="CAPEVAL_TEST_KEY").headers() == {
        "Content-Type": "application/json", "Authorization": "Bearer sk-1"}
    monkeypatch.setenv("CAPEVAL_TEST_KEY", " ")
    with pytest.raises(JudgeServerError, match=r"^the judge server's key variable CAPEVAL_TEST_KEY is not set: export it "
                                               r"\(the key itself is never passed as an option\)$"):
        ChatServer("http://127.0.0.1:9/v1", api_key_env="CAPEVAL_TEST_KEY").headers()


@pytest.mark.parametrize("body, text", [
    (b'{"error": {"message": "Rate limit\\n reached"}}', "Rate limit reached"),
    (b'{"message": "overloaded"}', "overloaded"),                    # vLLM's error body: the message at the top
    (b'{"error": "no  such model"}', "no such model"),
    (b'{"error": {"code": 5}}', "{'code': 5}"),
    (b"Bad \xffgateway", "Bad \ufffdgateway"),                        # not JSON, not UTF-8: decoded with replacements
])
def test_the_servers_error_message_is_read_on_one_line(body, text):
    assert _error_text(body) == text


def test_a_long_error_message_is_cut_at_300_characters():
    assert _error_text(b"x" * 400) == "x" * 300
