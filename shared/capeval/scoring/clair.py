"""CLAIR (Chan et al., EMNLP 2023): a text language model rates, 0 to 100, how likely a set of candidate captions
describes the same image as a set of references; the score is that rating / 100.

Released code: DavidMChan/clair ``clair.py`` at commit :data:`RELEASED_COMMIT`. Its prompt
(:data:`CLAIR_PROMPT`) defines the metric and is reproduced exactly; its parse of one answer is
:func:`parse_response`. The released loop asks up to three times (at the same temperature) while an answer does not
parse, then returns 0; capeval keeps that 0 only with the caption counted and named in a warning and in the details
(``unparsed``). The request is the one grazier (the released code's client, DavidMChan/grazier
``engines/llm/chat_engine.py`` @ dc475136fb50377d244f6fcc170187d1c086722d) sends for ``chat-gpt``: the prompt as one
user message to ``gpt-3.5-turbo``, temperature 0, ``max_tokens`` 1024.

CLAIR_E (the paper's ensemble) is the mean of the scores of several judges: ``model="judge-a;judge-b"``.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from typing import Annotated, Any

from ..declaration import Opt
from ..judges.options import MaxTokens
from .judge import JudgeScorer, answer_text, server_options
from .protocol import Scores

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
#: The judge of the released default (grazier's ``chat-gpt``).
RELEASED_MODEL = "gpt-3.5-turbo"

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


def judge_models(name: str, value: Any) -> str:
    """One judge model name, or several separated by ``;`` (CLAIR_E), without blanks around them.

    >>> judge_models("model", "gpt-4o ; claude-3")
    'gpt-4o;claude-3'
    """
    names = [part.strip() for part in value.split(";")] if isinstance(value, str) else []
    if not names or not all(names):
        raise ValueError(f"{name} must name the judge model on the server (several separated by ';' for CLAIR_E), got {value!r}")
    return ";".join(names)


class ClairScorer(JudgeScorer):
    """CLAIR on an OpenAI-compatible server: one request per caption and judge (all the caption's references in one
    prompt), answers cached; the score is the mean over the judges of ``parse_response``'s score."""

    metric, title, name, primary = "clair", "CLAIR", "clair", "clair"
    tries = RELEASED_TRIES
    value_range = (0.0, None)  # the released parse neither clips nor floors a JSON score (150 gives 1.5)
    blank_references_allowed = False
    default_models = "a text LLM on an OpenAI-compatible server (the paper's: GPT-3.5-Turbo, `gpt-3.5-turbo`)"
    faithful_to = ("DavidMChan/clair `clair.py` @ 429fa8b: prompt and parse equal the released code's on 28 answers "
                   "(`tests/metrics/clair`)")
    inputs_note = "text only; a judge server (`base_url`)"

    @server_options
    def __init__(self, model: Annotated[str, Opt("the judge model on the server; several separated by `;` give CLAIR_E, "
                                                 "the mean of their scores", check=judge_models)] = RELEASED_MODEL,
                 temperature: Annotated[float, Opt("sampling temperature (the released 0: greedy; above 0 the answers vary "
                                                   "with the seed, where the server takes one)", within="[0, 2]")] = 0.0,
                 max_tokens: MaxTokens = RELEASED_MAX_TOKENS, **server: Any):
        super().__init__(model=model, temperature=temperature, max_tokens=max_tokens, **server)

    def judges(self) -> list[str]:
        return self.model.split(";")

    def bodies(self, predictions, references, images=None) -> list[dict]:
        prompts = [[{"role": "user", "content": clair_prompt([prediction], refs)}]
                   for prediction, refs in zip(predictions, references or [])]
        return [self.body(messages, judge) for judge in self.judges() for messages in prompts]

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        bodies = self.bodies(predictions, references)
        parsed, answers = self.ask_rounds(bodies, lambda answer: parse_response(answer_text(answer)))
        judges, count = self.judges(), len(predictions)
        scores, reasons, unparsed = [], [], []
        for index in range(count):
            mine = [parsed[j * count + index] for j in range(len(judges))]
            scores.append(sum(0.0 if result is None else result[0] for result in mine) / len(judges))
            reasons.append("; ".join("" if result is None else result[1] for result in mine))
            unparsed.append([judge for judge, result in zip(judges, mine) if result is None])
        failed = [index for index, names in enumerate(unparsed) if names]
        if failed:
            named = "; ".join(f"#{index} {predictions[index][:60]!r} ({', '.join(unparsed[index])})" for index in failed[:10])
            warnings.warn(f"CLAIR: the judge's answers to {len(failed)} caption(s) did not parse after {self.tries} tries; "
                          f"each such answer counts 0, as in the released code: {named}", stacklevel=2)
        tokens = [[answers[j * count + index].get("usage", {}) for j in range(len(judges))] for index in range(count)]
        return Scores({"clair": scores}, details={
            "reason": reasons, "unparsed": unparsed,
            "prompt_tokens": [sum(int(u.get("prompt_tokens", 0) or 0) for u in row) for row in tokens],
            "completion_tokens": [sum(int(u.get("completion_tokens", 0) or 0) for u in row) for row in tokens]})
