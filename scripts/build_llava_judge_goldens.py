#!/usr/bin/env python
"""Build the goldens of the LLaVA judges (FLEUR, RefFLEUR, EXPERT): what their released scripts compute, run
unchanged on synthetic model outputs.

Writes ``tests/assets/llava_judges/goldens.json`` (read by ``tests/metrics/fleur/`` and ``tests/metrics/expert/``;
CI never runs this script):

* ``smoothing``: per synthetic answer (generated token ids and per-step logits), the score the released
  ``fleur.py`` and ``expert.py`` compute, or how they fail (``"error"``: FLEUR's ``except`` branch, which reuses the
  previous caption's score; ``"skipped"``: a rating outside [0, 1], which the released loop skips; ``"raises"``:
  EXPERT stops), with the decoded text the released code parsed;
* ``prompts``: the prompts the released scripts render (FLEUR, RefFLEUR, FLEUR's explanation turn in
  ``fleur_exp.py``, EXPERT with and without its explanation turn), as they reach ``tokenizer_image_token``;
* ``padding``: synthetic images and LLaVA's ``pad`` square of each (``expand2square`` on the image processor's mean
  colour), as the released ``process_images`` made it;
* ``explanations``: EXPERT's ``parse_explanation`` of a few second-turn answers.

Usage (each checkout with its ``LLaVA`` submodule checked out at the commit the repository pins)::

    git clone https://github.com/Yebin46/FLEUR && git -C FLEUR checkout b9cd6c9c086113b9ad3d040522a85c776aff1225
    git -C FLEUR submodule update --init      # LLaVA ab58dc18a35d5312bcedd98a9d266231ddcb75a4
    git clone https://github.com/hjkim811/EXPERT && git -C EXPERT checkout 74bbef41209fce20551f2d707bc7642400d7eddf
    git -C EXPERT submodule update --init     # LLaVA c121f0432da27facab705978f83c4ada465e46fd
    python scripts/build_llava_judge_goldens.py --fleur FLEUR --expert EXPERT

The scripts run as they are, from their own files. Only what needs the model is replaced: ``load_pretrained_model``
returns a tokenizer over a 20-token vocabulary (digits, '.', '▁', words), a model whose ``generate`` replays the
planned answer with its logits (FLEUR's LLaVA returns the prompt's ids before the generated ones, as transformers
4.31 does for ``input_ids``; EXPERT's LLaVA passes ``inputs_embeds``, for which transformers 4.37.2 returns only the
generated ids) and an image processor with CLIP's normalisation mean whose ``preprocess`` returns zeros (only the
padded square is recorded); ``scipy.stats.kendalltau`` records the scores it is given; ``PIL.Image.open`` returns
the synthetic image of the file's name; ``.cuda()`` stays on the CPU. LLaVA's ``conversation``, ``constants`` and
``mm_utils`` are the submodule's own (the stopping criterion is a no-op: the replayed answer ends by itself).
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import PIL.Image
import torch

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "assets" / "llava_judges" / "goldens.json"
#: The fake tokenizer's vocabulary: ids 3..12 are the digits, as rate2token reads them (last id of encode("7")).
VOCAB = ["<unk>", "<s>", "</s>", *"0123456789", ".", "▁", "Score", ":", "good", "\n", "Fluency", "x"]
SPECIAL = {0, 1, 2}
#: OpenAI CLIP's normalisation mean, the image_mean of LLaVA-1.5's image processor (clip-vit-large-patch14-336).
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CAPTION = "A  dog runs   on the grass ."
REFERENCES = ["a dog running on grass", "a brown dog outside"]
SEED = 0


def tokens(*pieces: str) -> list[int]:
    return [VOCAB.index(piece) for piece in pieces]


#: name -> generated tokens (FLEUR's decoding keeps the end token; EXPERT's slices off the first generated id).
ANSWERS = {
    "0.0": ("▁", "0", ".", "0", "</s>"),
    "0.05": ("▁", "0", ".", "0", "5", "</s>"),
    "0.5": ("▁", "0", ".", "5", "</s>"),
    "0.55": ("▁", "0", ".", "5", "5", "</s>"),
    "0.75": ("▁", "0", ".", "7", "5", "</s>"),
    "1.0": ("▁", "1", ".", "0", "</s>"),
    "0.66 repeated digit": ("▁", "0", ".", "6", "6", "</s>"),
    "0.00 three zeros": ("▁", "0", ".", "0", "0", "</s>"),
    "0.10 trailing zero": ("▁", "0", ".", "1", "0", "</s>"),
    "0.505": ("▁", "0", ".", "5", "0", "5", "</s>"),
    "0.0001": ("▁", "0", ".", "0", "0", "0", "1", "</s>"),
    "0.00001 prints 1e-05": ("▁", "0", ".", "0", "0", "0", "0", "1", "</s>"),
    "Score: 0.8 with words": ("▁", "Score", ":", "▁", "0", ".", "8", "</s>"),
    "0.3 without a leading space": ("0", ".", "3", "</s>"),
    "1 without decimals": ("▁", "1", "</s>"),
    "unparseable": ("▁", "good", "</s>"),
    "no end token": ("▁", "0", ".", "7"),
    "5.0 out of range": ("▁", "5", ".", "0", "</s>"),
    "dots only": ("▁", ".", ".", "</s>"),
    "1.0 then a cut 1": ("▁", "1", ".", "0", "\n", "1"),
    "1.0 without a leading space": ("1", ".", "0", "</s>"),
}
#: Second-turn answers for the explanation prompts.
EXPLANATION = ("▁", "Fluency", ":", "▁", "good", "</s>")
EXPERT_EXPLANATIONS = [
    "Fluency: fluent.\nRelevance: matches the image.\nDescriptiveness: brief.",
    "Fluency:   ok\nRelevance:\nDescriptiveness: x\ny",
    "Relevance: only one part",
]


def synthetic_images() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    sizes = {"wide.png": (5, 8), "tall.png": (9, 4), "square.png": (6, 6), "odd.png": (3, 6), "thin.png": (1, 7)}
    return {name: rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for name, (h, w) in sizes.items()}


def answer_logits(ids: list[int], rng: np.random.Generator) -> np.ndarray:
    """Per-step logits where each step's token is the most likely, the digits close behind it."""
    logits = rng.normal(0.0, 1.0, (len(ids), len(VOCAB))).astype(np.float32)
    for step, token in enumerate(ids):
        logits[step, 3:13] += rng.uniform(0.5, 2.5, 10).astype(np.float32)
        logits[step, token] = logits[step].max() + np.float32(rng.uniform(0.1, 1.0))
    return logits


class FakeTokenizer:
    bos_token_id = 1

    def encode(self, text: str) -> list[int]:
        return [1, VOCAB.index("▁"), *(VOCAB.index(ch) for ch in text)]

    def __call__(self, text: str) -> SimpleNamespace:
        return SimpleNamespace(input_ids=[1] + [VOCAB.index("x")] * max(1, len(text) // 8))

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return "".join(VOCAB[i] for i in ids.tolist() if not (skip_special_tokens and i in SPECIAL)).replace("▁", " ")

    def batch_decode(self, sequences, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(row, skip_special_tokens) for row in sequences]


class Recorder:
    """What the fake model and the stubs saw, and the answers they replay."""

    def __init__(self, prompt_in_sequences: bool):
        self.prompt_in_sequences = prompt_in_sequences
        self.queue: list[tuple[list[int], np.ndarray]] = []
        self.prompts: list[str] = []
        self.padded: list[np.ndarray] = []
        self.decoded: list[str] = []
        self.kendall: list[list[float]] = []
        self.printed: list[str] = []

    def generate(self, input_ids, images=None, **kwargs):
        ids, logits = self.queue.pop(0)
        generated = torch.tensor([ids])
        sequences = torch.cat([input_ids, generated], 1) if self.prompt_in_sequences else generated
        return SimpleNamespace(sequences=sequences, scores=tuple(torch.from_numpy(row)[None] for row in logits))


def llava_modules(llava_dir: Path, recorder: Recorder) -> dict[str, types.ModuleType]:
    """The submodule's own constants, conversation and mm_utils, with the model-loading modules stubbed."""
    for name in [n for n in sys.modules if n == "llava" or n.startswith("llava.")]:
        del sys.modules[name]
    package = types.ModuleType("llava")
    package.__path__ = [str(llava_dir)]  # its __init__ would import the model
    sys.modules["llava"] = package
    import importlib

    constants = importlib.import_module("llava.constants")
    conversation = importlib.import_module("llava.conversation")
    mm_utils = importlib.import_module("llava.mm_utils")
    released_tokenizer_image_token = mm_utils.tokenizer_image_token
    released_expand2square = mm_utils.expand2square

    def tokenizer_image_token(prompt, tokenizer, *args, **kwargs):
        recorder.prompts.append(prompt)
        return released_tokenizer_image_token(prompt, tokenizer, *args, **kwargs)

    def expand2square(image, background):
        padded = released_expand2square(image, background)
        recorder.padded.append(np.asarray(padded))
        return padded

    mm_utils.tokenizer_image_token = tokenizer_image_token
    mm_utils.expand2square = expand2square
    mm_utils.KeywordsStoppingCriteria = lambda *args: None

    image_processor = SimpleNamespace(image_mean=CLIP_MEAN,
                                      preprocess=lambda image, return_tensors: {"pixel_values": torch.zeros(1, 3, 2, 2)})
    tokenizer = FakeTokenizer()
    released_decode, released_batch_decode = tokenizer.decode, tokenizer.batch_decode

    def decode(ids, skip_special_tokens=False):
        text = released_decode(ids, skip_special_tokens)
        recorder.decoded.append(text)
        return text

    def batch_decode(sequences, skip_special_tokens=False):
        texts = released_batch_decode(sequences, skip_special_tokens)
        recorder.decoded.append(texts[0])
        return texts

    tokenizer.decode, tokenizer.batch_decode = decode, batch_decode  # type: ignore[method-assign]
    model = SimpleNamespace(device="cpu", config=SimpleNamespace(mm_use_im_start_end=False), generate=recorder.generate)
    builder = types.ModuleType("llava.model.builder")
    builder.load_pretrained_model = lambda *args, **kwargs: (tokenizer, model, image_processor, 2048)  # type: ignore[attr-defined]
    utils = types.ModuleType("llava.utils")
    utils.disable_torch_init = lambda: None  # type: ignore[attr-defined]
    stubs = {"llava.model": types.ModuleType("llava.model"), "llava.model.builder": builder, "llava.utils": utils,
             "LLaVA": types.ModuleType("LLaVA"), "LLaVA.llava": package}
    stats = types.ModuleType("scipy.stats")

    def kendalltau(ours, human, variant="b"):
        recorder.kendall.append([float(x) for x in ours])
        return (0.0, 0.0)

    stats.kendalltau = kendalltau  # type: ignore[attr-defined]
    scipy = types.ModuleType("scipy")
    scipy.stats = stats  # type: ignore[attr-defined]
    stubs.update({"scipy": scipy, "scipy.stats": stats})
    sys.modules.update(stubs)
    return {"constants": constants, "conversation": conversation, "mm_utils": mm_utils}


@contextlib.contextmanager
def released_environment(folder: Path, images: dict[str, np.ndarray]):
    """cwd in a scratch folder; ``PIL.Image.open`` by file name; ``.cuda()`` a no-op."""
    previous_open, previous_cuda, previous_cwd = PIL.Image.open, torch.Tensor.cuda, os.getcwd()
    PIL.Image.open = lambda path, *args: PIL.Image.fromarray(images[os.path.basename(path)])  # type: ignore[assignment]
    torch.Tensor.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous_cwd)
        PIL.Image.open, torch.Tensor.cuda = previous_open, previous_cuda  # type: ignore[method-assign]


def flickr_file(folder: Path, image: str, caption: str, references: list[str]) -> Path:
    """A one-caption Flickr8k-style annotation file: three ratings of the same pair (the released FLEUR loop
    scores every third row)."""
    path = folder / "flickr8k.json"
    judgements = [{"rating": 1.0 + k, "image_path": image, "caption": caption} for k in range(3)]
    path.write_text(json.dumps({"0": {"human_judgement": judgements, "ground_truth": references}}))
    return path


def run_script(source: Path, call, recorder: Recorder, redirect: dict[str, str] | None = None) -> dict:
    """Exec a released script as a module and run ``call(namespace)``; how it ended."""
    namespace: dict = {"__name__": "released", "__file__": str(source)}

    def record_print(*args, **kwargs):
        recorder.printed.append(" ".join(map(str, args)))

    def redirected_open(path, *args, **kwargs):
        for prefix, target in (redirect or {}).items():
            if str(path).startswith(prefix):
                path = target + str(path)[len(prefix):]
        return builtins.open(path, *args, **kwargs)

    namespace.update(print=record_print, open=redirected_open)
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    try:
        call(namespace)
    except Exception as error:  # the released code's own failure is the golden
        return {"raised": f"{type(error).__name__}: {error}"}
    return {}


def fleur_runs(checkout: Path, images: dict[str, np.ndarray], rng: np.random.Generator, scratch: Path) -> dict:
    recorder = Recorder(prompt_in_sequences=True)
    llava_modules(checkout / "LLaVA" / "llava", recorder)
    smoothing, prompts = {}, {}
    args = SimpleNamespace(base_fold=str(scratch), image_aspect_ratio="pad")
    flickr_file(scratch, "wide.png", CAPTION, REFERENCES)
    for name, pieces in ANSWERS.items():
        ids = tokens(*pieces)
        logits = answer_logits(ids, rng)
        recorder.queue.append((ids, logits))
        recorder.printed.clear()
        recorder.kendall.clear()
        with released_environment(scratch, images):
            ended = run_script(checkout / "fleur.py", lambda ns: ns["compute_human_correlation"]("flickr8k.json", args, "c"), recorder)
        if "Error!" in recorder.printed:
            outcome = "error"
        elif recorder.kendall and recorder.kendall[0]:
            outcome = recorder.kendall[0][0]
        else:
            outcome = "skipped"
        smoothing[name] = {"generated_ids": ids, "step_logits": logits.tolist(), "decoded": recorder.decoded[-1],
                           "fleur": outcome, **({"fleur_raised": ended["raised"]} if ended else {})}
    prompts["fleur"] = recorder.prompts[0]

    recorder.queue.append((tokens(*ANSWERS["0.75"]), answer_logits(tokens(*ANSWERS["0.75"]), rng)))
    with released_environment(scratch, images):
        run_script(checkout / "reffleur.py", lambda ns: ns["compute_human_correlation"]("flickr8k.json", args, "c"), recorder)
    prompts["reffleur"] = recorder.prompts[-1]

    first = tokens(*ANSWERS["0.75"])
    first_logits = answer_logits(first, rng)
    recorder.queue += [(first, first_logits), (tokens(*EXPLANATION), answer_logits(tokens(*EXPLANATION), rng))]
    exp_args = SimpleNamespace(model_path="liuhaotian/llava-v1.5-13b", model_base=None, device="cuda", conv_mode="llava_v1",
                               temperature=0.2, image_aspect_ratio="pad")
    (scratch / "results").mkdir(exist_ok=True)
    with released_environment(scratch, images):
        run_script(checkout / "fleur_exp.py", lambda ns: ns["main"](exp_args), recorder,
                   redirect={"/home/parkis/temp/FLEUR/annotations": str(scratch)})
    prompts["fleur_explanation"] = {"first_answer": {"generated_ids": first, "step_logits": first_logits.tolist()},
                                    "turns": recorder.prompts[-2:], "explanation": recorder.decoded[-1]}
    padded = recorder.padded[0]
    return {"smoothing": smoothing, "prompts": prompts, "padded_wide": padded.tolist()}


def expert_runs(checkout: Path, images: dict[str, np.ndarray], smoothing: dict, rng: np.random.Generator, scratch: Path) -> dict:
    recorder = Recorder(prompt_in_sequences=False)
    modules = llava_modules(checkout / "LLaVA" / "llava", recorder)
    flickr_file(scratch, "tall.png", CAPTION, REFERENCES)
    (scratch / "results").mkdir(exist_ok=True)

    def args(explanation: bool) -> SimpleNamespace:  # the released defaults
        return SimpleNamespace(model_path="hjkim811/EXPERT-llava-13b-lora", model_base="liuhaotian/llava-v1.5-13b",
                               base_fold=str(scratch), input_json="flickr8k.json", pascal_category="HC",
                               result_fold=str(scratch / "results"), conv_mode="llava_v1", image_aspect_ratio="pad",
                               explanation=explanation, print_logs=False)

    result_file = scratch / "results" / "EXPERT-llava-13b-lora_flickr8k.json"
    for name, case in smoothing.items():
        recorder.queue.append((case["generated_ids"], np.asarray(case["step_logits"], dtype=np.float32)))
        result_file.unlink(missing_ok=True)
        with released_environment(scratch, images):
            ended = run_script(checkout / "expert.py", lambda ns: ns["main"](args(False)), recorder)
        recorder.queue.clear()
        results = json.loads(result_file.read_text()) if result_file.exists() else []
        if ended:
            outcome = "raises"
        else:
            outcome = results[0]["expert_score"]
        case.update({"expert": outcome, "expert_decoded": recorder.decoded[-1],
                     **({"expert_raised": ended["raised"]} if ended else {})})
    prompts = {"expert": recorder.prompts[0]}

    first = tokens(*ANSWERS["0.55"])
    first_logits = answer_logits(first, rng)
    second = tokens(*EXPLANATION)
    recorder.queue += [(first, first_logits), (second, answer_logits(second, rng))]
    with released_environment(scratch, images):
        run_script(checkout / "expert.py", lambda ns: ns["main"](args(True)), recorder)
    explained = json.loads((scratch / "results" / "EXPERT-llava-13b-lora_exp_flickr8k.json").read_text())[0]
    prompts["expert_explanation"] = {"first_answer": {"generated_ids": first, "step_logits": first_logits.tolist()},
                                     "turns": recorder.prompts[-2:], "result": explained}
    namespace: dict = {"__name__": "released", "print": lambda *a, **k: None}
    exec(compile((checkout / "expert.py").read_text(), "expert.py", "exec"), namespace)
    explanations = [[text, namespace["parse_explanation"](text)] for text in EXPERT_EXPLANATIONS]
    mean_colour = [int(x * 255) for x in CLIP_MEAN]
    padded = {}
    for name, pixels in images.items():
        padded[name] = np.asarray(modules["mm_utils"].expand2square(PIL.Image.fromarray(pixels), tuple(mean_colour))).tolist()
    return {"prompts": prompts, "explanations": explanations, "padded": padded, "padded_tall": recorder.padded[0].tolist()}


def git_head(checkout: Path) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fleur", type=Path, required=True, help="checkout of Yebin46/FLEUR with its LLaVA submodule")
    parser.add_argument("--expert", type=Path, required=True, help="checkout of hjkim811/EXPERT with its LLaVA submodule")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    images = synthetic_images()
    rng = np.random.default_rng(SEED)
    with tempfile.TemporaryDirectory() as scratch:
        fleur = fleur_runs(args.fleur.resolve(), images, rng, Path(scratch))
    with tempfile.TemporaryDirectory() as scratch:
        expert = expert_runs(args.expert.resolve(), images, fleur["smoothing"], rng, Path(scratch))
    golden = {
        "commits": {name: {"repo": git_head(path), "LLaVA": git_head(path / "LLaVA")}
                    for name, path in (("FLEUR", args.fleur), ("EXPERT", args.expert))},
        "vocab": VOCAB, "digit_ids": [VOCAB.index(d) for d in "0123456789"], "caption": CAPTION, "references": REFERENCES,
        "clip_mean": CLIP_MEAN, "images": {name: pixels.tolist() for name, pixels in images.items()},
        "smoothing": fleur["smoothing"], "prompts": {**fleur["prompts"], **expert["prompts"]},
        "explanations": expert["explanations"], "padded": expert["padded"],
        "padded_in_runs": {"fleur wide.png": fleur["padded_wide"], "expert tall.png": expert["padded_tall"]},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
