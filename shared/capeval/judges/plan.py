"""What a judge run will send before it sends anything (``capeval score --dry-run``, :func:`capeval.dry_run`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

#: The usual rule of thumb for English text in BPE vocabularies: about 4 characters per token.
CHARS_PER_TOKEN = 4
#: What one image costs in OpenAI's accounting at ``detail="low"`` (higher details cost more): an estimate.
IMAGE_TOKENS = 85


def estimate_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """An estimate of the prompt tokens of ``messages``: text at :data:`CHARS_PER_TOKEN` characters a token, each image
    :data:`IMAGE_TOKENS` tokens (the server's tokenizer decides the real count, which the provenance records).

    >>> estimate_tokens([{"role": "system", "content": "12345678"}])
    2
    >>> estimate_tokens([{"role": "user", "content": [{"type": "text", "text": "abc"}, {"type": "image_url", "image_url": {}}]}])
    86
    """
    tokens = 0
    for message in messages:
        parts = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
        for part in parts:
            tokens += math.ceil(len(part["text"]) / CHARS_PER_TOKEN) if part["type"] == "text" else IMAGE_TOKENS
    return tokens


@dataclass
class RequestPlan:
    """The requests a judge metric's call will send: ``requests`` not yet answered in the cache (``cached`` are),
    their estimated prompt tokens, and the most answer tokens they may cost (``None``: no limit is sent). Answers that
    do not parse are asked again (up to ``tries`` times), so the real count may be higher."""

    metric: str
    judge: str
    base_url: str
    requests: int
    cached: int
    prompt_tokens: int
    max_answer_tokens: int | None
    tries: int

    def line(self) -> str:
        """The plan in one line, as ``--dry-run`` prints it."""
        answers = "" if self.max_answer_tokens is None else f", at most {self.max_answer_tokens:,} answer tokens"
        return (f"{self.metric}: {self.requests:,} request(s) to {self.judge} at {self.base_url} (~{self.prompt_tokens:,} "
                f"prompt tokens{answers}); {self.cached:,} answered from the cache; an answer that does not parse is asked "
                f"again, up to {self.tries} tries")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
