"""An OpenAI-compatible chat-completions client on the standard library (``urllib``), for judge metrics.

One :class:`ChatServer` posts request bodies to ``<base_url>/chat/completions``, at most ``concurrency`` at a time,
each with a timeout; a 429, a 5xx, a refused or dropped connection or a timeout is tried again after a backoff
(``Retry-After`` when the server gives one), ``retries`` times. What cannot succeed raises :class:`JudgeServerError`
with one line naming the server and the problem. The key comes from the environment variable ``api_key_env``
names, read when a request is sent; only the variable's name appears in options, messages and provenance.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..models import ModelUnavailableError

#: HTTP statuses worth another try: rate limits and server-side failures.
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: The longest wait between two tries, whatever the backoff or ``Retry-After`` says.
MAX_BACKOFF_S = 30.0


class JudgeServerError(ModelUnavailableError):
    """A judge server that cannot be reached, refuses the key or the request, or answers something unusable: the judge
    cannot be had, as a checkpoint that cannot be downloaded (the command line prints it as one line)."""


def _error_text(body: bytes) -> str:
    """The server's own error message from an error body (OpenAI's ``{"error": {"message": ...}}``), on one line."""
    try:
        data = json.loads(body)
        message = data.get("error", data)
        message = message.get("message", message) if isinstance(message, dict) else message
    except (ValueError, AttributeError):
        message = body.decode("utf-8", "replace")
    return " ".join(str(message).split())[:300]


@dataclass(frozen=True)
class ChatServer:
    """Where a judge runs: ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) and the name of the environment variable
    holding its key (``None``: no key is sent, as for a local vLLM).

    >>> ChatServer("http://127.0.0.1:9/v1", api_key_env="CAPEVAL_NO_SUCH_KEY").headers()
    Traceback (most recent call last):
    capeval.judges.server.JudgeServerError: the judge server's key variable CAPEVAL_NO_SUCH_KEY is not set: export it (the key itself is never passed as an option)
    """

    base_url: str
    api_key_env: str | None = None
    timeout_s: float = 120.0
    retries: int = 5
    concurrency: int = 8
    backoff_s: float = 1.0

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env, "").strip()
            if not key:
                raise JudgeServerError(f"the judge server's key variable {self.api_key_env} is not set: export it "
                                       "(the key itself is never passed as an option)")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion: the server's parsed JSON answer to ``body``, after retries where they may help."""
        data = json.dumps(body).encode()
        headers = self.headers()
        for attempt in range(self.retries + 1):
            wait = self.backoff_s * 2 ** attempt
            request = urllib.request.Request(self.endpoint, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    answer = response.read()
            except urllib.error.HTTPError as error:
                problem = f"HTTP {error.code}: {_error_text(error.read())}"
                if error.code in (401, 403):
                    raise JudgeServerError(f"the judge server {self.base_url} refused the key in {self.api_key_env or '(no key variable)'} "
                                           f"({problem}): check the variable") from None
                if error.code not in RETRIED_STATUSES:
                    raise JudgeServerError(f"the judge server {self.base_url} refused the request ({problem})") from None
                retry_after = error.headers.get("Retry-After", "")
                wait = float(retry_after) if retry_after.replace(".", "", 1).isdigit() else wait
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as error:
                reason = getattr(error, "reason", error)
                problem = f"cannot reach the judge server at {self.base_url} ({reason})"
            else:
                try:
                    return json.loads(answer)
                except ValueError:
                    raise JudgeServerError(f"the judge server {self.base_url} answered something that is not JSON: "
                                           f"{answer[:120]!r}") from None
            if attempt < self.retries:
                time.sleep(min(wait, MAX_BACKOFF_S))
        raise JudgeServerError(f"{problem} after {self.retries + 1} tries" if problem.startswith("cannot reach")
                               else f"the judge server {self.base_url} kept failing ({problem}) after {self.retries + 1} tries")

    def complete_all(self, bodies: Sequence[dict[str, Any]], *, on_answer: Callable[[int, dict], None] | None = None) -> list[dict[str, Any]]:
        """:meth:`complete` over ``bodies``, ``concurrency`` at a time, answers in order; ``on_answer(index, answer)``
        runs as each arrives (so a cache keeps what came before a failure)."""
        def one(index: int) -> dict[str, Any]:
            answer = self.complete(bodies[index])
            if on_answer is not None:
                on_answer(index, answer)
            return answer

        if len(bodies) <= 1 or self.concurrency == 1:
            return [one(index) for index in range(len(bodies))]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(one, range(len(bodies))))
