"""CHAIR over 5,000 captions on one core: capeval against a released chair.py, run in the same process.

The captions are one system's 5,000 COCO Karpathy-test captions bundled with capeval (``--captions coco``, about 10
words), or, for each image, the five references of the next image joined into one five-sentence paragraph
(``--captions long``, about 42 words, the length of a short multimodal-LLM description; most of its objects are
hallucinated). Their ground truth comes from a COCO annotation folder the script
writes to a temporary folder: each image's references as ``captions_val2014.json``, and instance files with the 80
categories but no instances (the bundled data has none), plus the empty train2014 files the released code requires.

Both sides score the same captions twice in this process: *cold* is the first call (reading the annotation folder,
building the ground truth and loading the tokenizer, tagger and WordNet data: the released code's ``CHAIR(...)`` and
``compute_chair``), *warm* the second (capeval's scorer and the released evaluator object reused, as OPERA's pickled
evaluator is). NLTK and numpy are imported before any timing. The mentions, CHAIR_s and CHAIR_i of every caption are
checked equal between the two sides.

``--released PATH`` is a copy of the released file, which the repository does not hold:
- ``--port original``: LisaAnne/Hallucination ``utils/chair.py`` (Python 2: make its three ``print`` statements calls;
  it imports ``os`` from ``utils/misc.py``, which may be a one-line ``import os``; ``data/synonyms.txt`` must be beside
  ``utils/``). It needs ``pattern.en`` (Pattern 3.6) and NLTK's ``punkt_tab``.
- ``--port maxlinn``: Maxlinn/CHAIR-metric-standalone ``chair.py`` (Pattern, as the original);
- ``--port opera``: shikiw/OPERA ``chair.py`` (NLTK's POS tagger and WordNet).
``--tagger-pickle`` (opera only) replaces NLTK's tagger weights on both sides by a pickled ``(weights, tagdict,
classes)`` of the same averaged-perceptron kind (e.g. textblob-aptagger's ``trontagger-0.1.0.pickle``), where NLTK's
own weights are not installed: the timing is then that of NLTK's tagging code with another model of its size.

Usage: python speed/bench_chair.py [--captions coco|long] [--variant original|opera] [--released PATH --port ...]
       [--tagger-pickle PATH] [--core 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed  # noqa: E402


def cpu_timed(function):
    """``(value, wall seconds, CPU seconds)``: on a loaded machine the CPU time of this process moves less than its wall time."""
    before = os.times()
    value, seconds = timed(function)
    after = os.times()
    return value, seconds, after.user + after.system - before.user - before.system


def caption_set(kind: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(captions, COCO file names, references) of the 5,000 Karpathy-test images."""
    from importlib import resources

    import pandas as pd

    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden[golden.system == golden.system.iloc[0]]
    references = [list(r) for r in golden.references]
    captions = list(golden.candidate) if kind == "coco" else [" ".join(r) for r in references[1:] + references[:1]]
    return captions, list(golden.image_id), references


def image_id(file_name: str) -> int:
    return int(file_name.rsplit("_", 1)[1].split(".")[0])


def write_annotations(folder: Path, files: list[str], references: list[list[str]]) -> None:
    from capeval.scoring.chair import COCO_SYNONYMS

    info = {"description": "bench_chair"}
    categories = [{"id": i, "name": name, "supercategory": ""} for i, name in enumerate(COCO_SYNONYMS, 1)]
    images = [{"id": image_id(f), "file_name": f} for f in files]
    captions = [{"id": i, "image_id": image_id(f), "caption": c} for i, (f, refs) in enumerate(zip(files, references)) for c in refs]
    for split, split_images, split_captions in (("val", images, captions), ("train", [], [])):
        base = {"info": info, "licenses": [], "images": split_images}
        (folder / f"captions_{split}2014.json").write_text(json.dumps({**base, "annotations": split_captions}))
        (folder / f"instances_{split}2014.json").write_text(json.dumps({**base, "annotations": [], "categories": categories}))


def stand_in_tagger(path: str):
    """NLTK's PerceptronTagger with the pickled weights, and capeval's batched tagger with the same."""
    from nltk.tag.perceptron import PerceptronTagger

    from capeval.text.english import PerceptronTags

    with open(path, "rb") as handle:
        weights, tagdict, classes = pickle.load(handle, encoding="latin1")
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict = weights, tagdict
    tagger.classes = tagger.model.classes = set(classes)
    return tagger, PerceptronTags(weights, tagdict, classes)


def capeval_side(variant: str, folder: Path, captions: list[str], files: list[str]):
    from capeval.scoring.chair import ChairScorer

    scorer = ChairScorer(variant=variant, annotations=str(folder))
    return [cpu_timed(lambda: scorer.score(captions, images=files, show_progress=False)) for _ in range(2)]


def released_side(path: str, port: str, folder: Path, captions: list[str], files: list[str], work: Path):
    """The released module's (evaluator build +) compute_chair, twice on one evaluator; its per-caption outputs."""
    import contextlib
    import io

    source = Path(path).resolve()
    if port == "original":
        os.chdir(source.parent.parent)  # it reads data/synonyms.txt from there
        sys.path.insert(0, str(source.parent))
    spec = importlib.util.spec_from_file_location(f"released_chair_{port}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    quiet = contextlib.redirect_stdout(io.StringIO())
    if port == "original":
        cap_file = work / "captions.json"
        zeros = dict.fromkeys(("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "CIDEr", "SPICE", "ROUGE_L"), 0.0)
        cap_file.write_text(json.dumps({"overall": zeros, "imgToEval": {
            str(image_id(f)): {"image_id": image_id(f), "caption": c, **zeros} for c, f in zip(captions, files)}}))

        def build():
            _, ids, _ = module.load_generated_captions(str(cap_file))
            evaluator = module.CHAIR(ids, str(folder))
            evaluator.get_annotations()
            return evaluator

        def compute(evaluator):
            return evaluator.compute_chair(str(cap_file))
    else:
        cap_file = work / "captions.jsonl"
        cap_file.write_text("".join(json.dumps({"image_id": image_id(f), "caption": c}) + "\n" for c, f in zip(captions, files)))

        def build():
            return module.CHAIR(str(folder))

        def compute(evaluator):
            return evaluator.compute_chair(str(cap_file), "image_id", "caption")
    with quiet, contextlib.redirect_stderr(io.StringIO()):
        (evaluator, output), *cold = cpu_timed(lambda: (lambda e: (e, compute(e)))(build()))
        output_warm, *warm = cpu_timed(lambda: compute(evaluator))
    by_image = {s["image_id"]: s for s in output["sentences"]}  # the original keys its output by image
    return [(output, *cold), (output_warm, *warm)], [by_image[image_id(f)] for f in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--captions", choices=("coco", "long"), default="coco")
    parser.add_argument("--variant", choices=("original", "opera"), default="original")
    parser.add_argument("--released", help="a copy of the released chair.py (see the module docstring)")
    parser.add_argument("--port", choices=("original", "maxlinn", "opera"), default="original")
    parser.add_argument("--tagger-pickle", help="stand-in weights for NLTK's tagger, on both sides")
    parser.add_argument("--core", type=int, default=0, help="the one core to run on")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    import nltk  # noqa: F401  (both sides import NLTK and numpy: not timed)
    import numpy  # noqa: F401

    captions, files, references = caption_set(args.captions)
    if args.tagger_pickle:
        import capeval.scoring.chair as chair

        nltk_tagger, batched = stand_in_tagger(args.tagger_pickle)
        nltk.pos_tag = lambda tokens, tagset=None, lang="eng": nltk_tagger.tag(tokens)
        chair.pos_tagger = lambda: batched
    print(f"CHAIR, variant {args.variant}, {len(captions)} captions ({args.captions}, "
          f"{sum(len(c.split()) for c in captions) / len(captions):.1f} words each), core {args.core}, "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work) / "annotations"
        folder.mkdir()
        write_annotations(folder, files, references)
        ours = capeval_side(args.variant, folder, captions, files)
        for label, (scores, seconds, cpu) in zip(("cold", "warm"), ours):
            print(f"  capeval  {label}: {seconds:6.2f} s (CPU {cpu:6.2f} s)   CHAIR_s {scores.corpus['chair_s']:.4f}  "
                  f"CHAIR_i {scores.corpus['chair_i']:.4f}")
        if args.released:
            theirs, sentences = released_side(args.released, args.port, folder, captions, files, Path(work))
            for label, (output, seconds, cpu), (_, mine, my_cpu) in zip(("cold", "warm"), theirs, ours):
                metrics = output["overall_metrics"]
                print(f"  released {label}: {seconds:6.2f} s (CPU {cpu:6.2f} s)   CHAIR_s {metrics['CHAIRs']:.4f}  "
                      f"CHAIR_i {metrics['CHAIRi']:.4f}   ratio {seconds / mine:.1f}x (CPU {cpu / my_cpu:.1f}x)")
            scores = ours[0][0]
            equal = (scores.details["mentioned_objects"] == [s["mscoco_generated_words"] for s in sentences]
                     and scores["chair_s"] == [float(s["metrics"]["CHAIRs"]) for s in sentences]
                     and scores["chair_i"] == [s["metrics"]["CHAIRi"] for s in sentences])
            print(f"  every caption's mentions, CHAIR_s and CHAIR_i equal: {equal}")
    print(f"load average after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
