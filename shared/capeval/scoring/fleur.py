"""FLEUR and RefFLEUR (Lee et al., ACL 2024): LLaVA-1.5 rates a caption from 0.0 to 1.0 and the printed rating is
smoothed over the probabilities of its digits, as the released code (Yebin46/FLEUR ``fleur.py``, ``reffleur.py``)
computes it. EXPERT (:mod:`capeval.scoring.expert`) smooths its rating with the same arithmetic.

:func:`smoothed_score` carries the arithmetic, checked against the released code without a model
(``scripts/build_llava_judge_goldens.py``).
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Annotated, Any, Callable, ClassVar, Sequence

import torch

from ..backbones.llava import TEMPLATES, Generation, LlavaJudge, load_llava, render_prompt
from ..declaration import Opt
from ..inputs import path_option
from ..judges.cache import ResponseCache, request_key
from ..models import model_id, resolve_device
from ..needs import HubModel, Need
from ..progress import progress
from ..vision.images import image_digest, open_image
from .options import Device
from .protocol import CaptionScorer, Scores
from .spice import mean_defined


def parsed_rating(text: str) -> float | None:
    """The rating the released code reads from an answer: every character but digits and dots dropped, leading and
    trailing dots stripped, ``float()`` of the rest; ``None`` where ``float()`` fails.

    >>> parsed_rating("0.75"), parsed_rating("Score: 0.8."), parsed_rating("0.7 out of 1.0"), parsed_rating("good")
    (0.75, 0.8, None, None)
    """
    digits_and_dots = re.sub(r"[^\d.]", "", text)
    try:
        return float(digits_and_dots.strip("."))
    except ValueError:
        return None


def fleur_answer_text(decoded: str) -> str:
    """What FLEUR's released code parses from its decoded output (special tokens kept): the text stripped, without
    its last four characters, the end token ``</s>``. An answer cut off before the end token loses its digits.

    >>> fleur_answer_text(" 0.75</s>"), fleur_answer_text(" 0.75")
    ('0.75', '')
    """
    return decoded.strip()[:-4]


def _digit_step(generated_ids: torch.Tensor, digit_id: int, pick: int) -> int | None:
    """The position of ``digit_id`` among ``generated_ids`` as the released code finds it: the only one, else the
    ``pick``-th (``None`` where there is none, or too few, as the released indexing raises)."""
    positions = (generated_ids == digit_id).nonzero().squeeze()
    if positions.dim() == 0:
        return int(positions)
    return int(positions[pick]) if pick < len(positions) else None


def smoothed_score(text: str, generated_ids: Sequence[int], step_logits, digit_ids: Sequence[int], *,
                   search_start: int = 0) -> float | None:
    """The released FLEUR score of one answer: ``None`` where the released code cannot score it.

    ``text`` is the answer as the released code parses it (FLEUR: the decoded output, stripped, without its last four
    characters, the end token ``</s>``; EXPERT: decoded without special tokens); ``generated_ids`` the generated token
    ids and ``step_logits`` (``[steps, vocab]``) the logits each step chose them from; ``digit_ids`` the ids of the
    tokens '0'..'9'. The rating ``r`` must lie in [0, 1] and must print (``str(float)``) with a first decimal digit
    ``d``. For ``r < 1`` the score is ``Σ_k k/10 · p_k`` with ``p`` the softmax over the whole vocabulary at the step
    that generated ``d`` (its first occurrence among the generated ids, the second when ``d`` is 0 and occurs more than
    once: "0.0"'s decimal), plus, when the printed rating has a second decimal digit, ``Σ_k k/100 · q_k`` at the
    step of that digit (the second occurrence whenever it occurs more than once). For ``r = 1`` it is
    ``0.9·p('0') + p('1')`` at the step of the one '1' (``None`` when '1' occurs not exactly once). A digit missing
    from the generated ids gives ``None``.

    ``search_start``: the released code looks for the digits among ``generated_ids[search_start:]`` and uses the
    position found there as the step (EXPERT: 1, its ``output_ids[0, 1:]``). Arithmetic follows the released order in
    the logits' dtype (the value is what the released code prints into a second turn).

    >>> import torch
    >>> logits = torch.full((4, 12), -9.0)
    >>> logits[2, 7] = logits[2, 8] = 3.0      # step 2 chose '7' (id 7), with '8' as likely
    >>> round(smoothed_score("0.7", [0, 10, 7, 11], logits, range(10)), 4)
    0.75
    >>> smoothed_score("0.7", [0, 10, 6, 11], logits, range(10)) is None   # no '7' was generated
    True
    """
    rating = parsed_rating(text)
    if rating is None or not 0 <= rating <= 1:
        return None
    ids = torch.as_tensor(list(generated_ids))[search_start:]
    logits = torch.as_tensor(step_logits)
    printed = str(rating)
    if rating == 1.0:
        step = (ids == digit_ids[1]).nonzero().squeeze()
        if step.numel() != 1:
            return None
        probs = torch.softmax(logits[int(step)], dim=-1)
        return float((0.9 * probs[digit_ids[0]] + probs[digit_ids[1]]).item())
    if "." not in printed:  # e.g. 1e-05
        return None
    point = printed.index(".")
    first = int(printed[point + 1])
    first_step = _digit_step(ids, digit_ids[first], 1 if first == 0 else 0)
    if first_step is None:
        return None
    probs = torch.softmax(logits[first_step], dim=-1)
    score = torch.zeros((), dtype=probs.dtype)  # the released 0. + tensor: the same sum in the logits' dtype
    for rate, token in enumerate(digit_ids):
        score = score + probs[token] * rate * 0.1
    if len(printed) > 3:
        second_step = _digit_step(ids, digit_ids[int(printed[point + 2])], 1)
        if second_step is None:
            return None
        probs = torch.softmax(logits[second_step], dim=-1)
        for rate, token in enumerate(digit_ids):
            score = score + probs[token] * rate * 0.01
    return float(score.item())


#: The released FLEUR instruction (Yebin46/FLEUR ``fleur.py`` at b9cd6c9c, line 74; the same in ``fleur_exp.py``).
FLEUR_PROMPT = ("Your task is to evaluate and rate the caption on a scale of 0.0 to 1.0 based on the given Grading Criteria. "
                "(Print Real Number Score ONLY)\n\nGrading Criteria:\n\n0.0: The caption does not describe the image at all.\n"
                "1.0: The caption accurately and clearly describes the image.\n\nCaption: {candidate}\n\n"
                "Score(Choose a rating from 0.0 to 1.0):")
#: The released RefFLEUR instruction (``reffleur.py`` at b9cd6c9c, line 74): the references joined by newlines.
REFFLEUR_PROMPT = ("Your task is to evaluate and rate the candidate caption on a scale of 0.0 to 1.0 based on the given "
                   "Grading Criteria. (Print Real Number Score ONLY)\n\nGrading Criteria:\n\n0.0: The caption does not describe "
                   "the image at all.\n1.0: The caption accurately and clearly describes the image.\n\nReference Captions: "
                   "{references}\n\nCandidate Caption: {candidate}\n\nScore(Choose a rating from 0.0 to 1.0):")
#: The second turn of ``fleur_exp.py`` (b9cd6c9c, line 93).
FLEUR_EXPLANATION_PROMPT = "Why? Tell me the reason."
DEFAULT_LLAVA = "llava-hf/llava-1.5-13b-hf"
#: The released ``max_new_tokens``.
MAX_NEW_TOKENS = 512
#: Captions per generate() call.
BATCH_SIZE = 8
WEIGHT_DTYPES = (None, "float32", "bfloat16", "float16")


#: The judge cache's backend name of the in-process LLaVA judges (part of every key).
LLAVA_BACKEND = "transformers-llava"
#: The options the LLaVA judges share.
AnswerCache = Annotated[bool, Opt("keep each answer in the judge cache (<CAPEVAL_CACHE>/judges, keyed by judge, exact prompt, "
                                  "image digest and decoding) and read it back on a rerun; the numbers are the same")]
MaxNewTokens = Annotated[int, Opt("tokens the judge may generate per answer (the released 512)", within="[1, inf)")]
WeightDtype = Annotated[str | None, Opt("precision of the judge's weights; None: float16 on CUDA (the released loading), "
                                        "float32 on CPU", choices=WEIGHT_DTYPES)]


class UnscoredAnswerWarning(UserWarning):
    """A judge's answer that the released code cannot score (its rating does not parse or lies outside [0, 1])."""


def collapse_whitespace(text: str) -> str:
    """The released scripts' reading of a caption: runs of whitespace as one space, none at the ends."""
    return " ".join(text.split())


class LlavaJudgeScorer(CaptionScorer):
    """What FLEUR and EXPERT share: a LLaVA-1.5 judge asked for a 0.0–1.0 rating of each caption and its image,
    greedy, the rating smoothed over its digits' probabilities (:func:`smoothed_score`); the explanation turn on
    request. Subclasses give the conversation, the prompts and how the released code reads the answer."""

    needs_images = True
    value_range = (0.0, 1.0)
    extras = ("models",)
    needs: ClassVar[tuple[Need, ...]] = (HubModel(DEFAULT_LLAVA),)
    #: The LLaVA conversation of the released code.
    template: ClassVar[str]
    #: Where the released code starts looking for the digits among the generated ids (:func:`smoothed_score`).
    search_start: ClassVar[int] = 0

    def __init__(self, model: str, adapter: str | None, explain: bool, max_new_tokens: int, cache: bool, device,
                 dtype: str | None):
        self.model_name, self.adapter = model, adapter
        self.explain, self.max_new_tokens, self.cache = explain, max_new_tokens, cache
        self.usage: dict[str, int] = {}
        self.device = resolve_device(device)
        self.dtype = dtype or ("float16" if self.device.type == "cuda" else "float32")

    @property
    def judge(self) -> LlavaJudge:
        return load_llava(self.model_name, adapter=self.adapter, device=self.device, dtype=self.dtype)

    def instruction(self, candidate: str, references: Sequence[str] | None) -> str:
        """The released first user message for ``candidate``."""
        raise NotImplementedError

    def explanation_prompt(self, candidate: str) -> str:
        raise NotImplementedError

    def answer_text(self, generation: Generation) -> str:
        """The text of an answer that the released code parses."""
        raise NotImplementedError

    def explanation(self, generation: Generation) -> Any:
        """What the details show of the explanation turn."""
        return generation.text_without_special.strip()

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"model": model_id(self.model_name), "dtype": self.dtype}
        if self.adapter is not None:
            options["adapter"] = model_id(self.adapter)
        if self.max_new_tokens != MAX_NEW_TOKENS:
            options["max_new_tokens"] = self.max_new_tokens
        return options

    def request(self, prompt: str, image: str) -> dict[str, Any]:
        """What identifies one answer in the judge cache: the judge (model, adapter, precision), the exact prompt, the
        image's digest, the decoding and how the answer is read."""
        return {"adapter": None if self.adapter is None else model_id(self.adapter), "dtype": self.dtype, "prompt": prompt,
                "image": image, "decoding": {"do_sample": False, "num_beams": 1, "max_new_tokens": self.max_new_tokens,
                                             "stop": TEMPLATES[self.template].stop},
                "read": {"metric": self.metric, "search_start": self.search_start}}

    def answered(self, prompts: Sequence[str], images: Sequence[Any], read: Callable[[Generation], dict[str, Any]],
                 batch_size: int, show_progress: bool | None) -> list[dict[str, Any]]:
        """``read`` of the judge's answer to each prompt with its image: from the answer cache, else generated in
        batches (and then kept); the counts go to :attr:`usage`."""
        cache = ResponseCache() if self.cache else None
        digests = [image_digest(image, name=f"images[{i}]") for i, image in enumerate(images)]
        keys = [request_key(LLAVA_BACKEND, model_id(self.model_name), "", self.request(prompt, digest))
                for prompt, digest in zip(prompts, digests)]
        answers: list[dict[str, Any] | None] = [cache.get(key) if cache else None for key in keys]
        # Captions of one image side by side, so that a batch holds them together and runs their prompt's prefix once.
        first_seen = {digest: i for i, digest in reversed(list(enumerate(digests)))}
        missing = sorted((i for i, answer in enumerate(answers) if answer is None), key=lambda i: first_seen[digests[i]])
        for start in progress(range(0, len(missing), batch_size), desc=self.title, show=show_progress):
            rows = missing[start : start + batch_size]
            pictures = [open_image(images[i], name=f"images[{i}]").convert("RGB") for i in rows]
            generated = self.judge.generate([prompts[i] for i in rows], pictures, stop=TEMPLATES[self.template].stop,
                                            max_new_tokens=self.max_new_tokens, dtype=getattr(torch, self.dtype))
            for i, generation in zip(rows, generated):
                answers[i] = read(generation)
                if cache is not None:
                    cache.put(keys[i], answers[i])  # type: ignore[arg-type]  # just read
        self.usage["generated"] = self.usage.get("generated", 0) + len(missing)
        self.usage["answers_from_cache"] = self.usage.get("answers_from_cache", 0) + len(prompts) - len(missing)
        return answers  # type: ignore[return-value]  # every None was filled

    def rated(self, generation: Generation) -> dict[str, Any]:
        """The first turn's answer and its smoothed rating (``None`` where the released code cannot score it)."""
        rating = smoothed_score(self.answer_text(generation), generation.ids, generation.logits, self.judge.digit_ids,
                                search_start=self.search_start)
        return {"answer": generation.text_without_special.strip(), "rating": rating}

    def provenance(self) -> dict[str, Any]:
        """As every scorer's, with the last call's answers generated and read from the cache."""
        return {**super().provenance(), "usage": dict(self.usage)}

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """The smoothed rating of each caption (NaN, named in an :class:`UnscoredAnswerWarning`, where the answer
        cannot be scored); the details hold each answer and, with ``explain``, the explanation."""
        if images is None:
            raise ValueError(f"{self.title} rates captions against images: pass images=[...] (one per caption)")
        batch_size, self.usage = batch_size or BATCH_SIZE, {}
        candidates = [collapse_whitespace(p) for p in predictions]
        instructions = [self.instruction(c, None if references is None else references[i]) for i, c in enumerate(candidates)]
        first = self.answered([render_prompt(self.template, [(text, None)]) for text in instructions], images, self.rated,
                              batch_size, show_progress)
        ratings = [answer["rating"] for answer in first]
        details: dict[str, list] = {"answer": [answer["answer"] for answer in first], "unscored": [r is None for r in ratings]}
        if self.explain:
            # The released second turn: the first answer replaced by the printed smoothed score and the end token (the
            # released code stops at an answer it cannot score: no explanation there).
            scored = [i for i, rating in enumerate(ratings) if rating is not None]
            turns = [render_prompt(self.template, [(instructions[i], f"{ratings[i]}</s>"), (self.explanation_prompt(candidates[i]), None)])
                     for i in scored]
            second = self.answered(turns, [images[i] for i in scored], lambda g: {"explanation": self.explanation(g)},
                                   batch_size, show_progress)
            given = {i: answer["explanation"] for i, answer in zip(scored, second)}
            details["explanation"] = [given.get(i) for i in range(len(ratings))]
        unscored = [i for i, rating in enumerate(ratings) if rating is None]
        if unscored:
            named = "; ".join(f"predictions[{i}] answered {details['answer'][i][:40]!r}" for i in unscored)
            warnings.warn(f"{self.title}: the judge's answer to {len(unscored)} caption(s) gives no rating the released code "
                          f"can score (the released code fails, reuses the previous caption's score or skips the caption "
                          f"there); their scores are NaN and the corpus value leaves them out: {named}",
                          UnscoredAnswerWarning, stacklevel=3)
        values = [math.nan if rating is None else rating for rating in ratings]
        return Scores({self.primary: values}, corpus={self.primary: mean_defined(values)}, details=details)

    @classmethod
    def module_usage(cls, *, references: str | None, example_options: str, example_scores: str) -> str:
        """The inputs description of a LLaVA judge's evaluate module (``metrics/fleur``, ``metrics/expert``: the same
        inputs and columns), with a runnable example in which a scripted tiny Llava (it always answers "0.7") stands in
        for the judge; ``references``: what they are for (``None``: the judge takes none), ``example_options``: the
        ``capeval.load`` options beside the stand-in, ``example_scores``: its scores."""
        references_line = "" if references is None else f"\n    references (list of list of str, optional): {references}."
        return f"""
Args:
    predictions (list of str): candidate captions.{references_line}
    images (list): one image per caption (path, bytes, PIL image or datasets.Image value); required.
    batch_size (int, optional): captions per generate() call (default {BATCH_SIZE}).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    {cls.primary} (float): mean smoothed rating over the captions whose answer could be scored.
    scores (list of float): per caption, in [0, 1]; NaN where the answer gives no rating.
    answer (list of str): the judge's answer; unscored (list of bool); explanation (with explain=True).
    hashcode (str): judge model, options and capeval version.

Examples:
    A scripted tiny Llava (it always answers "0.7") stands in for the judge here:

    >>> import tempfile
    >>> import capeval
    >>> from capeval.backbones.llava import save_scripted_llava
    >>> from capeval.samples import sample_image
    >>> judge = capeval.load("{cls.primary}", model=save_scripted_llava(tempfile.mkdtemp()), {example_options}device="cpu")
    >>> results = judge.compute(predictions=["a dog runs across the grass"], images=[str(sample_image())])
    >>> [round(s, 4) for s in results["scores"]], results["answer"]
    ({example_scores}, ['0.7'])
"""


class FleurScorer(LlavaJudgeScorer):
    """FLEUR (reference-free) or, with ``reference_based=True``, RefFLEUR: LLaVA-1.5 rates each caption 0.0–1.0
    with the released prompt and ``llava_v1`` conversation; the rating smoothed over its digits' probabilities.

    Example (a tiny random Llava stands in for LLaVA-1.5-13B; ``metrics/fleur`` has the module):
        >>> import tempfile
        >>> from capeval.backbones.llava import save_scripted_llava
        >>> from capeval.samples import sample_image
        >>> model = save_scripted_llava(tempfile.mkdtemp())
        >>> out = FleurScorer(model, device="cpu").score(["a dog runs"], images=[str(sample_image())])
        >>> round(out["fleur"][0], 4), out.details["answer"]
        (0.5661, ['0.7'])
    """

    metric, title = "fleur", "FLEUR"
    name = primary = "fleur"
    default_models = "LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf, the transformers conversion of liuhaotian/llava-v1.5-13b)"
    faithful_to = ("Yebin46/FLEUR `fleur.py`, `reffleur.py`, `fleur_exp.py` at b9cd6c9c: prompts, conversation, padding and "
                   "score smoothing (to 1e-6 on synthetic answers)")
    needs_references = False
    references_optional = True
    template = "llava_v1"

    def __init__(self, model: Annotated[str, Opt("hub id or folder of a transformers Llava checkpoint (LLaVA-1.5-13B in the "
                                                 "paper)", check=path_option)] = DEFAULT_LLAVA,
                 *, reference_based: Annotated[bool, Opt("RefFLEUR: the released reffleur.py prompt with the references, "
                                                         "joined by newlines")] = False,
                 explain: Annotated[bool, Opt("ask fleur_exp.py's second turn (\"Why? Tell me the reason.\") and put the "
                                              "answer in the details' `explanation`")] = False,
                 max_new_tokens: MaxNewTokens = MAX_NEW_TOKENS, cache: AnswerCache = True, device: Device = None,
                 dtype: WeightDtype = None):
        super().__init__(model, None, explain, max_new_tokens, cache, device, dtype)
        self.reference_based = reference_based
        self.needs_references = reference_based

    def options(self) -> dict[str, Any]:
        return {**super().options(), **({"reference_based": True} if self.reference_based else {})}

    def instruction(self, candidate: str, references: Sequence[str] | None) -> str:
        if self.reference_based:
            return REFFLEUR_PROMPT.format(references="\n".join(references or ()), candidate=candidate)
        return FLEUR_PROMPT.format(candidate=candidate)

    def explanation_prompt(self, candidate: str) -> str:
        return FLEUR_EXPLANATION_PROMPT

    def answer_text(self, generation: Generation) -> str:
        return fleur_answer_text(generation.text)
