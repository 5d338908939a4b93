"""G-VEval (Tong et al., 2024): GPT-4o reasons about a caption and ends with "The final score is $N$."; the score is
the expected value of N over the top log-probabilities of the token after the first ``$``, on the 0–100 scale.

Released code: ztangaj/gveval ``evaluation/gveval/scorer.py`` and its prompts ``evaluation/gveval/prompts/img/``
at commit :data:`RELEASED_COMMIT`; :func:`score_from_logprobs` is its arithmetic.
"""

from __future__ import annotations

import base64
import math
from importlib import resources
from typing import Any, Mapping, Sequence

#: ztangaj/gveval, the commit the prompts and the arithmetic follow.
RELEASED_COMMIT = "fee3fd7e758f5395f82c1a9426bec2c227824b59"
#: The released prompts for images, by setting (``evaluation/gveval/prompts/img/<setting>.txt``, shipped unchanged
#: as ``capeval/resources/gveval_<setting>.txt``).
SETTINGS = ("ref-free", "ref-only", "combined")
#: The released request's fixed decoding parameters (``Scorer.gveval``): the released judge is
#: ``gpt-4o-2024-05-13`` at temperature 1 with the 5 top log-probabilities of each token.
RELEASED_MODEL = "gpt-4o-2024-05-13"
RELEASED_DECODING = {"temperature": 1.0, "top_p": 1, "frequency_penalty": 0, "presence_penalty": 0, "logprobs": True,
                     "top_logprobs": 5}
#: The released scorer's attempts per caption while an answer cannot be scored (``ignore = 3``).
RELEASED_TRIES = 3
RESOLUTIONS = ("low", "high")
#: The tokens that count: the integers 0..100 written without spaces, in the released order.
SCORE_TOKENS = tuple(str(value) for value in range(101))


def gveval_prompt(setting: str) -> str:
    """The released prompt template of ``setting`` (with ``{{Reference}}`` and ``{{Caption}}`` in it)."""
    name = "gveval_" + setting.replace("-", "_") + ".txt"
    return resources.files("capeval").joinpath("resources").joinpath(name).read_text(encoding="utf-8")


def gveval_messages(caption: str, references: Sequence[str], setting: str, *, image: bytes | None = None,
                    image_type: str = "jpeg", resolution: str = "low") -> list[dict]:
    """The chat messages the released scorer sends: the prompt with the references written ``'r1'; 'r2`` (the
    released join, without a closing quote) and the caption; without an image, as one system message; with one, as a
    user message carrying the text and the image as a base64 data URL with ``detail=resolution``.

    >>> messages = gveval_messages("a dog", ["a puppy", "a dog runs"], "ref-only")
    >>> messages[0]["role"], messages[0]["content"].split("Reference captions:\n")[1].splitlines()[0]
    ('system', "'a puppy'; 'a dog runs")
    """
    text = (gveval_prompt(setting).replace("{{Reference}}", "'" + "'; '".join(references))
            .replace("{{Caption}}", caption))
    if image is None:
        return [{"role": "system", "content": text}]
    url = f"data:image/{image_type};base64,{base64.b64encode(image).decode()}"
    return [{"role": "user", "content": [{"type": "text", "text": text},
                                         {"type": "image_url", "image_url": {"url": url, "detail": resolution}}]}]


def _field(item: Any, name: str) -> Any:
    """``item[name]`` for a parsed JSON object, ``item.name`` for an SDK object."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def score_from_logprobs(content: Sequence[Any]) -> float | None:
    """The released G-VEval score from ``choices[0].logprobs.content``: at the token after the first token that
    contains ``$``, each top log-probability whose token is exactly an integer 0..100 becomes a probability, they
    are normalised to sum 1, and the score is their expected value. ``None`` where the released code raises: no
    ``$``, ``$`` in the last token, no top log-probabilities there, or no score token with a probability above 0
    (every listed one underflows, or none is an integer 0..100).

    Kept quirks: a token listed twice keeps its last probability (not the sum); only the first ``$`` counts, even
    one inside the reasoning; tokens with a leading space (``" 85"``) do not count.

    >>> from math import log
    >>> content = [{"token": "$", "logprob": 0.0, "top_logprobs": []},
    ...            {"token": "80", "logprob": log(0.6), "top_logprobs": [
    ...                {"token": "80", "logprob": log(0.6)}, {"token": "90", "logprob": log(0.2)},
    ...                {"token": " 70", "logprob": log(0.2)}]}]
    >>> round(score_from_logprobs(content), 6)
    82.5
    >>> score_from_logprobs(content[:1]) is None
    True
    """
    for position, item in enumerate(content):
        if "$" in _field(item, "token"):
            break
    else:
        return None
    if position + 1 == len(content):
        return None
    top = _field(content[position + 1], "top_logprobs")
    if not top:
        return None
    probabilities = dict.fromkeys(SCORE_TOKENS, 0.0)
    for entry in top:
        token = _field(entry, "token")
        if token in probabilities:
            probabilities[token] = math.exp(_field(entry, "logprob"))
    total = sum(probabilities.values())
    if total == 0:
        return None
    return sum(int(token) * (probability / total) for token, probability in probabilities.items())
