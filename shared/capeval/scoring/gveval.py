"""G-VEval (Tong et al., 2024): GPT-4o reasons about a caption and ends with "The final score is $N$."; the score is
the expected value of N over the top log-probabilities of the token after the first ``$``, on the 0–100 scale.

Released code: ztangaj/gveval ``evaluation/gveval/scorer.py`` and its prompts ``evaluation/gveval/prompts/img/``
at commit :data:`RELEASED_COMMIT`; :func:`score_from_logprobs` is its arithmetic, :func:`gveval_messages` its request.

Where the released scorer cannot read an answer it asks again, three times in all, then drops the caption; capeval
asks the same way, then gives the caption NaN, names it in a warning, and leaves it out of the corpus mean (as the
released drop does). A backend that returns no log-probabilities, and a judge whose tokenizer writes a score as
several tokens (``8``, ``5``), are refused with one line: the released arithmetic reads one token 0..100.
"""

from __future__ import annotations

import base64
import math
import warnings
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Mapping, Sequence

from ..declaration import Opt
from ..judges.options import MaxTokens
from .judge import JudgeScorer, answer_text, server_options
from ..judges.server import JudgeServerError
from .protocol import Scores

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
    >>> messages[0]["role"], messages[0]["content"].split("Reference captions:")[1].splitlines()[1]
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


def _first_dollar(content: Sequence[Any]) -> int | None:
    return next((position for position, item in enumerate(content) if "$" in _field(item, "token")), None)


def score_split(content: Sequence[Any]) -> str | None:
    """The score as the judge wrote it when its tokenizer split it into several tokens (the token after the first ``$``
    and the next one both digits), else ``None``.

    >>> score_split([{"token": "$"}, {"token": "8"}, {"token": "5"}, {"token": "$"}])
    '85'
    >>> score_split([{"token": "$"}, {"token": "85"}, {"token": "$"}]) is None
    True
    """
    position = _first_dollar(content)
    if position is None or position + 2 >= len(content):
        return None
    first, second = (_field(content[position + k], "token") for k in (1, 2))
    return first + second if first.isdigit() and second.isdigit() else None


def image_payload(item: Any) -> tuple[bytes, str]:
    """An image as the request carries it: a file's (or ``{"bytes"}``'s) own bytes, labelled JPEG as the released
    scorer labels every file; an in-memory image encoded as PNG (lossless) and labelled so."""
    if isinstance(item, dict):
        item = item.get("bytes") if item.get("bytes") is not None else item.get("path")
    if isinstance(item, (str, Path)):
        return Path(item).expanduser().read_bytes(), "jpeg"
    if isinstance(item, (bytes, bytearray)):
        return bytes(item), "jpeg"
    import io

    from ..vision.images import load_image

    out = io.BytesIO()
    load_image(item, max_side=None).save(out, format="PNG")
    return out.getvalue(), "png"


class GvevalScorer(JudgeScorer):
    """G-VEval on an OpenAI-compatible server that returns log-probabilities: one request per caption, answers cached."""

    metric, title, name, primary = "g_veval", "G-VEval", "g_veval", "g_veval"
    tries = RELEASED_TRIES
    value_range = (0.0, 100.0)
    default_models = "a vision LLM with log-probabilities on an OpenAI-compatible server (the paper's: GPT-4o, `gpt-4o-2024-05-13`)"
    faithful_to = ("ztangaj/gveval `scorer.py` @ fee3fd7: requests and the log-probability arithmetic equal the released "
                   "code's on 33 answers (`tests/metrics/g_veval`)")
    inputs_note = "images for `setting` ref-free and combined; references for ref-only and combined; a judge server (`base_url`)"

    @server_options
    def __init__(self, model: Annotated[str, Opt("the judge model on the server; it must return log-probabilities and write "
                                                 "0..100 as one token")] = RELEASED_MODEL,
                 setting: Annotated[str, Opt("the released prompt: `ref-only` (references, no image), `ref-free` (image, no "
                                             "references) or `combined` (both)", choices=SETTINGS)] = "ref-only",
                 resolution: Annotated[str, Opt("the image's `detail` in the request", choices=RESOLUTIONS)] = "low",
                 temperature: Annotated[float, Opt("sampling temperature (the released 1: the reasoning, and so the score, vary "
                                                   "from run to run unless the server takes a `seed`)", within="[0, 2]")] = 1.0,
                 max_tokens: MaxTokens = None, **server: Any):
        super().__init__(model=model, temperature=temperature, max_tokens=max_tokens, **server)
        self.setting, self.resolution = setting, resolution
        self.needs_images = setting != "ref-only"
        self.needs_references = setting != "ref-free"

    def decoding(self) -> dict[str, Any]:
        released = {key: value for key, value in RELEASED_DECODING.items() if key != "temperature"}
        return {**super().decoding(), **released}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "setting": self.setting, "resolution": self.resolution}

    def bodies(self, predictions, references, images=None) -> list[dict]:
        if self.needs_images and images is None:
            raise ValueError(f"G-VEval's setting {self.setting!r} shows the judge the image: pass images= (one per caption)")
        bodies = []
        for index, prediction in enumerate(predictions):
            image, kind = image_payload(images[index]) if self.needs_images else (None, "jpeg")
            refs = references[index] if references is not None and self.setting != "ref-free" else []
            bodies.append(self.body(gveval_messages(prediction, refs, self.setting, image=image, image_type=kind,
                                                    resolution=self.resolution)))
        return bodies

    def read(self, answer: dict) -> float | None:
        """The score of one answer; a backend without log-probabilities or a split score is refused."""
        choice = (answer.get("choices") or [{}])[0]
        content = (choice.get("logprobs") or {}).get("content")
        if content is None:
            raise JudgeServerError(f"the judge {self.model} at {self.base_url} returned no log-probabilities: G-VEval reads "
                                   "the score token's top log-probabilities; use a backend and model that return them "
                                   "(`logprobs`, `top_logprobs`)")
        split = score_split(content)
        if split is not None:
            raise ValueError(f"the judge {self.model} writes the score {split} as several tokens: G-VEval's released "
                             "arithmetic reads one token 0..100 (a tokenizer such as GPT-4o's); this judge cannot give it")
        return score_from_logprobs(content)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        scores, answers = self.ask_rounds(self.bodies(predictions, references, images), self.read)
        failed = [index for index, score in enumerate(scores) if score is None]
        if len(failed) == len(scores):
            raise ValueError(f"G-VEval could not read a score from any of the judge's answers ({self.tries} tries per caption): "
                             f"none had a '$' followed by a score token 0..100 in its top log-probabilities")
        if failed:
            named = "; ".join(f"#{index} {predictions[index][:60]!r}" for index in failed[:10])
            warnings.warn(f"G-VEval: no score could be read from the judge's answers to {len(failed)} caption(s) after "
                          f"{self.tries} tries: their values are NaN and the corpus mean leaves them out, as the released "
                          f"scorer drops them: {named}", stacklevel=2)
        values = [math.nan if score is None else score for score in scores]
        defined = [value for value in values if not math.isnan(value)]
        usage = [answer.get("usage", {}) for answer in answers]
        return Scores({"g_veval": values}, corpus={"g_veval": sum(defined) / len(defined)}, details={
            "reason": [answer_text(answer) for answer in answers],
            "prompt_tokens": [int(u.get("prompt_tokens", 0) or 0) for u in usage],
            "completion_tokens": [int(u.get("completion_tokens", 0) or 0) for u in usage]})
