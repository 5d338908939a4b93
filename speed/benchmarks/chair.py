"""CHAIR over 5,000 captions on one core against a released ``chair.py``, each side in its own process: cold (the first
call: reading the annotation folder, building the ground truth of 25,000 reference captions, loading the tokenizer,
tagger and WordNet data) and warm (a second call on the same scorer, or on the released evaluator object, as OPERA's
pickled evaluator is reused). Every caption's mentions, CHAIR_s and CHAIR_i are compared.

The captions are one system's 5,000 Karpathy-test captions (``coco``, about 10 words) or, for each image, the five
references of the next image joined into one paragraph (``long``, about 42 words, most of its objects hallucinated).
Their ground truth is a COCO annotation folder written for the run: each image's references as
``captions_val2014.json``, instance files with the 80 categories and no instances, and the empty train2014 files the
released code requires.

The released file is not in the repository: ``CAPEVAL_BENCH_CHAIR_ORIGINAL`` names a copy of LisaAnne/Hallucination's
``utils/chair.py`` (Python 2: its three ``print`` statements made calls; ``utils/misc.py`` may be a one-line ``import
os``; ``data/synonyms.txt`` beside ``utils/``; it needs ``pattern.en``), and ``CAPEVAL_BENCH_CHAIR_OPERA`` shikiw/OPERA's
``chair.py``. ``CAPEVAL_BENCH_TAGGER_PICKLE`` (a pickled ``(weights, tagdict, classes)`` of NLTK's averaged-perceptron
kind, e.g. textblob-aptagger's) replaces NLTK's tagger weights on both sides where NLTK's own are not installed
(OPERA's variant tags: without either, its sides are skipped, and say so); where NLTK's ``punkt_tab`` or WordNet
corpus is missing, the released code reads stand-ins (:func:`data.nltk_data_stand_ins`). Without the released file
its side is skipped, and says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

from data import NEEDS_TAGGER, TAGGER, golden, nltk_data_stand_ins, stand_in_tagger_weights, tagger_about
from harness import Benchmark, Compare, Side

RELEASED = {"original": "CAPEVAL_BENCH_CHAIR_ORIGINAL", "opera": "CAPEVAL_BENCH_CHAIR_OPERA"}
STATE: dict = {}


def image_id(file_name: str) -> int:
    return int(file_name.rsplit("_", 1)[1].split(".")[0])


def chair_data(kind: str, variant: str):
    def data(folder: Path, quick: bool):
        from capeval.scoring.chair import COCO_SYNONYMS

        frame = golden()
        frame = frame[frame.system == frame.system.iloc[0]][:200 if quick else None]
        references = [list(r) for r in frame.references]
        captions = list(frame.candidate) if kind == "coco" else [" ".join(r) for r in references[1:] + references[:1]]
        files = list(frame.image_id)
        annotations = folder / "annotations"
        annotations.mkdir()
        info = {"description": "capeval speed suite"}
        categories = [{"id": i, "name": name, "supercategory": ""} for i, name in enumerate(COCO_SYNONYMS, 1)]
        images = [{"id": image_id(f), "file_name": f} for f in files]
        lines = [{"id": i, "image_id": image_id(f), "caption": c} for i, (f, refs) in enumerate(zip(files, references)) for c in refs]
        for split, split_images, split_captions in (("val", images, lines), ("train", [], [])):
            base = {"info": info, "licenses": [], "images": split_images}
            (annotations / f"captions_{split}2014.json").write_text(json.dumps({**base, "annotations": split_captions}))
            (annotations / f"instances_{split}2014.json").write_text(json.dumps({**base, "annotations": [], "categories": categories}))
        return ({"captions": captions, "files": files, "annotations": str(annotations), "work": str(folder)},
                {"description": f"one system's Karpathy-test captions ({kind}: "
                                f"{'about 10 words' if kind == 'coco' else 'five-sentence paragraphs, about 42 words'})"
                                + (f", {tagger_about()}" if variant == "opera" else ""),
                 "items": len(captions)})
    return data


def stand_in_tagger() -> None:
    """Where ``CAPEVAL_BENCH_TAGGER_PICKLE`` is set: NLTK's ``pos_tag`` and capeval's batched tagger read its weights."""
    if not os.environ.get(TAGGER):
        return
    import nltk
    from nltk.tag.perceptron import PerceptronTagger

    import capeval.scoring.chair as chair
    from capeval.text.english import PerceptronTags

    weights, tagdict, classes = stand_in_tagger_weights()
    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict = weights, tagdict
    tagger.classes = tagger.model.classes = set(classes)
    nltk.pos_tag = lambda tokens, tagset=None, lang="eng": tagger.tag(tokens)
    chair.pos_tagger = lambda: PerceptronTags(weights, tagdict, classes)


def prepare(inputs: dict) -> dict:
    import nltk  # noqa: F401  (both sides import NLTK and numpy untimed)
    import numpy  # noqa: F401

    nltk_data_stand_ins(Path(inputs["work"]) / f"nltk_data_{os.getpid()}")
    stand_in_tagger()
    return inputs


def capeval_side(variant: str):
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.chair import ChairScorer

        if "scorer" not in STATE:
            STATE["scorer"] = ChairScorer(variant=variant, annotations=inputs["annotations"])
        scores = STATE["scorer"].score(inputs["captions"], images=inputs["files"], show_progress=False)
        return {"mentions": scores.details["mentioned_objects"], "chair_s": list(map(float, scores["chair_s"])),
                "chair_i": list(map(float, scores["chair_i"]))}
    return call


def released_side(port: str):
    """The released module's evaluator (built by the first call) and its ``compute_chair``."""
    def call(inputs: dict, label: str) -> dict:
        import contextlib
        import importlib.util
        import io
        import sys

        files, captions, work = inputs["files"], inputs["captions"], Path(inputs["work"])
        quiet = contextlib.ExitStack()
        quiet.enter_context(contextlib.redirect_stdout(io.StringIO()))
        quiet.enter_context(contextlib.redirect_stderr(io.StringIO()))
        with quiet:
            if "module" not in STATE:
                source = Path(os.environ[RELEASED[port]]).resolve()
                if port == "original":
                    os.chdir(source.parent.parent)  # it reads data/synonyms.txt from there
                    sys.path.insert(0, str(source.parent))
                spec = importlib.util.spec_from_file_location(f"released_chair_{port}", source)
                STATE["module"] = module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            module = STATE["module"]
            if port == "original":
                path = work / "captions.json"
                zeros = dict.fromkeys(("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "CIDEr", "SPICE", "ROUGE_L"), 0.0)
                path.write_text(json.dumps({"overall": zeros, "imgToEval": {
                    str(image_id(f)): {"image_id": image_id(f), "caption": c, **zeros} for c, f in zip(captions, files)}}))
                if "evaluator" not in STATE:
                    _, ids, _ = module.load_generated_captions(str(path))
                    STATE["evaluator"] = module.CHAIR(ids, inputs["annotations"])
                    STATE["evaluator"].get_annotations()
                output = STATE["evaluator"].compute_chair(str(path))
            else:
                path = work / "captions.jsonl"
                path.write_text("".join(json.dumps({"image_id": image_id(f), "caption": c}) + "\n" for c, f in zip(captions, files)))
                if "evaluator" not in STATE:
                    STATE["evaluator"] = module.CHAIR(inputs["annotations"])
                output = STATE["evaluator"].compute_chair(str(path), "image_id", "caption")
        by_image = {sentence["image_id"]: sentence for sentence in output["sentences"]}  # the original keys it by image
        sentences = [by_image[image_id(f)] for f in files]
        return {"mentions": [s["mscoco_generated_words"] for s in sentences],
                "chair_s": [float(s["metrics"]["CHAIRs"]) for s in sentences],
                "chair_i": [float(s["metrics"]["CHAIRi"]) for s in sentences]}
    return call


def tagging(variant: str) -> tuple[str, ...]:
    """What a side of ``variant`` needs: NLTK, and for OPERA's (which tags) the tagger's weights or their stand-in."""
    return ("nltk", NEEDS_TAGGER) if variant == "opera" else ("nltk",)


def declare() -> list[Benchmark]:
    return [Benchmark(f"chair{'' if kind == 'coco' else '_long'}{'' if variant == 'original' else '_opera'}",
                      f"CHAIR ({variant}) on 5,000 {'captions' if kind == 'coco' else 'paragraphs'}, one core, against "
                      f"the released chair.py", chair_data(kind, variant), cores=1,
                      sides=(Side("capeval", capeval_side(variant), prepare=prepare, requires=tagging(variant)),
                             Side("released", released_side(variant), role="peer", prepare=prepare,
                                  requires=(*tagging(variant), f"env:{RELEASED[variant]}"), label="released chair.py")),
                      compare=(Compare("capeval", "released", tolerance=0.0),))
            for variant in ("original", "opera") for kind in ("coco", "long")]
