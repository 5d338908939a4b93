"""The Spaces start as their app.py files start them, in fresh processes: a metric Space reads its
``CAPEVAL_<METRIC>_<OPTION>`` variables by each option's declared type and refuses one naming no option; the
leaderboard starts on a results file with one benchmark axis, malformed rows or JSON lines; the suite adds the
shipped IDF only where no IDF documents were given."""

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("gradio")

from capeval.integrations.gradio_app import options_from_environment, space_scorer  # noqa: E402
from capeval.integrations.leaderboard import board_note, build_leaderboard_space, scatter_frame, results_table  # noqa: E402
from fixtures import REPO  # noqa: E402
from tiny_models import save_tiny_bert  # noqa: E402

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0", "GRADIO_ANALYTICS_ENABLED": "False"}
START = "import runpy, sys; runpy.run_path(sys.argv[1]); print('started')"


def start(app, env=None, cwd=None):
    """Run a Space's app.py as the Space does, without serving it: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-c", START, str(app)], capture_output=True, text=True, env={**ENV, **(env or {})},
                          cwd=cwd, timeout=300)
    return done.returncode, done.stdout, done.stderr


def test_a_variable_naming_no_option_stops_the_space_with_its_name():
    code, out, err = start(REPO / "metrics" / "bleu" / "app.py", {"CAPEVAL_BLEU_ORDR": "2"})
    assert code != 0 and "started" not in out
    assert err.strip().splitlines()[-1].startswith(
        "ValueError: CAPEVAL_BLEU_ORDR names no option of bleu (did you mean CAPEVAL_BLEU_ORDER?); its variables: "
        "CAPEVAL_BLEU_ORDER, CAPEVAL_BLEU_TOKENIZER, CAPEVAL_BLEU_SMOOTHING"), err


@pytest.mark.slow
def test_a_path_that_looks_like_a_number_stays_a_path(tmp_path):
    save_tiny_bert(tmp_path / "1e5", num_layers=2)
    code, out, err = start(REPO / "metrics" / "bert_tbr" / "app.py", {"CAPEVAL_BERT_TBR_MODEL_NAME": "1e5",
                           "CAPEVAL_BERT_TBR_LAYER": "1", "CAPEVAL_BERT_TBR_BETA": "0.4"}, cwd=tmp_path)
    assert code == 0 and out.strip().endswith("started"), err


@pytest.mark.parametrize("metric, environ, expected", [
    ("bert_tbr", {"CAPEVAL_BERT_TBR_MODEL_NAME": "null", "CAPEVAL_BERT_TBR_LAYER": "08", "CAPEVAL_BERT_TBR_BETA": "1e-1"},
     {"model_name": "null", "layer": 8, "beta": 0.1}),
    ("bert_tbr", {"CAPEVAL_BERT_TBR_IDF_SENTENCES": "a dog, a cat"}, {"idf_sentences": ["a dog", "a cat"]}),
    ("bert_tbr", {"CAPEVAL_BERT_TBR_IDF_SENTENCES": '["a dog, running", "a cat"]'}, {"idf_sentences": ["a dog, running", "a cat"]}),
    ("bertscore", {"CAPEVAL_BERTSCORE_IDF": "TRUE", "CAPEVAL_BERTSCORE_BASELINE_PATH": "2", "CAPEVAL_BERTSCORE_LAYER": ""},
     {"idf": True, "baseline_path": "2"}),
    ("qace", {"CAPEVAL_QACE_ANSWERABILITY": "none", "CAPEVAL_QACE_VARIANT": "img"}, {"answerability": None, "variant": "img"}),
    ("bleu", {"CAPEVAL_BLEU_ORDER": "3", "CAPEVAL_BLEUX_ORDER": "1", "CAPEVAL_OFFLINE": "1"}, {"order": 3}),
])
def test_values_are_read_by_the_declared_type(metric, environ, expected):
    assert options_from_environment(metric, environ) == expected


@pytest.mark.parametrize("metric, environ, message", [
    ("bert_tbr", {"CAPEVAL_BERT_TBR_LAYER": "six"}, "CAPEVAL_BERT_TBR_LAYER='six': layer takes int | None"),
    ("bert_tbr", {"CAPEVAL_BERT_TBR_BETA": "high"}, "CAPEVAL_BERT_TBR_BETA='high': beta takes float | None"),
    ("bertscore", {"CAPEVAL_BERTSCORE_IDF": "maybe"}, "CAPEVAL_BERTSCORE_IDF='maybe': idf takes bool"),
    ("bleu", {"CAPEVAL_BLEU_ORDER": "5"}, "CAPEVAL_BLEU_ORDER='5': order takes one of 1, 2, 3, 4"),
    ("umic", {"CAPEVAL_UMIC_EXTRACTOR": "butd"}, "CAPEVAL_UMIC_EXTRACTOR='butd': extractor takes "),
    ("cider", {"CAPEVAL_CIDER_IDF_SOURCE": "flickr8k"}, "CAPEVAL_CIDER_IDF_SOURCE names no option of cider (did you mean CAPEVAL_CIDER_IDF?)"),
])
def test_a_value_the_option_cannot_take_names_the_variable(metric, environ, message):
    with pytest.raises(ValueError) as raised:
        options_from_environment(metric, environ)
    assert str(raised.value).startswith(message)


def test_the_space_adds_the_shipped_idf_only_without_idf_documents():
    documents = ["a dog runs on the grass", "a cat sleeps on a mat"]
    assert space_scorer("bert_tbr", {}).options()["idf"] == "flickr8k"  # (no model loads to build the scorer)
    given = space_scorer("bert_tbr", {"idf_sentences": documents})
    assert given.idf_sentences == documents and given.options()["idf"] == "given:2"
    assert space_scorer("cider", {}).idf == "flickr8k" and space_scorer("cider", {"idf": "corpus"}).idf == "corpus"
    assert "idf" not in space_scorer("bleu", {}).options()


# --------------------------------------------------------------------------- leaderboard

ROW = {"metric": "bleu", "benchmark": "thumb", "row_set": "P", "statistic": "tau-b", "n": 500, "value": 0.25,
       "low": 0.2, "high": 0.3, "protocol": "THumB"}


def result(*rows, metric="bleu"):
    return {"metric": metric, "benchmark": "thumb", "title": "THumB", "skipped": None, "rows": [{**ROW, "metric": metric, **r} for r in rows]}


def start_board(tmp_path, text):
    """spaces/leaderboard/app.py beside a results.json holding ``text``, started in a fresh process."""
    shutil.copy(REPO / "spaces" / "leaderboard" / "app.py", tmp_path / "app.py")
    (tmp_path / "results.json").write_text(text)
    return start(tmp_path / "app.py")


@pytest.mark.slow
def test_one_benchmark_axis_starts_and_scatters_against_itself(tmp_path):
    results = [result({}), result({"value": 0.4}, metric="cider")]
    code, out, err = start_board(tmp_path, json.dumps(results))
    assert code == 0 and "started" in out, err
    points = scatter_frame(results_table(results), "THumB · P · tau-b", "THumB · P · tau-b")
    assert points.to_dict("records") == [{"metric": "bleu", "x": 0.25, "y": 0.25}, {"metric": "cider", "x": 0.4, "y": 0.4}]


@pytest.mark.slow
def test_malformed_rows_are_left_out_and_counted(tmp_path):
    results = [result({}, {"value": None}, {"value": "high"}, {"low": None}, {"statistic": 3}, {"value": float("nan")},
                      {"low": None, "high": None, "value": 0.5, "row_set": "Q"}),
               {**result({}), "rows": None}, {**result({}), "rows": ["oops"]}]
    path = tmp_path / "results.json"
    code, out, err = start_board(tmp_path, json.dumps(results))
    assert code == 0 and "started" in out, err
    loaded, note = board_note(path)
    assert note == ("**6 of the 8 rows in results.json are left out**: each needs row_set, statistic and metric, a finite "
                    "value, and a 95% interval of two numbers or none.")
    table = results_table(loaded)
    assert table[["row set", "value", "95% interval"]].values.tolist() == [["P", 0.25, "[0.200, 0.300]"], ["Q", 0.5, ""]]
    build_leaderboard_space(path)


@pytest.mark.slow
def test_results_as_json_lines_are_read(tmp_path):
    for results in ([result({})], [result({}), result({"value": 0.4}, metric="cider")]):
        code, out, err = start_board(tmp_path, "\n".join(json.dumps(r) for r in results) + "\n")
        assert code == 0 and "started" in out, err
        loaded, note = board_note(tmp_path / "results.json")
        assert note == "" and [r["metric"] for r in loaded] == [r["metric"] for r in results]


def test_environment_value_keeps_lists_of_text():
    from capeval.declaration import declared_options
    from capeval.integrations.gradio_app import environment_value
    from capeval.registry import entry

    components = next(spec for spec in declared_options(entry("smurf").scorer_class()) if spec.name == "components")
    assert environment_value(components, "sparcs,spurts", "X") == ["sparcs", "spurts"]
    with pytest.raises(ValueError, match="components takes Sequence"):
        environment_value(components, "[1, 2]", "X")
