"""The base of the scorers whose judge is a language model on an OpenAI-compatible server (CLAIR, G-VEval): the
server, the cache, the tries of answers that do not read, the dry run and the judge's identity and token counts in the
provenance. A subclass builds each caption's request bodies and reads an answer, and declares only its own options:
the server's are declared once, on :class:`JudgeScorer` (:func:`server_options`)."""

from __future__ import annotations

import abc
import inspect
import typing
from typing import Any, Callable, ClassVar, Sequence, TypeVar

from ..judges.cache import ResponseCache, request_key
from ..judges.options import ApiKeyEnv, BaseUrl, Concurrency, Retries, Revision, Seed, TimeoutS
from ..judges.plan import RequestPlan, estimate_tokens
from ..judges.server import ChatServer, JudgeServerError
from ..needs import JudgeServer
from .protocol import CaptionScorer

T = TypeVar("T")
#: The backend of every request here (part of the cache key).
BACKEND = "openai-compatible"


class JudgeScorer(CaptionScorer):
    """Holds the judge's server settings; ``score`` in subclasses asks through :meth:`ask_rounds`."""

    #: How many answers a caption gets before it counts as unread (the released loop's count).
    tries: ClassVar[int]
    needs = (JudgeServer(),)

    def __init__(self, *, model: str, temperature: float, max_tokens: int | None, base_url: BaseUrl = None,
                 api_key_env: ApiKeyEnv = None, revision: Revision = "", seed: Seed = None, concurrency: Concurrency = 8,
                 timeout_s: TimeoutS = 120.0, retries: Retries = 5):
        self.base_url, self.model, self.api_key_env, self.revision = base_url, model, api_key_env, revision
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.concurrency, self.timeout_s, self.retries = concurrency, timeout_s, retries
        self.usage: dict[str, int] = {}

    def server(self) -> ChatServer:
        if self.base_url is None:
            raise JudgeServerError(f"{self.metric} needs a judge server: pass base_url=... (an OpenAI-compatible endpoint, "
                                   "e.g. a local vLLM's http://127.0.0.1:8000/v1); nothing is sent anywhere without one")
        return ChatServer(self.base_url, self.api_key_env, timeout_s=self.timeout_s, retries=self.retries,
                          concurrency=self.concurrency)

    def decoding(self) -> dict[str, Any]:
        """The request's decoding parameters beyond the model and messages."""
        return {"temperature": self.temperature, **({} if self.max_tokens is None else {"max_tokens": self.max_tokens}),
                **({} if self.seed is None else {"seed": self.seed})}

    def body(self, messages: list[dict], model: str | None = None) -> dict[str, Any]:
        return {"model": model or self.model, "messages": messages, **self.decoding()}

    @abc.abstractmethod
    def bodies(self, predictions: list[str], references: list[list[str]] | None, images: list | None) -> list[dict]:
        """The first request of each caption (of each judge, judge by judge for an ensemble)."""

    def ask(self, bodies: Sequence[dict], attempt: int, cache: ResponseCache) -> list[dict]:
        """Each body's answer: from the cache, else from the server (and then kept); counts go to :attr:`usage`."""
        keys = [request_key(BACKEND, body["model"], self.revision, body, attempt, self.base_url or "") for body in bodies]
        answers: list[dict | None] = [cache.get(key) for key in keys]
        missing = [index for index, answer in enumerate(answers) if answer is None]
        if missing:
            def keep(position: int, answer: dict) -> None:
                cache.put(keys[missing[position]], answer)

            fresh = self.server().complete_all([bodies[index] for index in missing], on_answer=keep)
            for index, answer in zip(missing, fresh):
                answers[index] = answer
        self.usage["requests_sent"] = self.usage.get("requests_sent", 0) + len(missing)
        self.usage["answers_from_cache"] = self.usage.get("answers_from_cache", 0) + len(bodies) - len(missing)
        for kept in answers:
            for name in ("prompt_tokens", "completion_tokens"):
                self.usage[name] = self.usage.get(name, 0) + int((kept or {}).get("usage", {}).get(name, 0) or 0)
        return answers  # type: ignore[return-value]  # every None was filled

    def ask_rounds(self, bodies: Sequence[dict], read: Callable[[dict], T | None]) -> tuple[list[T | None], list[dict]]:
        """Each body asked up to :attr:`tries` times, a round of requests at a time, until ``read`` makes something of
        its answer: what ``read`` gave (``None`` for a body never read) and each body's last answer."""
        self.usage = {}
        cache = ResponseCache()
        results: list[T | None] = [None] * len(bodies)
        answers: list[dict] = [{} for _ in bodies]
        pending = list(range(len(bodies)))
        for attempt in range(self.tries):
            if not pending:
                break
            for index, answer in zip(pending, self.ask([bodies[index] for index in pending], attempt, cache)):
                answers[index], results[index] = answer, read(answer)
            pending = [index for index in pending if results[index] is None]
        return results, answers

    def plan(self, predictions: list[str], references: list[list[str]] | None = None, *, images: list | None = None) -> list[RequestPlan]:
        """What :meth:`score` would send for these captions (first tries), sending nothing: one plan per judge model."""
        cache = ResponseCache()
        by_model: dict[str, list[dict]] = {}
        for body in self.bodies(predictions, references, images):
            by_model.setdefault(body["model"], []).append(body)
        plans = []
        for model, bodies in by_model.items():
            todo = [body for body in bodies if cache.get(request_key(BACKEND, model, self.revision, body, 0, self.base_url or "")) is None]
            plans.append(RequestPlan(self.metric, model, self.base_url or "(no base_url: nothing can be sent)", len(todo),
                                     len(bodies) - len(todo),
                                     sum(estimate_tokens(body["messages"]) for body in todo),
                                     None if self.max_tokens is None else self.max_tokens * len(todo), self.tries))
        return plans

    def options(self) -> dict[str, Any]:
        """The judge's identity and decoding (never the key: only the name of its variable is kept, and not here)."""
        return {"backend": BACKEND, "model": self.model, "revision": self.revision, **self.decoding()}

    def provenance(self) -> dict[str, Any]:
        """As every scorer's, with the last call's requests sent, answers from the cache and tokens (the server's counts)."""
        return {**super().provenance(), "base_url": self.base_url, "usage": dict(self.usage)}


#: The options every server-backed judge takes, as :class:`JudgeScorer` declares them (model, temperature and
#: max_tokens differ by judge in their defaults and meaning: each judge declares its own).
SERVER_OPTIONS = ("base_url", "api_key_env", "revision", "seed", "concurrency", "timeout_s", "retries")


def server_options(init: Callable) -> Callable:
    """A judge's ``__init__(self, <its own options>, **server)`` declared with the server options of
    :class:`JudgeScorer` after its own (keyword-only), so the cards, the command line and the checks read them as its
    own options while they are written once.

    >>> from capeval.declaration import declared_options
    >>> from capeval.scoring.clair import ClairScorer
    >>> [option.name for option in declared_options(ClairScorer)][3:]
    ['base_url', 'api_key_env', 'revision', 'seed', 'concurrency', 'timeout_s', 'retries']
    """
    own = inspect.signature(init)
    base = inspect.signature(JudgeScorer.__init__).parameters
    shared = [base[name] for name in SERVER_OPTIONS]  # keyword-only there already
    kept = [parameter for parameter in own.parameters.values() if parameter.kind is not inspect.Parameter.VAR_KEYWORD]
    hints = typing.get_type_hints(JudgeScorer.__init__, include_extras=True)
    init.__signature__ = own.replace(parameters=kept + shared)  # type: ignore[attr-defined]
    init.__annotations__ = {**typing.get_type_hints(init, include_extras=True),
                            **{name: hints[name] for name in SERVER_OPTIONS}}
    return init


def answer_text(answer: dict) -> str:
    """The text of a chat completion's first choice (``""`` when it has none, or its message or content is null)."""
    choices = answer.get("choices") or [{}]
    return (choices[0].get("message") or {}).get("content") or ""
