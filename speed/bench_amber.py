"""AMBER's generative evaluation over N descriptions on one core: capeval against the released inference.py.

The descriptions are made from AMBER's annotations (``--data-dir``, AMBER's ``data/`` folder): for each image in turn,
sentences naming some of its truth objects, its hallucination objects, their associated words, AMBER safe words
and other vocabulary words, with plurals (so every branch of the matching runs), about 60 words each.

Two stages are timed apart, because only the second is capeval's own work:

* **objects** (tokenize, tag, lemmatize): NLTK's ``word_tokenize``, ``pos_tag`` and WordNet lemmatizer, timed only
  where NLTK's data is installed (``python -m nltk.downloader punkt_tab averaged_perceptron_tagger_eng wordnet``);
  both sides run the same NLTK calls, except that the released ``pos_tag`` builds its tagger for every description;
* **matching** (AMBER's word lists, spaCy similarities, counters): capeval's :func:`match_objects` with its
  :class:`SpacySimilarity`, cold (a new scorer: every word parsed and every pair compared once) and warm (the same
  scorer again), against the released ``inference.py`` run unchanged on the first ``--released-rows`` descriptions
  (its per-description time times N, labelled as extrapolated: it parses both words of every comparison with spaCy).
  Both sides get the same objects, from the tags the generator knows (no NLTK data needed).

The spaCy model's load is excluded. The process is pinned to one core.

Usage: python speed/bench_amber.py --data-dir AMBER/data [--rows 5000] [--spacy-model en_core_web_lg]
       [--released AMBER/inference.py --released-rows 40]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import runpy
import sys
import tempfile
import time
from pathlib import Path

from capeval.scoring.amber import AmberData, AmberScorer, data_files, match_objects, vocabulary_objects

PLURAL = {"person": "people", "man": "men", "woman": "women", "child": "children", "leaf": "leaves", "shelf": "shelves"}
FILLERS = ["The image shows", "In the picture there is", "Next to it we can see", "Behind them stands", "There are also"]


def plural(word: str) -> str:
    if word in PLURAL:
        return PLURAL[word]
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def make_descriptions(data: AmberData, rows: int, seed: int = 0) -> list[dict]:
    """``rows`` descriptions of AMBER's generative images, in turn: text, tagged tokens and each noun's lemma."""
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
        tagged = []
        for start in range(0, len(pool), 2):
            tagged += [(w, "X") for w in rng.choice(FILLERS).split()]
            for word in pool[start:start + 2]:
                many = rng.random() < 0.3
                tagged += [("two" if many else "a", "CD" if many else "DT"), (plural(word) if many else word, "NNS" if many else "NN"),
                           ("with", "IN"), ("a", "DT"), ("bright", "JJ"), ("colour", "NN"), ("and", "CC")]
            tagged[-1] = (".", ".")
        lemmas = {plural(word): word for word in pool} | {word: word for word in pool}
        out.append({"id": entry.id, "tagged": tagged, "response": " ".join(w for w, _ in tagged),
                    "lemmas": {w: lemmas.get(w, w) for w, t in tagged if t.startswith("NN")}})
    return out


def capeval_matching(scorer: AmberScorer, data: AmberData, items: list[dict]) -> tuple[list[list[float]], float]:
    objects = [vocabulary_objects([item["lemmas"][w] for w, t in item["tagged"] if t.startswith("NN")], data.vocabulary)
               for item in items]
    entries = [data.entry(item["id"]) for item in items]
    start = time.perf_counter()
    counts = [match_objects(o, e, data, scorer.similarity) for o, e in zip(objects, entries)]
    return [c.statistics() for c in counts], time.perf_counter() - start


def released_matching(path: str, data_dir: Path, model: str, items: list[dict]) -> tuple[dict, float]:
    """The released inference.py (run unchanged) on ``items``, NLTK's tokenizer, tagger and lemmatizer answering from the
    generator's tags, spacy.load pointed at ``model``: its counters and seconds (its spaCy load excluded)."""
    import nltk
    import nltk.stem
    import spacy

    tokens_of = {item["response"]: [w for w, _ in item["tagged"]] for item in items}
    tags_of = {tuple(tokens_of[item["response"]]): list(item["tagged"]) for item in items}
    lemmas = {w: l for item in items for w, l in item["lemmas"].items()}

    class Lemmatizer:
        def lemmatize(self, word):
            return lemmas[word]

    real_load = spacy.load
    with contextlib.ExitStack() as stack:
        stack.callback(setattr, spacy, "load", real_load)
        for module, name, value in ((nltk, "word_tokenize", lambda text: list(tokens_of[text])),
                                    (nltk, "pos_tag", lambda tokens: tags_of[tuple(tokens)]),
                                    (nltk.stem, "WordNetLemmatizer", Lemmatizer)):
            stack.callback(setattr, module, name, getattr(module, name))
            setattr(module, name, value)
        spacy.load = lambda name, *args, **kwargs: real_load(model)
        namespace = runpy.run_path(path, run_name="amber_inference")  # loads the spaCy model: not timed
        main = namespace["main"]
        captured = {}
        original_init = main.__globals__["init"]
        main.__globals__["init"] = lambda: captured.setdefault("metrics", original_init())
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([{"id": item["id"], "response": item["response"]} for item in items], f)
        args = argparse.Namespace(word_association=str(data_dir / "relation.json"), safe_words=str(data_dir / "safe_words.txt"),
                                  inference_data=f.name, annotation=str(data_dir / "annotations.json"),
                                  metrics=str(data_dir / "metrics.txt"), similarity_score=0.8, evaluation_type="g")
        main.__globals__["args"] = args
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(args)
        return captured["metrics"], time.perf_counter() - start


def nltk_objects(items: list[dict]) -> float | None:
    """Seconds of capeval's object extraction (NLTK) over the descriptions, or None without NLTK's data."""
    from capeval.scoring.amber import NounExtractor

    extractor = NounExtractor()
    try:
        extractor(items[0]["response"])
    except OSError:
        return None
    start = time.perf_counter()
    for item in items:
        extractor(item["response"])
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="AMBER's data/ folder")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--spacy-model", default="en_core_web_lg")
    parser.add_argument("--released", help="AMBER's inference.py, to time the released logic")
    parser.add_argument("--released-rows", type=int, default=40)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    data_dir = Path(args.data_dir)
    data = AmberData.load(data_files(data_dir))
    items = make_descriptions(data, args.rows)
    words = sum(len(item["tagged"]) for item in items)
    print(f"{args.rows} descriptions, {words / args.rows:.0f} tokens each on average; spaCy model {args.spacy_model}; one core")

    scorer = AmberScorer(data_dir=str(data_dir), spacy_model=args.spacy_model)
    scorer.similarity.nlp()  # the model's load is excluded
    statistics, cold = capeval_matching(scorer, data, items)
    _, warm = capeval_matching(scorer, data, items)
    print(f"capeval matching, cold (every word parsed, every pair compared once): {cold:.2f} s")
    print(f"capeval matching, warm (the same scorer again): {warm:.2f} s")
    seconds = nltk_objects(items)
    print("capeval objects (NLTK tokenize, tag, lemmatize): " +
          (f"{seconds:.2f} s" if seconds is not None else "not timed: NLTK's tagger data is not installed here"))
    if args.released:
        subset = items[:args.released_rows]
        counters, released = released_matching(args.released, data_dir, args.spacy_model, subset)
        mine, _ = capeval_matching(AmberScorer(data_dir=str(data_dir), spacy_model=args.spacy_model), data, subset)
        sums = [sum(column) for column in zip(*mine)]
        same = all(abs(counters[name] - data.initial[name] - value) < 1e-9 for name, value in zip(
            ("chair_score", "chair_num", "safe_cover_score", "safe_cover_num", "hallu_cover_score", "hallu_cover_num",
             "non_hallu_score", "non_hallu_num"), sums))
        per = released / len(subset)
        print(f"released inference.py matching on {len(subset)} descriptions: {released:.2f} s ({per * 1000:.0f} ms each); "
              f"extrapolated to {args.rows}: {per * args.rows:.0f} s, {per * args.rows / cold:.0f}x capeval cold "
              f"(counters equal to capeval's: {same})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
