"""Language-model judges: what every judge metric shares, whatever runs the model.

- :mod:`.server`: an OpenAI-compatible chat-completions client (a hosted API, vLLM, any server speaking
  ``/chat/completions``), with a concurrency limit, timeouts, retries with backoff on 429/5xx and one-line errors;
  the key is read from an environment variable the user names, never passed or recorded itself.
- :mod:`.cache`: a persistent cache of judge answers keyed by backend, model and revision, the exact request (its
  messages, images included, and decoding parameters) and the try number, so a rerun sends nothing and gives the same
  numbers.
- :mod:`.plan`: what a run will send (requests, estimated tokens) before it sends anything
  (:func:`capeval.dry_run`, ``capeval score --dry-run``).
- :mod:`.options`: the options every server-backed judge declares.

The base of the judge scorers is :class:`capeval.scoring.judge.JudgeScorer`.

Nothing is sent anywhere unless the user gives a ``base_url``.
"""

from .cache import ResponseCache
from .plan import RequestPlan, estimate_tokens
from .server import ChatServer, JudgeServerError

__all__ = ["ChatServer", "JudgeServerError", "RequestPlan", "ResponseCache", "estimate_tokens"]
