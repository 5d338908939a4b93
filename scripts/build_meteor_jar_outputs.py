#!/usr/bin/env python
"""Build ``tests/assets/meteor_jar_outputs.parquet``: what pycocoevalcap's METEOR 1.5 jar answers for the COCO
Karpathy-test caption sets and Flickr8k-Expert, so the pure-Python METEOR can be compared with it without Java.

The jar runs through pycocoevalcap 1.2's own ``Meteor`` wrapper (``java -jar meteor-1.5.jar - - -stdio -l en -norm``):
one ``SCORE`` line per candidate gives its statistics, and ``compute_score`` (one ``EVAL`` line over the candidates
of a corpus) gives the per-caption scores and the corpus score, as pycocoevalcap reports them.

The inputs are PTB-tokenized text, as the toolkit feeds METEOR:

- ``karpathy``: SMURF's 4 systems × 5,000 Karpathy-test images, tokenized by pycocoevalcap itself
  (``tests/assets/karpathy_coco_tokens.parquet``); each system is one corpus, as pycocoevalcap evaluates it;
- ``flickr8k_expert``: the 5,822 rows of the bundled Flickr8k-Expert dataset (``hub/flickr8k_expert``), tokenized
  by capeval's PTB tokenizer (``tokenizer="ptb"``, equal to the jar on these captions), one corpus.

One row per candidate: ``dataset``, ``row`` (Karpathy: ``system * 5000 + image``; Flickr8k-Expert: the dataset's
row), ``statistics`` (the 23 numbers of its ``SCORE`` answer, all whole numbers) and ``score`` (its ``EVAL``
answer). The corpus scores are in the file's metadata (``corpus``: Karpathy per system, Flickr8k-Expert).

It also writes ``tests/assets/meteor_jar_units.json``: the jar's answers for hand-picked cases that exercise one
part each, for the fast tests: ``normalize`` (its ``Normalizer`` class, then Java's lowercasing, on
:data:`NORMALIZER_CASES`), ``stem`` (its ``Stemmer`` class on :data:`STEMMER_CASES`) and ``pairs`` (the ``SCORE``
statistics and the ``EVAL`` score of :data:`PAIR_CASES`: repeated words that leave the beam search many paths,
stems, synonyms, paraphrases, words Java's hash codes cannot tell apart, empty and identical sentences, references
that tie) and ``scores`` (the ``EVAL`` answers for 200 seeded random statistics, :func:`statistics_cases`, and
their aggregate).

    python scripts/build_meteor_jar_outputs.py [--units-only]    # needs Java and pycocoevalcap; ~10 minutes
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from capeval.text.ptb import tokenize_corpus

REPO = Path(__file__).resolve().parents[1]
ASSET = REPO / "tests" / "assets" / "meteor_jar_outputs.parquet"
UNITS = REPO / "tests" / "assets" / "meteor_jar_units.json"

NORMALIZER_CASES = [
    "A dog runs.", "Mr. Smith paid 1,000.50 dollars.", "The U.S.-based firm's \u201cbest\u201d  cafe--ever...",
    "No. 5 and No. more", "pp. 12", "e.g. this", "i.e. That", "He said ''hi'' `there'", "it\u2019s \u2018quoted\u2019",
    "90's music", "rock'n'roll", "l'amour", "'tis", "dogs' bones", "5'", "x'1", "1'x", "a-b c--d e---f 3-4 .-x",
    "well\u2013known", "wait....what", "end..", "a . . b", "x.y.z.", "Inc. is", "Inc. Is", "A. Smith", "a. smith",
    "(parens) [brackets] {braces}", "50% off $5 #tag @user a&b c/d e\\f", "what?! yes; no: maybe",
    "caf\u00e9 na\u00efve \u017dofie \u0416\u0435\u043d\u044f", "tab\there", "nbsp\u00a0here",
    "thin\u2009space\u3000ideographic", "emoji \U0001F600. ok", "DOTMULTI. DOTDOTMULTI", "1,2,3 a,b,c 1,a a,1",
    "U.S. vs. U.K.", "St. Louis", "Dr. no", "J.R.R. Tolkien", "ph.d. students", "a.m. and p.m.", "3.14 is pi.",
    "Fig. 3", "Art. 5", "a dog  runs", "two  spaces ", "UPPER lower MiXeD",
]
STEMMER_CASES = [
    "running", "runs", "ran", "dogs", "cats'", "dog's", "'twas", "generously", "generals", "communism", "arsenal",
    "skies", "skis", "dying", "lying", "tying", "idly", "gently", "ugly", "early", "only", "singly", "sky", "news", "howe",
    "atlas", "cosmos", "bias", "andes", "succeeded", "proceeding", "exceeds", "canning", "innings", "earrings",
    "herrings", "outings", "hoped", "hopping", "filing", "agreed", "feed", "bleed", "luxuriating", "troubled", "sized",
    "tanned", "falling", "hissing", "fizzed", "failing", "filed", "cried", "ties", "tied", "caresses", "ponies", "gas",
    "this", "kiwis", "yes", "yyy", "sayyid", "happy", "cry", "by", "say", "toy", "relational", "conditional", "rational",
    "valenci", "hesitanci", "digitizer", "conformabli", "radicalli", "differentli", "vileli", "analogousli",
    "vietnamization", "predication", "operator", "feudalism", "decisiveness", "hopefulness", "callousness", "formaliti",
    "sensitiviti", "sensibiliti", "archaeology", "fluentli", "helpfulli", "carelessli", "triplicate", "formative",
    "formalize", "electriciti", "electrical", "hopeful", "goodness", "revival", "allowance", "inference", "airliner",
    "gyroscopic", "adjustable", "defensible", "irritant", "replacement", "adjustment", "dependent", "adoption", "vision",
    "homologou", "activate", "angulariti", "effective", "bowdlerize", "probate", "rate", "cease", "controll", "roll",
    "bell", "a", "ab", "abc", "aby", "ey", "eyes", "emotional", "emotionally", "consignment", "knightly", "word\U0001F600s",
    "\U0001F600\U0001F600s", "apologies", "spied", "oed", "eed", "proceed", "bed", "ringing", "hying", "playing",
    "sayings", "theories", "abyss", "buses", "mess", "gases", "sixes", "ogi", "geology", "blogi", "ably", "bli", "anli",
    "fully", "tonli", "gentlest", "notional", "ational", "icate", "youth", "yay", "Yay", "sYy",
    "happily", "mabeed", "dekeedly", "agreedly", "abolition", "motion", "fashion", "champion", "rebel", "compell",
    "fulfill",
]
# Nonsense words (no synonyms, stems of their own, in no paraphrase) leave the search only exact and stem matches.
PAIR_CASES = [
    ("qx qy qx qz qx", ["qx qx qy qz"]),
    ("qa qb qa qb qa qb", ["qb qa qb qa qb qa qb"]),
    ("qa qa qa qa qa qa qa qa", ["qa qa qa qa qa qa qa qa qa"]),
    ("qa qb qa qc qa qd qa qb qc qd", ["qd qa qc qa qb qa qd qc qa qb qa"]),
    ("qa qb qc qd qe qf qg qh", ["qh qg qf qe qd qc qb qa"]),
    ("zork zorks zorking zorked", ["zorked zork zorking zorker zorks"]),
    ("zorks qa zorking qa", ["qa zork qa zorked"]),
    ("zork zorking", ["zorks"]),  # two stem matches for one word: neither counts in the ranking, both are skipped
    ("zork", ["zorks"]),  # one stem match, alone: fixed
    ("qa qa", ["qa"]),
    # more partial alignments than the beam keeps: its width decides these
    ("zorks qb zorks qb zorked qb zork zork qb zorks qa qa zork zork zorks qb zork qa zorked qa",
     ["zorks zorked zork zorked zorked qa zork zorks zorks zorks zorked qa zorked zork zorked zorks qb zorks zork qa qa"]),
    ("zork qb zork zorked zorked zork qb zork zork qb qa zorked zorks",
     ["zork qb qb qb zorks zorks qa qa qb zorks qa zork qb zork zorks zorks"]),
    # paths' distances and chunks decide these
    ("qb zork zork qb dog man the bench man", ["sofa person dog zorked qc zorks the sofa dogs"]),
    ("sitting zork man sitting", ["zorked a qb zorks dogs person"]),
    ("a man of man", ["on bench qc person of zork qc bench the"]),
    ("qc zork on qb of sitting qb zorks", ["qb dog of the qb zork qc park zork qb couch"]),
    ("many group a the big", ["of group to seated people bench the"]),  # a path inside a two-word paraphrase
    # two references with the same score and different statistics: the first counts
    ("a farmers market fulled of fresh fruits and vegetables",
     ["many trays with green yellow and red apples and a scale",
      "a fruit stand on the side of the street with vehicles going by"]),
    ("a close up of a fire hydrant with a skyscraper in the background",
     ["a gray fire hydrant with a yellow top", "a fire hydrant is on the sidewalk in the city"]),
    ("the qa of the qb of the qc", ["of the qc the qb of qa"]),
    ("w\u044f qa", ["x\u0430 qa", "qa qb"]),
    ("a man sits on a couch", ["a person sitting on a sofa", "a guy on the couch"]),
    ("a man is sitting on a bench in the park", ["a guy sits on a park bench", "a man sitting on a wooden bench"]),
    ("two dogs are playing with a frisbee on the grass", ["a couple of dogs playing frisbee in a grassy field"]),
    ("a large jetliner flying through a blue sky", ["an airplane is in the air in the sky", "a big plane flies high"]),
    ("people walking down a busy city street", ["pedestrians are strolling along a crowded urban road"]),
    ("a woman holding an umbrella in the rain", ["a lady holds a parasol while it rains", "woman with umbrella"]),
    ("a dog runs", ["a dog runs", "a dog runs fast"]),
    ("a dog runs", ["the cat sleeps", "a dog runs"]),
    ("", ["a dog runs"]),
    ("a dog runs", [""]),
    ("the of a", ["a of the"]),
    ("Mr. Smith's dog, the U.S.-based one...", ["mr smith 's dog , the us based one ..."]),
    ("it's 5 o'clock, isn't it?", ["it is five o'clock is n't it ?"]),
    ("a man riding a motorcycle down a dirt road", ["man riding a motor bike on a dirt road on the countryside",
                                                  "a man riding on the back of a motorcycle"]),
    ("a kitchen with a stove a sink and a refrigerator", ["a kitchen with a stove , sink , and refrigerator",
                                                          "a small kitchen has a sink and a fridge"]),
]


def karpathy_corpora() -> list[tuple[list[str], list[list[str]]]]:
    """Each system's tokenized candidates with the tokenized references of their images."""
    table = pq.read_table(REPO / "tests" / "assets" / "karpathy_coco_tokens.parquet").to_pydict()
    return [([candidates[system] for candidates in table["candidates"]], table["references"])
            for system in range(len(table["candidates"][0]))]


def flickr8k_expert() -> tuple[list[str], list[list[str]]]:
    table = pq.read_table(REPO / "hub" / "flickr8k_expert" / "data" / "test-00000-of-00001.parquet",
                          columns=["candidate", "references"]).to_pydict()
    return tokenize_corpus(table["candidate"], table["references"], "ptb")


def jar_outputs(meteor, candidates: list[str], references: list[list[str]]) -> tuple[list[list[int]], list[float], float]:
    """The jar's statistics, per-caption scores and corpus score, through pycocoevalcap's wrapper."""
    statistics = []
    with meteor.lock:
        for candidate, refs in zip(candidates, references):
            statistics.append([int(float(value)) for value in meteor._stat(candidate, refs).split()])
    corpus, scores = meteor.compute_score({i: refs for i, refs in enumerate(references)},
                                          {i: [candidate] for i, candidate in enumerate(candidates)})
    return statistics, [float(score) for score in scores], float(corpus)


def statistics_cases(count: int = 200) -> list[list[float]]:
    """Seeded random statistics (any numbers the ``EVAL`` line takes): lengths, function words, matches of every
    stage on either side, chunks; one in four a candidate that matches its reference whole (one chunk, every word
    matched), some of them off by one."""
    rng = random.Random(0)
    cases = []
    for case in range(count):
        lengths = [rng.randint(0, 14), rng.randint(0, 14)]
        function = [rng.randint(0, n) for n in lengths]
        stages = [rng.randint(0, 3) for _ in range(16)]
        if case % 4 == 0:  # all matched in one chunk: the stages' counts add up to the lengths
            stages = [0] * 16
            for side in range(2):
                for word in range(lengths[side]):
                    stages[4 * rng.randrange(4) + side + (2 if word < function[side] else 0)] += 1
            if case % 8 == 0:
                lengths[rng.randrange(2)] += 1
            chunks = 1
        else:
            chunks = rng.randint(0, 6)
        matched = [sum(stages[side::2][k] for k in range(8)) for side in range(2)]
        cases.append([float(v) for v in (*lengths, *function, *stages, chunks, *matched)])
    return cases


def java_lines(main_class: str, arguments: list[str], lines: list[str]) -> list[str]:
    """What a class of the jar prints for ``lines`` given one a line on its standard input."""
    from capeval.scoring.meteor import pycocoevalcap_jar

    answer = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-cp", str(pycocoevalcap_jar()), main_class, *arguments],
                            input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8", check=True)
    return answer.stdout.split("\n")[:len(lines)]


def unit_outputs(meteor) -> dict:
    """The jar's answers for the hand-picked cases (see the module's docstring)."""
    lowercase = java_lines("edu.cmu.meteor.util.Normalizer", ["en", "true"], NORMALIZER_CASES)
    # The jar lowercases after normalizing (Java's toLowerCase: for these strings Python's lower() is the same).
    normalized = [line.lower() for line in lowercase]
    stems = java_lines("Stemmer", ["en"], STEMMER_CASES)
    candidates, references = [c for c, _ in PAIR_CASES], [refs for _, refs in PAIR_CASES]
    statistics, scores, corpus = jar_outputs(meteor, candidates, references)
    cases = statistics_cases()
    with meteor.lock:  # the EVAL line: each case's score, then the aggregate of all
        meteor.meteor_p.stdin.write((" ||| ".join(("EVAL", *(" ".join(map(repr, row)) for row in cases))) + "\n").encode())
        meteor.meteor_p.stdin.flush()
        answers = [float(meteor.meteor_p.stdout.readline().strip()) for _ in range(len(cases) + 1)]
    return {"normalize": [list(pair) for pair in zip(NORMALIZER_CASES, normalized)],
            "scores": [{"statistics": row, "score": score} for row, score in zip(cases, answers)],
            "scores_corpus": answers[-1],
            "stem": [list(pair) for pair in zip(STEMMER_CASES, stems)],
            "pairs": [{"candidate": c, "references": refs, "statistics": row, "score": score}
                      for c, refs, row, score in zip(candidates, references, statistics, scores)],
            "pairs_corpus": corpus}


def main() -> None:
    from pycocoevalcap.meteor.meteor import Meteor

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units-only", action="store_true", help="write meteor_jar_units.json only (a minute)")
    args = parser.parse_args()
    meteor = Meteor()
    UNITS.write_text(json.dumps(unit_outputs(meteor), indent=1, ensure_ascii=True) + "\n")
    print(f"-> {UNITS}", flush=True)
    if args.units_only:
        return
    columns: dict[str, list] = {"dataset": [], "row": [], "statistics": [], "score": []}
    corpus: dict[str, object] = {"karpathy": []}
    for system, (candidates, references) in enumerate(karpathy_corpora()):
        statistics, scores, value = jar_outputs(meteor, candidates, references)
        corpus["karpathy"].append(value)  # type: ignore[union-attr]
        columns["dataset"] += ["karpathy"] * len(candidates)
        columns["row"] += [system * len(candidates) + i for i in range(len(candidates))]
        columns["statistics"] += statistics
        columns["score"] += scores
        print(f"karpathy system {system}: corpus {value}", flush=True)
    candidates, references = flickr8k_expert()
    statistics, scores, corpus["flickr8k_expert"] = jar_outputs(meteor, candidates, references)
    columns["dataset"] += ["flickr8k_expert"] * len(candidates)
    columns["row"] += list(range(len(candidates)))
    columns["statistics"] += statistics
    columns["score"] += scores
    print(f"flickr8k_expert: corpus {corpus['flickr8k_expert']}")
    table = pa.table({"dataset": pa.array(columns["dataset"]).dictionary_encode(),
                      "row": pa.array(columns["row"], pa.int32()),
                      "statistics": pa.array(columns["statistics"], pa.list_(pa.int16(), 23)),
                      "score": pa.array(columns["score"], pa.float64())},
                     metadata={"corpus": json.dumps(corpus)})
    pq.write_table(table, ASSET, compression="zstd", compression_level=19)
    print(f"{table.num_rows} rows -> {ASSET} ({ASSET.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
