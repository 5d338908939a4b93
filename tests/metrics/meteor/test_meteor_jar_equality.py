"""The pure-Python METEOR equals pycocoevalcap's jar: on the jar's stored answers for all 20,000 COCO Karpathy-test
candidates and the 5,822 of Flickr8k-Expert (tests/assets/meteor_jar_outputs.parquet, written by
scripts/build_meteor_jar_outputs.py), and on the live jar where Java is installed (whole sentences, and the jar's
normalizer and stemmer on large inputs)."""

import collections
import json
import random
import re
import subprocess

import pyarrow.parquet as pq
import pytest

from capeval.scoring import meteor as M
from capeval.scoring.meteor import english_stem, meteor, normalize
from capeval.scoring.meteor_jar import meteor_inputs, meteor_line
from capeval.text.ptb import tokenize_corpus

from fixtures import ASSETS, NEEDS_JAVA

REPO = ASSETS.parents[1]


def stored(dataset: str) -> tuple[list[list[int]], list[float], object]:
    """The jar's statistics and scores for ``dataset``'s candidates in order, and its corpus score(s)."""
    table = pq.read_table(ASSETS / "meteor_jar_outputs.parquet")
    rows = sorted((row, statistics, score) for name, row, statistics, score in zip(
        *(table.column(c).to_pylist() for c in ("dataset", "row", "statistics", "score"))) if name == dataset)
    corpus = json.loads(table.schema.metadata[b"corpus"])[dataset]
    return [statistics for _, statistics, _ in rows], [score for _, _, score in rows], corpus


def karpathy_systems() -> list[tuple[list[str], list[list[str]]]]:
    """Each system's candidates with their images' references, as pycocoevalcap tokenized them."""
    table = pq.read_table(ASSETS / "karpathy_coco_tokens.parquet").to_pydict()
    return [([candidates[system] for candidates in table["candidates"]], table["references"]) for system in range(4)]


def flickr8k_expert() -> tuple[list[str], list[list[str]]]:
    table = pq.read_table(REPO / "hub" / "flickr8k_expert" / "data" / "test-00000-of-00001.parquet",
                          columns=["candidate", "references"]).to_pydict()
    return tokenize_corpus(table["candidate"], table["references"], "ptb")


def assert_equal(ours, jar_statistics, jar_scores):
    """The same statistics (whole numbers), scores within 1e-9 (in fact equal: Java's pow and C's may differ in the
    last bit, which these captions never hit)."""
    _, scores, statistics = ours
    assert [list(map(int, row)) for row in statistics] == jar_statistics
    assert max(abs(a - b) for a, b in zip(scores, jar_scores)) <= 1e-9
    assert sum(a == b for a, b in zip(scores, jar_scores)) == len(jar_scores)


@pytest.mark.slow
def test_karpathy_test_split_equals_the_jar(resources):
    statistics, scores, corpus = stored("karpathy")
    assert len(statistics) == 20_000
    for system, (candidates, references) in enumerate(karpathy_systems()):
        part = slice(system * 5000, (system + 1) * 5000)
        ours = meteor(candidates, references, resources)
        assert_equal(ours, statistics[part], scores[part])
        assert ours[0] == corpus[system]  # pycocoevalcap's METEOR of the system


@pytest.mark.slow
def test_flickr8k_expert_equals_the_jar(resources):
    statistics, scores, corpus = stored("flickr8k_expert")
    candidates, references = flickr8k_expert()
    assert len(candidates) == len(statistics) == 5822
    ours = meteor(candidates, references, resources)
    assert_equal(ours, statistics, scores)
    assert ours[0] == corpus


def test_a_karpathy_sample_equals_the_jar_through_every_shortcut(resources, monkeypatch):
    """500 candidates against the jar's stored answers, counting the shortcuts taken: pairs whose matches are all
    fixed (no search), searched ones, and references never aligned because their score's bound is under the best
    score found. Every reference's bound is at least its score."""
    jar_statistics, jar_scores, _ = stored("karpathy")
    candidates, references = (part[:500] for part in karpathy_systems()[0])
    seen = collections.Counter()
    best_alignment, choose = M.best_alignment, M._choose

    def counting_alignment(matches, cover1, cover2):
        choices = seen["choices"]
        alignment = best_alignment(matches, cover1, cover2)
        seen["searched" if seen["choices"] > choices else "fixed only"] += 1
        return alignment

    def counting_choose(*arguments):
        seen["choices"] += 1
        return choose(*arguments)

    monkeypatch.setattr(M, "best_alignment", counting_alignment)
    monkeypatch.setattr(M, "_choose", counting_choose)
    assert_equal(meteor(candidates, references, resources), jar_statistics[:500], jar_scores[:500])
    monkeypatch.undo()
    sentences = [M.Sentence(M.normalize(text, resources.prefixes), resources) for text in candidates]
    pairs = []
    for c, refs in enumerate(references):
        pairs += [(c, len(sentences) + r) for r in range(len(refs))]
        sentences += [M.Sentence(M.normalize(text, resources.prefixes), resources) for text in refs]
    for (c, r), paraphrases in zip(pairs, M.paraphrase_matches(resources.paraphrases, sentences, pairs)):
        matches, cover1, cover2 = M.stage_matches(sentences[c], sentences[r], paraphrases)
        statistics = M.alignment_statistics(sentences[c], sentences[r], M.best_alignment(matches, cover1, cover2))
        assert M.score_bound(sentences[c], sentences[r], cover1, cover2) >= M.score_from_statistics(statistics)
    assert seen["fixed only"] > 50 and seen["searched"] > 1000 and seen["fixed only"] + seen["searched"] < 0.7 * len(pairs)


#: Pieces of text the normalizer and the matcher treat specially.
PIECES = ["a", "the", "of", "dog", "dogs", "dog's", "running", "runs", "ran", "couch", "sofa", "man", "person", "guy",
          "sitting", "seated", "on", "bench", "U.S.", "Mr.", "No.", "1,000", "3.5", "...", ",", "'", "''", "`", "\u2018",
          "\u201c", "\u2013", "--", "-", "well-known", "isn't", "90's", "e.g.", "(", ")", "%", "$", "&", "/", "?", "!",
          "caf\u00e9", "\u0416", "w\u044f", "x\u0430", "\U0001F600", "qa", "qa", "qb", "zork", "zorks", "zorking",
          "\u00a0", "\u3000", "x.y.", "DOTMULTI", "\u00c9t\u00e9"]


def odd_sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14))) for _ in range(count)]


@NEEDS_JAVA
@pytest.mark.slow
def test_odd_text_equals_the_live_jar(resources, meteor_process):
    candidates = odd_sentences(400, 1)
    references = [odd_sentences(3, seed) for seed in range(400)]
    cleaned = meteor_inputs(candidates, references)
    jar_corpus, jar_scores, jar_statistics = meteor_process.score(candidates, references)
    corpus, scores, statistics = meteor(*cleaned, resources)
    assert [list(row) for row in statistics] == jar_statistics
    assert scores == jar_scores and corpus == jar_corpus


@NEEDS_JAVA
@pytest.mark.slow
def test_a_sample_of_the_karpathy_split_equals_the_live_jar(resources, meteor_process):
    candidates, references = karpathy_systems()[2]
    sample = random.Random(0).sample(range(len(candidates)), 300)
    candidates, references = [candidates[i] for i in sample], [references[i] for i in sample]
    jar_corpus, jar_scores, jar_statistics = meteor_process.score(candidates, references)
    corpus, scores, statistics = meteor(candidates, references, resources)
    assert [list(row) for row in statistics] == jar_statistics
    assert scores == jar_scores and corpus == jar_corpus


def jar_class_output(main_class: str, arguments: list[str], lines: list[str]) -> list[str]:
    """What a class of the jar prints for ``lines`` given one a line on its standard input."""
    from capeval.scoring.meteor import pycocoevalcap_jar

    answer = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-cp", str(pycocoevalcap_jar()), main_class, *arguments],
                            input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8", check=True)
    return answer.stdout.split("\n")[:len(lines)]


@NEEDS_JAVA
@pytest.mark.slow
def test_stemmer_equals_the_jars_on_its_vocabularies(resources):
    """Every word of the synonym dictionary and of the paraphrase table, and random words of stemmer letters."""
    words = {part for entry in resources.synonyms._raw for part in entry.split("_")} | set(resources.paraphrases.vocabulary)
    rng = random.Random(0)
    words |= {"".join(rng.choice("aeiouybcdlmnrstgY'") for _ in range(rng.randint(1, 9))) for _ in range(20_000)}
    # The jar's Stemmer class leaves numbers alone and reads whitespace-separated words.
    words = sorted(w for w in words if w and w.strip() == w and " " not in w and not re.fullmatch(r"[0-9,.\-]+", w))
    jar = jar_class_output("Stemmer", ["en"], words)
    assert len(words) > 125_000
    assert [(w, j) for w, j in zip(words, jar) if english_stem(w) != j] == []


@NEEDS_JAVA
@pytest.mark.slow
def test_normalizer_equals_the_jars_on_every_caption(resources):
    """Every caption capeval ships or was evaluated on (the PTB test corpus) and random tricky text."""
    texts = pq.read_table(ASSETS / "ptb_jar_outputs.parquet", columns=["text"]).column("text").to_pylist()
    texts += odd_sentences(20_000, 2)
    texts = [line for line in map(meteor_line, texts) if line]
    jar = jar_class_output("edu.cmu.meteor.util.Normalizer", ["en", "true"], texts)
    assert len(texts) > 160_000
    assert [(t, j) for t, j in zip(texts, jar) if normalize(t, resources.prefixes) != j.lower()] == []


#: The capitals Unicode 14 added case pairs for, and their lowercase partners.
UNICODE_14_PAIRS = [(capital, capital.lower()) for capital in M.JAVA_UNCASED]


def skip_unless_java_follows_unicode_13():
    """The jar lower-cases as the Java that runs it: Java 9 to 18 follow Unicode 8 to 13 (the same case pairs since
    Unicode 8 but for those of Unicode 14), Java 19 and later Unicode 14 and later."""
    from capeval.scoring.spice import parse_java_version

    version = subprocess.run(["java", "-version"], capture_output=True, text=True)
    if parse_java_version(version.stderr + version.stdout) >= 19:
        pytest.skip("this Java knows Unicode 14's case pairs; capeval lower-cases as Java 17 does")


@NEEDS_JAVA
@pytest.mark.slow
def test_unicode_14_case_pairs_equal_the_live_jar(resources, meteor_process):
    """Java 17 knows no lowercase of these capitals: "Ⱟ" and "ⱟ" are different words to the jar."""
    skip_unless_java_follows_unicode_13()
    candidates = [capital for capital, _ in UNICODE_14_PAIRS] + ["a \u2c2f dog", "\u0391\u03a3\u2c2f \u03b1\u03c2"]
    references = [[small] for _, small in UNICODE_14_PAIRS] + [["a \u2c5f dog"], ["\u03b1\u03c3\u2c2f \u03b1\u03c2"]]
    jar_corpus, jar_scores, jar_statistics = meteor_process.score(candidates, references)
    corpus, scores, statistics = meteor(*meteor_inputs(candidates, references), resources)
    assert scores[:len(UNICODE_14_PAIRS)] == [0.0] * len(UNICODE_14_PAIRS)
    assert [list(row) for row in statistics] == jar_statistics
    assert scores == jar_scores and corpus == jar_corpus


JAVA_LOWER = """
public class Lower {
    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        for (int code = 0; code <= 0x10FFFF; code++) {
            if (code >= 0xD800 && code <= 0xDFFF) continue;
            String text = new String(Character.toChars(code)), lower = text.toLowerCase();
            if (!lower.equals(text)) {
                out.append(code).append(' ');
                lower.codePoints().forEach(c -> out.append(c).append(','));
                out.append('\\n');
            }
        }
        System.out.print(out);
    }
}
"""


@NEEDS_JAVA
@pytest.mark.slow
def test_java_lower_equals_javas_on_every_code_point(tmp_path):
    skip_unless_java_follows_unicode_13()
    (tmp_path / "Lower.java").write_text(JAVA_LOWER)
    printed = subprocess.run(["java", str(tmp_path / "Lower.java")], capture_output=True, text=True, check=True).stdout
    java = {int(code): "".join(chr(int(c)) for c in lower.rstrip(",").split(","))
            for code, lower in (line.split() for line in printed.splitlines())}
    ours = {code: M.java_lower(chr(code)) for code in range(0x110000)
            if not 0xD800 <= code <= 0xDFFF and M.java_lower(chr(code)) != chr(code)}
    assert ours == java
