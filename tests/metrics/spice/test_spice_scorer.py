"""SPICE's scorer end to end with the fake ``java`` (``spice_fixtures``): the jar's recorded output becomes the columns
and corpus values pycocoevalcap gives, on every Java version; the cache, the chunks and every failure."""

import math
import sys
import warnings

import pytest

import capeval
from capeval.models import ModelUnavailableError
from capeval.scoring import spice
from capeval.scoring.spice import COLUMNS, CORENLP_MISSING, JAVA_MISSING, SpiceJarError, SpiceScorer

from fixtures import spice as spice_fixtures

#: The jar's category name of each column prefix, and its measure of each suffix.
JAR_CATEGORY = {name: category for category, name in spice.CATEGORIES.items()}
JAR_MEASURE = {"": "f", "_precision": "pr", "_recall": "re"}


def expected_columns(predictions, references, synonyms=True, tokenizer="ptb"):
    """The columns as read straight from the recorded output of the text the jar gets (``null`` is NaN)."""
    from capeval.text.ptb import tokenize_corpus

    predictions, references = tokenize_corpus(predictions, references, tokenizer)
    records = spice_fixtures.recorded(synonyms)
    columns = {}
    for column in COLUMNS:
        prefix, suffix = next((p, s) for p in JAR_CATEGORY for s in ("_precision", "_recall", "") if column == p + s)
        values = [records[(test, tuple(refs))][JAR_CATEGORY[prefix]][JAR_MEASURE[suffix]] for test, refs in zip(predictions, references)]
        columns[column] = [math.nan if value is None else value for value in values]
    return columns


def same(a, b):
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def test_the_columns_are_the_jars_output(fake_java, items):
    predictions, references = items
    log = fake_java()
    scores = SpiceScorer().score(predictions, references)
    expected = expected_columns(predictions, references)
    assert list(scores) == list(COLUMNS)
    for column in COLUMNS:
        assert same(scores[column], expected[column]), column
    assert scores["spice"][:4] == pytest.approx([8 / 9, 8 / 9, 0.625, 1 / 3])
    assert scores["spice"][5] == scores["spice"][6] == pytest.approx(0.4)  # the same text once PTB-tokenized
    assert len(spice_fixtures.logged_captions(log)[0]) == 8  # ... sent once, as are captions 0 and 1
    untokenized = SpiceScorer(tokenizer="none").score(predictions, references)
    assert untokenized["spice"][6] == pytest.approx(6 / 13)  # the text as given: no -lrb- -rrb- objects
    assert same(untokenized["spice_object"], expected_columns(predictions, references, tokenizer="none")["spice_object"])


def test_the_corpus_spice_is_pycocoevalcaps_mean_and_the_subsets_skip_undefined_captions(fake_java, items):
    fake_java()
    scores = SpiceScorer().score(*items)
    assert scores.corpus["spice"] == pytest.approx(sum(scores["spice"]) / len(scores["spice"]))
    color = [value for value in scores["spice_color"] if not math.isnan(value)]
    assert len(color) == 2 and scores.corpus["spice_color"] == pytest.approx(sum(color) / 2)
    size = [value for value in scores["spice_size"] if not math.isnan(value)]
    assert scores.corpus["spice_size"] == pytest.approx(sum(size) / len(size)) and len(size) == 4
    assert set(scores.corpus) == set(COLUMNS)
    assert scores.sufficient_statistics[0] == [scores[column][0] for column in COLUMNS] or math.isnan(scores["spice_count"][0])
    half = SpiceScorer().corpus_from_sufficient_statistics(scores.sufficient_statistics[:5])
    assert half["spice"] == pytest.approx(sum(scores["spice"][:5]) / 5)


def test_the_parsing_equals_pycocoevalcaps_on_the_same_output(fake_java, items, tmp_path, monkeypatch):
    """pycocoevalcap's own Spice wrapper, its JVM replaced by a replay of the recorded output, against capeval's scorer."""
    import json

    import pycocoevalcap.spice.spice as reference

    predictions, references = items
    records = spice_fixtures.recorded(True)

    def replay(command, cwd=None):
        given = json.loads(open(command[4]).read())
        output = [{"image_id": item["image_id"], "scores": records[(item["test"], tuple(item["refs"]))]} for item in given]
        open(command[command.index("-out") + 1], "w").write(json.dumps(output, indent=2))

    monkeypatch.setattr(reference, "get_stanford_models", lambda: None)
    monkeypatch.setattr(reference, "__file__", str(tmp_path / "spice.py"))  # its tmp/ and cache/ folders go here
    monkeypatch.setattr(reference.subprocess, "check_call", replay)
    average, per_image = reference.Spice().compute_score({i: refs for i, refs in enumerate(references)},
                                                          {i: [test] for i, test in enumerate(predictions)})
    fake_java()
    scores = SpiceScorer(tokenizer="none").score(predictions, references)
    assert scores.corpus["spice"] == pytest.approx(average, abs=1e-15)
    for column in COLUMNS:
        prefix, suffix = next((p, s) for p in JAR_CATEGORY for s in ("_precision", "_recall", "") if column == p + s)
        theirs = [image[JAR_CATEGORY[prefix]][JAR_MEASURE[suffix]] for image in per_image]
        assert same(scores[column], [float(value) for value in theirs]), column


@pytest.mark.parametrize("version", ["1.8.0_292", "11.0.2", "14.0.2", "15.0.1", "16", "17.0.15", "21.0.1"])
def test_the_same_scores_on_every_java_version(fake_java, items, version):
    log = fake_java(version)
    scores = SpiceScorer().score(*items)
    assert same(scores["spice_object"], expected_columns(*items)["spice_object"])
    (args,) = spice_fixtures.logged_runs(log)
    major = spice_fixtures.major(version)
    assert any(arg.startswith("--add-opens") for arg in args) == (major >= 16)
    assert args[args.index("-cp") + 2].endswith("SpiceJson.java") == (major >= 15)


def test_ptb_tokenized_text_reaches_the_jar_escaped_as_ascii(fake_java):
    log = fake_java()
    scores = SpiceScorer().score(["A dog runs on the grass."], [["A dog running on grass.", "The dog runs on the green grass."]])
    assert spice_fixtures.logged_captions(log) == [["a dog runs on the grass"]]
    assert scores["spice"] == pytest.approx([8 / 9])
    with pytest.warns(UserWarning, match="could not score 1"):  # not recorded: the fake fails on it, as on a bad caption
        SpiceScorer().score(["un café près du chien ☕"], [["a dog"]])
    assert spice_fixtures.logged_captions(log)[-1] == ["un café près du chien ☕"]  # read back from \\u escapes


def test_a_second_call_costs_only_the_new_captions(fake_java, items):
    predictions, references = items
    log = fake_java()
    first = SpiceScorer(tokenizer="none").score(predictions[:6], references[:6])
    again = SpiceScorer(tokenizer="none").score(predictions, references)
    assert spice_fixtures.logged_captions(log) == [predictions[:6], predictions[6:]]
    assert same(again["spice"][:6], first["spice"]) and same(again["spice"], expected_columns(*items, tokenizer="none")["spice"])
    SpiceScorer(tokenizer="none").score(predictions, references)
    assert len(spice_fixtures.logged_runs(log)) == 2  # all cached: no JVM


def test_a_cached_call_needs_neither_java_nor_corenlp(fake_java, items, monkeypatch, tmp_path):
    fake_java()
    first = SpiceScorer().score(*items)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for jar in spice.corenlp_dir().iterdir():
        jar.unlink()
    assert same(SpiceScorer().score(*items)["spice"], first["spice"])


def test_without_the_cache_every_call_runs_the_jar_and_nothing_is_written(fake_java, items):
    log = fake_java()
    scorer = SpiceScorer(cache=False)
    first, second = scorer.score(*items), scorer.score(*items)
    assert len(spice_fixtures.logged_runs(log)) == 2 and same(first["spice"], second["spice"])
    assert not spice.result_cache().path.exists()


def test_repeated_captions_go_to_the_jar_once(fake_java, items):
    predictions, references = items
    log = fake_java()
    scores = SpiceScorer().score([predictions[2], predictions[0], predictions[2]], [references[2], references[0], references[2]])
    assert spice_fixtures.logged_captions(log) == [[predictions[2], predictions[0]]]
    assert scores["spice"][0] == scores["spice"][2] == 0.625


def test_synonyms_are_part_of_the_cache_key(fake_java):
    log = fake_java()
    bike = (["a man rides a bike"], [["a man riding a bicycle", "a person on a bicycle"]])
    with_synonyms, exact = SpiceScorer().score(*bike), SpiceScorer(synonyms=False).score(*bike)
    assert with_synonyms["spice"] == pytest.approx([0.75]) and exact["spice"] == pytest.approx([0.25])
    assert [args[-1] for args in spice_fixtures.logged_runs(log)] == ["-silent", "-noSynsets"]


def test_chunks_and_an_out_of_memory_retried_in_halves_give_the_same_scores(fake_java, items, monkeypatch):
    log = fake_java()
    monkeypatch.setenv("FAKE_JAVA_MAX_ITEMS", "3")
    scorer = SpiceScorer(cache=False, tokenizer="none")
    scorer.chunk_size = 8
    scores = scorer.score(*items)
    assert [len(captions) for captions in spice_fixtures.logged_captions(log)] == [8, 4, 2, 2, 4, 2, 2, 2]
    assert same(scores["spice"], expected_columns(*items, tokenizer="none")["spice"])


def test_a_bad_caption_is_named_left_out_and_the_rest_of_the_table_stands(fake_java, items):
    predictions, references = items
    log = fake_java()
    scorer = SpiceScorer()
    scorer.chunk_size = 4
    bad = [*predictions[:5], "a dog <crash> here", *predictions[5:]]
    with pytest.warns(UserWarning) as caught:
        scores = scorer.score(bad, [*references[:5], ["a dog"], *references[5:]])
    (warning,) = [str(w.message) for w in caught]
    assert warning.startswith("SPICE could not score 1 caption(s), even alone: their SPICE values are NaN")
    assert "#5 'a dog <crash> here': the SPICE jar failed (exit status 1): java.lang.IllegalArgumentException" in warning
    assert all(math.isnan(scores[column][5]) for column in COLUMNS)
    expected = expected_columns(predictions, references)["spice"]
    assert same(scores["spice"][:5] + scores["spice"][6:], expected)
    assert scores.corpus["spice"] == pytest.approx(sum(expected) / len(expected))
    runs = len(spice_fixtures.logged_runs(log))
    with pytest.warns(UserWarning, match="#0 'a dog <crash> here'"):  # not cached: tried again, alone
        scorer.score(["a dog <crash> here", predictions[0]], [["a dog"], references[0]])
    assert spice_fixtures.logged_captions(log)[runs:] == [["a dog <crash> here"]]


def test_a_jar_that_cannot_run_fails_at_once_saying_why(fake_java, items, monkeypatch):
    log = fake_java()
    monkeypatch.setenv("FAKE_JAVA_BROKEN", "1")
    scorer = SpiceScorer()
    scorer.chunk_size = 2
    with pytest.raises(SpiceJarError, match="ClassNotFoundException: edu.stanford.nlp.*look incomplete.*capeval download spice"):
        scorer.score(*items)
    assert len(spice_fixtures.logged_runs(log)) == 1


def test_an_unreadable_output_is_an_error_not_a_retry(fake_java, items, monkeypatch):
    log = fake_java()
    monkeypatch.setattr(spice, "parse_output", lambda text, count: (_ for _ in ()).throw(ValueError("image ids [0], not 0..9")))
    with pytest.raises(SpiceJarError, match=r"image ids \[0\]") as raised:
        SpiceScorer().score(*items)
    assert not raised.value.retry and len(spice_fixtures.logged_runs(log)) == 1


@pytest.mark.parametrize("written", ["missing", "empty"])
def test_a_run_that_exits_0_without_output_is_a_failed_run(fake_java, items, monkeypatch, written):
    fake_java()
    monkeypatch.setenv("FAKE_JAVA_NO_OUTPUT", written)
    predictions, references = items
    with pytest.warns(UserWarning, match="could not score 2 caption") as caught:
        scores = SpiceScorer().score(predictions[2:4], references[2:4])
    assert "#0 'two men ride horses in an arena': the SPICE jar failed (exit status 0): no output" in str(caught[0].message)
    assert all(math.isnan(value) for value in scores["spice"])


def test_without_corenlp_scoring_says_to_run_the_download_command(fake_java, items):
    log = fake_java(corenlp=False)
    with pytest.raises(ModelUnavailableError) as raised:
        SpiceScorer().score(*items)
    assert str(raised.value) == CORENLP_MISSING and "`capeval download spice`" in CORENLP_MISSING and "\n" not in CORENLP_MISSING
    assert spice_fixtures.logged_runs(log) == []
    assert not spice.spice_ready() and SpiceScorer.offline_runs[0].resolved_options() is None


def test_without_java_or_with_java_7_scoring_says_so(fake_java, items, monkeypatch, tmp_path):
    fake_java("1.7.0_95")
    with pytest.raises(ModelUnavailableError, match="SPICE 1.0 needs Java 8 or later; `java` on PATH is Java 7"):
        SpiceScorer().score(*items)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ModelUnavailableError) as raised:
        SpiceScorer().score(*items)
    assert str(raised.value) == JAVA_MISSING
    assert not spice.spice_ready()


def test_without_pycocoevalcap_the_error_names_the_extra(fake_java, items, monkeypatch):
    fake_java()
    monkeypatch.setitem(sys.modules, "pycocoevalcap.spice", None)
    with pytest.raises(ImportError, match=r"pip install capeval\[spice\]"):
        SpiceScorer().score(*items)


def test_ready_where_java_the_jar_and_corenlp_are(fake_java):
    fake_java()
    assert spice.spice_ready()
    (run,) = SpiceScorer.offline_runs
    assert run.label == "SPICE" and run.resolved_options() == {}  # in `capeval score`'s default set


def test_a_progress_bar_counts_the_captions_the_jar_scores(fake_java, items, monkeypatch, capsys):
    fake_java()
    monkeypatch.setattr(spice, "SHOW_AFTER_SECONDS", 0)
    SpiceScorer().score(*items, show_progress=True)
    assert "SPICE" in capsys.readouterr().err
    SpiceScorer(cache=False).score(*items, show_progress=False)
    assert capsys.readouterr().err == ""


def test_options_are_checked_and_shape_the_hashcode():
    assert SpiceScorer().options() == {"version": "1.0", "synonyms": True, "tokenizer": "ptb"}
    assert SpiceScorer(synonyms=False, cache=False).hashcode().startswith("spice(version=1.0,synonyms=False,tokenizer=ptb)_capeval=")
    for bad in ({"synonyms": "yes"}, {"cache": 1}):
        with pytest.raises(ValueError, match="must be True or False"):
            SpiceScorer(**bad)
    with pytest.raises(ValueError, match="tokenizer must be one of"):
        SpiceScorer(tokenizer="spacy")


@pytest.mark.slow  # loading an evaluate module imports evaluate and datasets
def test_the_module_and_evaluate_give_the_jars_columns(fake_java, items):
    predictions, references = items
    fake_java()
    result = capeval.load("spice").compute(predictions=predictions[:3], references=references[:3])
    expected = expected_columns(predictions[:3], references[:3])
    assert result["scores"] == expected["spice"] and result["spice"] == pytest.approx(sum(expected["spice"]) / 3)
    assert same(result["spice_count"], expected["spice_count"]) and result["means"]["spice_count"] == 1.0
    both = capeval.evaluate(predictions[:3], references[:3], metrics=["bleu", "spice"])
    assert both.columns["spice"] == expected["spice"] and "bleu" in both.columns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        capeval.evaluate(predictions[:3], references[:3], metrics=["spice"])  # cached now, and no warning
