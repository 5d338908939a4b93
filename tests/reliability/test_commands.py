"""The command line from a fresh process, as a user runs it: a value or one clear line (exit 2), never a traceback,
and mistakes found before any scoring."""

import json

import pytest

from fixtures import ASSETS
from fixtures.commands import ROWS, capeval, one_line, write





@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["--metric", "umic"], "umic need(s) images: pass --images DIR"),                                         # image metric, no images given
    (["--metric", "bleu", "--output", "/proc/capeval/x.json"], "--output: cannot write /proc/capeval/x.json"),
    (["--metric", "blue"], "no capeval metric 'blue'"),
    (["--metrics", "bleu"], "--metrics is spelled --metric NAME"),
    (["--out", "x.json"], "--out is spelled --output"),
])
def test_score_refuses_before_scoring(args, message, tmp_path):
    one_line(*capeval("score", "--input", write(tmp_path / "rows.jsonl", json.dumps(ROWS[0])), *args), message)


def test_an_existing_folder_is_no_output_file(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").touch()
    code, out, err = capeval("score", "--metric", "bleu", "--output", tmp_path / "out", "--overwrite")
    one_line(code, out, err, "it is a folder")


@pytest.mark.slow
@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
    ({"annotations": None}, "no 'annotations' list"),
    ("42", "no 'annotations' list"),
])
def test_bad_annotation_files_are_one_line(content, message, tmp_path):
    results = write(tmp_path / "res.json", [{"image_id": 1, "caption": "a dog"}])
    one_line(*capeval("score", "--results", results, "--annotations", write(tmp_path / "ann.json", content)), message)


@pytest.mark.slow
def test_a_folder_given_as_results_says_so(tmp_path):
    code, out, err = capeval("score", "--results", tmp_path, "--annotations", write(tmp_path / "a.json", {"annotations": []}))
    one_line(code, out, err, "a folder, not a JSON file")


def test_one_row_of_json_lines_is_accepted(tmp_path):
    rows = write(tmp_path / "rows.jsonl", json.dumps({"candidate": "a dog runs", "references": ["a dog runs"]}) + "\n")
    code, out, err = capeval("score", "--input", rows, "--metric", "rouge")
    assert code == 0 and "- rouge: 1.0000 corpus = per-caption mean" in out, err


@pytest.mark.parametrize("args, message", [
    (["--features", "{missing}"], "--features {missing}: no such folder"),
    (["--features", "{empty}"], "the folder is empty"),
    (["--score-key", "nope"], "--score-key: score key 'nope'"),
    (["--samples", "-5"], "--samples -5: give 0"),
    (["--out", "x"], "--out is spelled --output"),
])
def test_benchmark_refuses_before_scoring(args, message, tmp_path):
    (tmp_path / "empty").mkdir()
    folders = {"missing": tmp_path / "missing", "empty": tmp_path / "empty"}
    args = [a.format(**folders) for a in args]
    code, out, err = capeval("benchmark", "--metric", "bleu", "--dataset", "pascal50s", *args)
    assert code == 2 and message.format(**folders) in err and "Traceback" not in err, err


def test_bare_capeval_prints_help_and_version_is_quick():
    code, out, err = capeval()
    assert code == 0 and "score" in out and "benchmark" in out and "reproduce" in out
    code, out, _ = capeval("--version")
    assert code == 0 and out.startswith("capeval ")


@pytest.mark.slow
def test_a_metric_name_wins_over_a_folder_of_that_name(tmp_path):
    """In a working folder that happens to hold a ``bleu`` folder, ``--metric bleu`` is capeval's BLEU (no evaluate)."""
    (tmp_path / "bleu").mkdir()
    code, out, err = capeval("benchmark", "--metric", "bleu", "--dataset", "pascal50s", "--samples", "0", cwd=tmp_path)
    assert code == 0, err
    assert "| bleu | 62.2 | 93.0 | 85.0 | 58.3 | 74.6 |" in out


@pytest.mark.slow
def test_lmms_eval_samples_are_scored_and_a_broken_line_is_one_line(tmp_path):
    """lmms-eval's logged samples from a fresh process: the caption task's file is scored; a line cut short (a run
    killed while writing) is one line naming it."""
    logged = ASSETS / "lmms_eval" / "20260101_120000_samples_coco2017_cap_val.jsonl"
    code, out, err = capeval("score", "--lmms-samples", logged, "--metric", "rouge")
    assert code == 0 and "- rouge: 0.5970 corpus = per-caption mean" in out, err
    cut = write(tmp_path / logged.name, logged.read_text()[:-40])
    one_line(*capeval("score", "--lmms-samples", cut, "--metric", "rouge"), f"{cut}:4: not JSON")
