"""The options every server-backed judge declares (:class:`~capeval.declaration.Opt`), read the same everywhere:
``base_url: BaseUrl = None``."""

from __future__ import annotations

from typing import Annotated, Any

from ..declaration import Opt


def url_option(name: str, value: Any) -> str:
    """An ``http://`` or ``https://`` URL, without a trailing slash.

    >>> url_option("base_url", "http://127.0.0.1:8000/v1/")
    'http://127.0.0.1:8000/v1'
    >>> url_option("base_url", "127.0.0.1:8000")
    Traceback (most recent call last):
    ValueError: base_url must be an http:// or https:// URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1), got '127.0.0.1:8000'
    """
    if not (isinstance(value, str) and value.startswith(("http://", "https://")) and len(value.split("://", 1)[1]) > 0):
        raise ValueError(f"{name} must be an http:// or https:// URL of an OpenAI-compatible server "
                         f"(e.g. http://127.0.0.1:8000/v1), got {value!r}")
    return value.rstrip("/")


def variable_option(name: str, value: Any) -> str:
    """The name of an environment variable (refusing what looks like a key itself)."""
    if not (isinstance(value, str) and value.replace("_", "A").isalnum() and not value[0].isdigit()):
        raise ValueError(f"{name} is the NAME of the environment variable holding the key (e.g. OPENAI_API_KEY), "
                         "never the key itself; got a value that is not a variable name")
    return value


BaseUrl = Annotated[str | None, Opt("the OpenAI-compatible server the judge runs on (a hosted API, a local vLLM: "
                                    "`http://127.0.0.1:8000/v1`); None: nothing is sent, and scoring asks for one",
                                    check=url_option)]
ApiKeyEnv = Annotated[str | None, Opt("the name of the environment variable holding the server's key (e.g. `OPENAI_API_KEY`); "
                                      "the key itself is never an option, logged, cached or recorded; None: no key sent",
                                      check=variable_option)]
Revision = Annotated[str, Opt("names the judge's weights where its model name does not (a local checkpoint's commit): part "
                              "of the cache key and the provenance")]
Seed = Annotated[int | None, Opt("the request's `seed`, for servers that take one (OpenAI, vLLM), recorded in the "
                                 "provenance; None: none sent")]
MaxTokens = Annotated[int | None, Opt("the most tokens an answer may have (`max_tokens`); None: none sent", within="[1, inf)")]
Concurrency = Annotated[int, Opt("requests in flight at once", within="[1, inf)")]
TimeoutS = Annotated[float, Opt("seconds to wait for one answer before trying again", within="(0, inf)")]
Retries = Annotated[int, Opt("further tries of a request after a 429, a 5xx, a timeout or a lost connection, with "
                             "exponential backoff")]
