"""CLAIR (Chan et al., EMNLP 2023): a text language model rates, 0 to 100, how likely a set of candidate captions
describes the same image as a set of references; the score is that rating / 100.

Released code: DavidMChan/clair ``clair.py`` at commit :data:`RELEASED_COMMIT`. Its prompt
(:data:`CLAIR_PROMPT`) defines the metric and is reproduced exactly; its parse of one answer is
:func:`parse_response`. The released loop asks up to three times (at the same temperature) while an answer does not
parse, then returns 0.
"""

from __future__ import annotations

import json
import math
import re

#: DavidMChan/clair, the commit the prompt and the parse follow.
RELEASED_COMMIT = "429fa8b90e89b04fc7315ea853ab1838b182cb77"

#: ``_CLAIR_PROMPT`` of DavidMChan/clair ``clair.py`` at :data:`RELEASED_COMMIT`, character for character.
CLAIR_PROMPT = (
    "You are trying to tell if a candidate set of captions is describing the same image as a reference set of captions.\n"
    "Candidate set:\n"
    "{candidate_statements}\n"
    "Reference set:\n"
    "{target_statements}\n"
    "On a precise scale from 0 to 100, how likely is it that the candidate set is "
    "describing the same image as the reference set? (JSON format, with a key \"score\", "
    "value between 0 and 100, and a key \"reason\" with a string value.)\n"
)
#: How many answers the released loop asks for before it gives up and scores 0.
RELEASED_TRIES = 3
#: The released code's maximum answer length.
RELEASED_MAX_TOKENS = 1024

_NUMBER = re.compile(r"\d*\.?\d+")
_REASON = re.compile(r"(?i)reason.*")


def clair_prompt(candidates: list[str], references: list[str]) -> str:
    """The released prompt for a set of candidate captions and their references, one ``- caption`` line each.

    >>> print(clair_prompt(["a dog"], ["a puppy", "a dog runs"]).splitlines()[1:6])
    ['Candidate set:', '- a dog', '', 'Reference set:', '- a puppy']
    """
    return CLAIR_PROMPT.format(candidate_statements="".join(f"- {text}\n" for text in candidates),
                               target_statements="".join(f"- {text}\n" for text in references))


def _as_text(reason: object) -> str:
    """A JSON reason as text (the released code returns whatever the JSON held)."""
    return reason if isinstance(reason, str) else json.dumps(reason)


def parse_response(text: str) -> tuple[float, str] | None:
    """The released parse of one CLAIR answer: ``(score / 100, reason)``, or ``None`` where the released loop asks
    again.

    The first ``{...}`` (up to the first ``}``) is read as JSON for ``score`` and ``reason``; where it is missing, is
    not JSON or has no ``score``, the first number in the text is the score, multiplied by 100 when below 1 (the
    released fallback for models that normalise their answer), and the text after the first "reason" is the reason.
    Kept quirks: a JSON score is never rescaled (0.8 gives 0.008) and never clipped (150 gives 1.5); the fallback
    reads digits only (``-20`` gives 0.2). Where the released code raises (a JSON score that is null, a list or
    non-numeric text), and for a score that is not finite, ``None``: capeval asks again.

    >>> parse_response('{"score": 85, "reason": "same dog"}')
    (0.85, 'same dog')
    >>> parse_response('{"score": 0.8}'), parse_response("0.8"), parse_response("Score: -20. Reason: none")
    ((0.008, 'Unknown'), (0.8, 'Unknown'), (0.2, 'none'))
    >>> parse_response("I cannot tell.") is None
    True
    """
    if "{" in text:
        candidate = "{" + text.split("{")[1].split("}")[0] + "}"
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            data = {}
        if "score" in data:
            try:
                score = float(data["score"])
            except (TypeError, ValueError):  # the released code raises here
                return None
            return (score / 100, _as_text(data.get("reason", "Unknown"))) if math.isfinite(score) else None
    numbers = _NUMBER.findall(text)
    if not numbers:
        return None
    score = float(numbers[0])
    if score < 1:
        score *= 100
    reasons = _REASON.findall(text)
    reason = reasons[0].strip()[len("reason"):].replace(":", "").strip() if reasons else "Unknown"
    return score / 100, reason
