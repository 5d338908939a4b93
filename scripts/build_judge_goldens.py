#!/usr/bin/env python
"""Build ``tests/assets/judges/*.json``: what the released CLAIR and G-VEval code returns for synthetic judge
answers, and the prompts and requests it sends, run from checkouts of their repositories at the pinned commits.

Only the network clients are stubbed (``grazier.LLMEngine`` for CLAIR; ``openai.AsyncOpenAI``, with ``dotenv``
and ``cv2`` that the scorer imports but these calls never use, for G-VEval): the stub returns the synthetic answer
and records what it was asked. The released code itself is imported from the checkouts, never copied here.

    git clone https://github.com/DavidMChan/clair /tmp/clair && git -C /tmp/clair checkout 429fa8b90e89b04fc7315ea853ab1838b182cb77
    git clone https://github.com/ztangaj/gveval /tmp/gveval && git -C /tmp/gveval checkout fee3fd7e758f5395f82c1a9426bec2c227824b59
    python scripts/build_judge_goldens.py --clair /tmp/clair --gveval /tmp/gveval
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import importlib
import io
import json
import math
import random
import sys
import types
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "assets" / "judges"
sys.path.insert(0, str(REPO / "shared"))
from capeval.scoring.clair import RELEASED_COMMIT as CLAIR_COMMIT  # noqa: E402
from capeval.scoring.gveval import RELEASED_COMMIT as GVEVAL_COMMIT  # noqa: E402

#: Answers covering every branch of the released parse (JSON, the number fallback, the retry).
CLAIR_ANSWERS = [
    '{"score": 85, "reason": "same dog"}',
    'Sure! {"score": 72.5, "reason": "mostly the same"} Hope this helps.',
    '{"score": 0.8, "reason": "normalised by the model"}',
    "0.8",
    "Score: -20. Reason: none",
    '{"score": 150}',
    '{"score": "85", "reason": "a string score"}',
    '{"score": true}',
    '{"score": 1e2, "reason": "exponent"}',
    '{"score": 0, "reason": "different images"}',
    '{"score": 55, "reason": 7}',
    '{"score": 55, "reason": null}',
    '{"reason": "no score key"} 42',
    "{score: 85, reason: unquoted}",
    '{"score": 90, "reason": "a {nested} brace"}',
    "The answer is .5",
    "score: 0.07",
    "REASON: looks fine\nscore 7",
    "reason",
    "{",
    "I cannot tell.",
    "",
    '{"score": null}',
    '{"score": "high"}',
    '{"score": [1]}',
]
CLAIR_PROMPTS = [
    (["a dog runs on the grass"], ["a dog running", "A brown dog plays outside."]),
    (["two cats", "a cat sleeping"], ["cats on a sofa"]),
]


def released_clair(checkout: Path):
    """The released ``clair`` function, with ``grazier`` stubbed by an engine that answers from ``answers``."""
    calls: list[dict] = []
    answers: list[str] = []

    class Engine:
        @staticmethod
        def from_string(name):
            def answer(prompt, **options):
                calls.append({"prompt": prompt, **options})
                return [answers[0]]
            return answer

    sys.modules["grazier"] = types.SimpleNamespace(LLMEngine=Engine)  # type: ignore[assignment]
    sys.path.insert(0, str(checkout))
    module = importlib.import_module("clair")
    return module, calls, answers


def clair_goldens(checkout: Path) -> dict:
    module, calls, answers = released_clair(checkout)
    rows = []
    for text in CLAIR_ANSWERS:
        answers[:] = [text]
        calls.clear()
        try:
            score, reason = module.clair(["a dog"], ["a puppy"])
            rows.append({"answer": text, "score": score, "reason": reason, "requests": len(calls)})
        except Exception as error:  # the released code raises for some JSON scores
            rows.append({"answer": text, "raises": type(error).__name__, "requests": len(calls)})
    prompts = []
    answers[:] = ['{"score": 50}']
    for candidates, references in CLAIR_PROMPTS:
        calls.clear()
        module.clair(candidates, references)
        prompts.append({"candidates": candidates, "references": references, "prompt": calls[0]["prompt"],
                        "options": {k: v for k, v in calls[0].items() if k != "prompt"}})
    return {"commit": CLAIR_COMMIT, "answers": rows, "prompts": prompts}


def entry(token: str, probability: float | None = None, logprob: float | None = None) -> dict:
    return {"token": token, "logprob": math.log(probability) if logprob is None else logprob}


def item(token: str, top: list[dict]) -> dict:
    return {"token": token, "logprob": top[0]["logprob"] if top else -1.0, "top_logprobs": top}


def gveval_contents() -> list[tuple[str, list[dict]]]:
    """Synthetic ``logprobs.content`` lists covering the released arithmetic and its failures."""
    lead = [item("The", [entry("The", 0.9)]), item(" final", [entry(" final", 0.8)]), item(" score is ", []),
            item(" $", [entry(" $", 0.99)])]
    tail = [item("$.", [entry("$.", 0.9)])]
    cases = [
        ("plain", lead + [item("85", [entry("85", 0.7), entry("80", 0.2), entry("90", 0.1)])] + tail),
        ("duplicate token: the last wins", lead + [item("85", [entry("85", 0.5), entry("85", 0.3), entry("90", 0.2)])] + tail),
        ("leading space ignored", lead + [item(" 85", [entry(" 85", 0.5), entry("85", 0.3), entry("90", 0.2)])] + tail),
        ("out of range and padded tokens ignored", lead + [item("100", [entry("100", 0.4), entry("101", 0.3),
                                                                           entry("085", 0.1), entry("-5", 0.1), entry("0", 0.1)])] + tail),
        ("first $ in the reasoning", [item("It costs", []), item(" $", []), item("5", [entry("5", 0.6), entry("six", 0.4)])]
         + lead + [item("85", [entry("85", 1.0)])] + tail),
        ("merged $ token", [item("is $$", []), item("40", [entry("40", 0.5), entry("60", 0.5)])]),
        ("one entry", lead + [item("7", [entry("7", 0.01)])] + tail),
        ("no $", [item("The score is 85.", [entry("The", 0.9)])]),
        ("$ last", lead),
        ("empty top log-probabilities", lead + [item("85", [])] + tail),
        ("every probability underflows", lead + [item("85", [entry("85", logprob=-1000.0), entry("90", logprob=-2000.0)])] + tail),
        ("no score token", lead + [item("eighty", [entry("eighty", 0.9), entry("Eighty", 0.1)])] + tail),
        ("empty content", []),
    ]
    generator = random.Random(34)
    for index in range(20):
        tokens = generator.sample(range(101), 5)
        logprobs = sorted((generator.uniform(-12, 0) for _ in tokens), reverse=True)
        top = [entry(str(token), logprob=value) for token, value in zip(tokens, logprobs)]
        cases.append((f"random {index}", lead + [item(str(tokens[0]), top)] + tail))
    return cases


def released_gveval(checkout: Path):
    """The released ``Scorer``, its package imported without ``evaluation/__init__.py`` (which imports the COCO
    toolkit), with the OpenAI client stubbed by one that answers from ``answer`` and records each request."""
    requests: list[dict] = []
    answer: dict = {}

    class Completions:
        async def create(self, **request):
            requests.append(request)
            logprobs = SimpleNamespace(content=[SimpleNamespace(
                token=i["token"], logprob=i["logprob"],
                top_logprobs=[SimpleNamespace(**t) for t in i["top_logprobs"]]) for i in answer["content"]])
            return SimpleNamespace(choices=[SimpleNamespace(logprobs=logprobs, message=SimpleNamespace(content="reason"))])

    class AsyncOpenAI:
        def __init__(self, api_key=None):
            self.chat = SimpleNamespace(completions=Completions())

    sys.modules["openai"] = types.SimpleNamespace(AsyncOpenAI=AsyncOpenAI)  # type: ignore[assignment]
    sys.modules["dotenv"] = types.SimpleNamespace(load_dotenv=lambda: None)  # type: ignore[assignment]
    sys.modules["cv2"] = types.ModuleType("cv2")
    package = types.ModuleType("evaluation")
    package.__path__ = [str(checkout / "evaluation")]
    sys.modules["evaluation"] = package
    module = importlib.import_module("evaluation.gveval.scorer")
    return module.Scorer(), requests, answer


def gveval_goldens(checkout: Path, image: Path) -> dict:
    scorer, requests, answer = released_gveval(checkout)
    rows = []
    for name, content in gveval_contents():
        answer["content"] = content
        requests.clear()
        with contextlib.redirect_stdout(io.StringIO()):  # the released code prints each failure
            result = asyncio.run(scorer.gveval(["a dog"], ["a puppy"], setting="ref-only"))
        rows.append({"case": name, "content": content, "score": None if result is None else result["final_score"],
                     "requests": len(requests)})
    answer["content"] = gveval_contents()[0][1]
    prompts = []
    for setting, with_image in (("ref-only", False), ("ref-only", True), ("ref-free", True), ("combined", True)):
        requests.clear()
        asyncio.run(scorer.gveval(["A man is playing a guitar."], ["A person plays an instrument.", "A man strums a guitar."],
                                  img=str(image) if with_image else None, setting=setting))
        prompts.append({"setting": setting, "image": with_image, "request": requests[0]})
    return {"commit": GVEVAL_COMMIT, "image_base64": base64.b64encode(image.read_bytes()).decode(), "contents": rows,
            "prompts": prompts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clair", type=Path, required=True, help="a checkout of DavidMChan/clair at the pinned commit")
    parser.add_argument("--gveval", type=Path, required=True, help="a checkout of ztangaj/gveval at the pinned commit")
    args = parser.parse_args()
    from PIL import Image

    OUT.mkdir(parents=True, exist_ok=True)
    image = OUT / "gveval_image.png"
    Image.new("RGB", (4, 3), (200, 30, 60)).save(image)
    for name, goldens in (("clair_released.json", clair_goldens(args.clair)),
                          ("gveval_released.json", gveval_goldens(args.gveval, image))):
        (OUT / name).write_text(json.dumps(goldens, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
