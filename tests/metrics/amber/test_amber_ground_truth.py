"""AMBER's data as it is on disk now (read again when rewritten), and malformed data or inputs refused in one line
naming the file and the entry."""

import json
import os
import shutil

import numpy as np
import pytest

from capeval.benchmarks.amber import evaluate_results
from capeval.scoring.amber import AmberDataError, AmberScorer
from fixtures.amber import DATA_DIR, SMALL_SPACY, with_fixture_tags

DESCRIPTION = "A cat and a dog sit on a table."  # image 1: truth dog, sofa, lamp, window; hallu cat, table, person


@pytest.fixture
def data(tmp_path):
    shutil.copytree(DATA_DIR, tmp_path / "data")
    return tmp_path / "data"


def scorer_of(folder):
    return with_fixture_tags(AmberScorer(data_dir=str(folder), spacy_model=SMALL_SPACY))


def rewrite_keeping_times(path, text):
    stat = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def cat_made_true(folder):
    """Image 1's annotation with the cat moved from its hallucination objects to its truth objects."""
    annotations = json.loads((folder / "annotations.json").read_text(encoding="utf-8"))
    entry = annotations[0]
    entry["truth"], entry["hallu"] = [*entry["truth"], "cat"], [word for word in entry["hallu"] if word != "cat"]
    rewrite_keeping_times(folder / "annotations.json", json.dumps(annotations))


def test_rewritten_data_files_are_read_again_by_a_new_load_and_by_the_loaded_one(small_spacy, data):
    loaded = scorer_of(data)
    assert loaded.score([DESCRIPTION], images=[1]).details["amber_hallucinated"] == [["cat", "table"]]
    cat_made_true(data)
    assert scorer_of(data).score([DESCRIPTION], images=[1]).details["amber_hallucinated"] == [["table"]]
    assert loaded.score([DESCRIPTION], images=[1]).details["amber_hallucinated"] == [["table"]]


def test_a_rewritten_metrics_file_changes_the_corpus_values(small_spacy, data):
    scorer = scorer_of(data)
    assert scorer.score([DESCRIPTION], images=[1]).corpus["amber_chair"] == 66.6  # 2 / (3 + 0.001)
    text = (data / "metrics.txt").read_text(encoding="utf-8")
    rewrite_keeping_times(data / "metrics.txt", text.replace("chair_num=0.001", "chair_num=3.000"))
    assert scorer.score([DESCRIPTION], images=[1]).corpus["amber_chair"] == 33.3


@pytest.mark.parametrize("value, shown", [("couch", "'couch'"), (None, "None"), (["couch", 3], r"\['couch', 3\]"),
                                          ({"couch": 1}, r"\{'couch': 1\}")])
def test_a_relation_value_that_is_not_a_list_of_words_names_the_entry(data, value, shown):
    relation = json.loads((data / "relation.json").read_text(encoding="utf-8"))
    relation["sofa"] = value
    (data / "relation.json").write_text(json.dumps(relation), encoding="utf-8")
    with pytest.raises(AmberDataError, match=rf"relation.json: \"sofa\" is {shown}, not a list of words"):
        AmberScorer(data_dir=str(data)).data()


@pytest.mark.parametrize("line", ["chair_num=0", "safe_cover_num=-0.5"])
def test_a_denominator_that_is_not_above_zero_names_the_line(data, line):
    name = line.split("=")[0]
    text = (data / "metrics.txt").read_text(encoding="utf-8").replace(f"{name}=0.001", line)
    (data / "metrics.txt").write_text(text, encoding="utf-8")
    with pytest.raises(AmberDataError, match=rf"metrics.txt line \d+: '{line}': a denominator starts above 0"):
        AmberScorer(data_dir=str(data)).data()


@pytest.mark.parametrize("name", ["safe_words.txt", "metrics.txt", "relation.json"])
def test_a_binary_data_file_is_named(data, name):
    (data / name).write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(AmberDataError, match=rf"{name} is not UTF-8 text \(invalid start byte at byte 0\)"):
        AmberScorer(data_dir=str(data)).data()


def test_a_results_path_that_is_a_folder_is_one_error(tmp_path):
    with pytest.raises(ValueError, match=rf"{tmp_path}: not a readable results file \(Is a directory\)"):
        evaluate_results(tmp_path, AmberScorer(data_dir=str(DATA_DIR)))


def test_numpy_integer_ids_are_ids(small_spacy):
    scorer = scorer_of(DATA_DIR)
    plain = scorer.score([DESCRIPTION, DESCRIPTION], images=[1, 1])
    assert scorer.score([DESCRIPTION, DESCRIPTION], images=[np.int64(1), np.int32(1)]) == plain
    with pytest.raises(ValueError, match=r"images\[0\] = True: AMBER names an image by its id"):
        scorer.score([DESCRIPTION], images=[True])


def test_the_shipped_sample_scores_as_the_module_docstring_says(small_spacy):
    """The sample folder (capeval.samples.sample_amber_data) in AMBER's format, with the tags NLTK gives this sentence."""
    from capeval.samples import sample_amber_data

    scorer = AmberScorer(data_dir=sample_amber_data(), spacy_model=small_spacy)
    tags = {"A dog on a sofa.": [("A", "DT"), ("dog", "NN"), ("on", "IN"), ("a", "DT"), ("sofa", "NN"), (".", ".")]}
    scorer.nouns.tagged = lambda texts: [tags[text] for text in texts]
    scorer.nouns.lemmatizer = lambda: lambda word: word
    scores = scorer.score(["A dog on a sofa."], images=[1])
    assert scores.details["amber_objects"] == [["dog", "sofa"]] and scores.details["amber_hallucinated"] == [[]]
    assert scores.corpus == {"amber_chair": 0.0, "amber_cover": 66.6, "amber_hal": 0.1, "amber_cog": 0.0}
