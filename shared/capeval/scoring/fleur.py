"""FLEUR and RefFLEUR (Lee et al., ACL 2024): LLaVA-1.5 rates a caption from 0.0 to 1.0 and the printed rating is
smoothed over the probabilities of its digits, as the released code (Yebin46/FLEUR ``fleur.py``, ``reffleur.py``)
computes it. EXPERT (:mod:`capeval.scoring.expert`) smooths its rating with the same arithmetic.

:func:`smoothed_score` carries the arithmetic, checked against the released code without a model
(``scripts/build_llava_judge_goldens.py``).
"""

from __future__ import annotations

import re
from typing import Sequence

import torch


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
