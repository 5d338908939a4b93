"""METEOR's ``engine`` option: the pure-Python engine (default) and the jar give the same scores, statistics and
corpus values, so the option changes no number and no hashcode; shards scored by either engine merge into the
whole corpus's value; only the jar needs Java."""

import shutil

import pytest

from capeval.scoring.coco import JAVA_MISSING, MeteorScorer

from fixtures import NEEDS_JAVA

PREDICTIONS = ["A dog runs on the grass.", "Two men ride horses in an arena", "a cat", "A man sits on a couch.",
               "people walking down a busy city street", "a dog\nruns", "the the the"]
REFERENCES = [["a dog running on grass", "The dog runs on the green grass."],
              ["two men riding horses", "men on horses in a rodeo arena", "riders in an arena"],
              ["a cat sleeps on a sofa", "a small cat"], ["A person sitting on a sofa."],
              ["pedestrians are strolling along a crowded urban road"], ["a dog runs"], ["the"]]


@pytest.fixture
def jar_scorer(meteor_process):
    scorer = MeteorScorer(engine="jar")
    scorer._jar = meteor_process
    return scorer


@NEEDS_JAVA
@pytest.mark.slow
def test_the_engines_give_the_same_numbers(resources, jar_scorer):
    python, jar = MeteorScorer().score(PREDICTIONS, REFERENCES), jar_scorer.score(PREDICTIONS, REFERENCES)
    assert python["meteor"] == jar["meteor"] and python.corpus == jar.corpus
    assert python.sufficient_statistics == jar.sufficient_statistics
    assert python["meteor"][5] == 1.0  # a newline is a space, with either engine
    assert MeteorScorer(engine="jar").hashcode() == MeteorScorer().hashcode() == \
        "meteor(version=1.5,tokenizer=ptb)_capeval=" + __import__("capeval").__version__


@NEEDS_JAVA
def test_shards_merge_into_the_whole_with_either_engine(resources, jar_scorer):
    python = MeteorScorer()
    whole = python.score(PREDICTIONS, REFERENCES).corpus["meteor"]
    first = python.score(PREDICTIONS[:3], REFERENCES[:3]).sufficient_statistics
    second = jar_scorer.score(PREDICTIONS[3:], REFERENCES[3:]).sufficient_statistics
    assert python.corpus_from_sufficient_statistics(first + second)["meteor"] == whole
    assert jar_scorer.corpus_from_sufficient_statistics(first + second)["meteor"] == whole


def test_python_engine_merges_shards_and_needs_no_java(resources, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    scorer = MeteorScorer()
    whole = scorer.score(PREDICTIONS, REFERENCES)
    shards = [scorer.score(PREDICTIONS[i:i + 2], REFERENCES[i:i + 2]) for i in range(0, len(PREDICTIONS), 2)]
    assert [score for shard in shards for score in shard["meteor"]] == whole["meteor"]
    statistics = [row for shard in shards for row in shard.sufficient_statistics]
    assert scorer.corpus_from_sufficient_statistics(statistics) == whole.corpus
    assert whole.corpus["meteor"] == 0.3440800904081484  # the jar's value (test_the_engines_give_the_same_numbers)
    scorer.start_in_background()  # nothing to start
    with pytest.raises(RuntimeError, match="needs a Java runtime"):
        MeteorScorer(engine="jar").score(PREDICTIONS, REFERENCES)
    assert "engine=\"python\"" in JAVA_MISSING


def test_engine_choices_and_long_sentences(resources):
    with pytest.raises(ValueError, match="engine must be one of"):
        MeteorScorer(engine="java")
    with pytest.raises(ValueError, match=r"predictions\[0\] has 501 words after tokenization; METEOR takes at most 500"):
        MeteorScorer().score(["word " * 501], [["a word"]])
