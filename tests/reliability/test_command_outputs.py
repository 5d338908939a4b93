"""Every command that writes results follows one ``--output`` rule, checked before the work, from a fresh process;
reproduce's score cache survives damage; settings and input files with bad values are one line naming them."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tiny_models import save_tiny_bert

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0", "PYTHONUNBUFFERED": "1"}
ROWS = [{"candidate": "a dog runs on the grass", "references": ["a dog running on grass", "the dog runs"]},
        {"candidate": "a cat sleeps", "references": ["a cat is sleeping", "a kitten naps"]},
        {"candidate": "two men ride horses", "references": ["riders on horses", "two men riding"]}]


def capeval(*args, env=None, cwd=None):
    done = subprocess.run([sys.executable, "-m", "capeval.cli", *map(str, args)], capture_output=True, text=True,
                          env={**ENV, **(env or {})}, cwd=cwd, timeout=300)
    return done.returncode, done.stdout, done.stderr


def one_line(code, err, message):
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, err


#: Each writing command, quick (reproduce clipscore needs no scoring here: its cells need CLIP).
COMMANDS = {"score": ["score", "--offline", "rouge"], "reproduce": ["reproduce", "clipscore"],
            "smurf-report": ["smurf-report"], "benchmark": ["benchmark", "--metric", "bleu", "--dataset", "thumb", "--samples",
                                                            "0", "--no-plots"]}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.slow
def test_every_command_refuses_an_existing_output_until_told(command, tmp_path):
    target = tmp_path / ("results" if command == "benchmark" else "out.json")
    if command == "benchmark":
        target.mkdir()
        (target / "results.md").write_text("old")
        before = (target / "results.md").read_text()
    else:
        target.write_text("old")
        before = target.read_text()
    code, out, err = capeval(*COMMANDS[command], "--output", target)
    one_line(code, err, f"--output: {target} exists; pass --overwrite")
    assert (target / "results.md" if command == "benchmark" else target).read_text() == before
    code, out, err = capeval(*COMMANDS[command], "--output", target, "--overwrite")
    assert code == 0, err
    written = (target / "results.md" if command == "benchmark" else target).read_bytes()
    assert written != before.encode()
    if command == "reproduce":
        assert [cell["row"] for cell in json.loads(written)] == ["CLIP-S", "CLIP-S", "RefCLIP-S", "RefCLIP-S"]
        text = written.decode()
        assert text.startswith('[\n {\n  "paper": "clipscore",') and '"column": "Flickr8k-Expert τ-c"' in text  # as written, unescaped


@pytest.mark.parametrize("command", ["score", "reproduce", "smurf-report"])
@pytest.mark.parametrize("place, message", [("/proc/capeval/x.json", "cannot write /proc/capeval/x.json"),
                                            ("{folder}", "it is a folder")])
def test_an_output_that_cannot_be_written_is_refused_before_the_work(command, place, message, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").touch()
    place = place.format(folder=tmp_path / "taken")
    code, out, err = capeval(*COMMANDS[command], "--output", place, "--overwrite")
    one_line(code, err, f"--output: {message if message.startswith('cannot') else f'cannot write {place}: {message}'}")
    assert out == ""  # nothing scored, nothing printed


# --------------------------------------------------------------------------- reproduce's score cache

@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "reproduce"


@pytest.mark.parametrize("damage", [
    b"",                                                     # cut short
    b"\x93NUMPY garbage",                                    # a header and nothing else
    "object",                                                # a pickled object array (np.load would ask for allow_pickle)
    "short",                                                 # scores of other items
    "nan",                                                   # a non-finite score
])
def test_a_damaged_cache_entry_is_dropped_and_recomputed(cache, damage):
    from capeval.benchmarks.reproduce import cached_scores
    from capeval.benchmarks.rowsets import Benchmark, Items

    bench = Benchmark("rows", "rows", Items([row["candidate"] for row in ROWS], [row["references"] for row in ROWS], ["", "", ""]))
    fresh = cached_scores(("rouge", {}, "scores"), bench, "digest")
    (path,) = cache.iterdir()
    assert np.array_equal(np.load(path), fresh)
    if isinstance(damage, bytes):
        path.write_bytes(damage)
    else:
        values = {"object": np.array([{"a": 1}, None, 3], dtype=object), "short": fresh[:2], "nan": np.array([np.nan, 1.0, 1.0])}
        with open(path, "wb") as out:
            np.save(out, values[damage], allow_pickle=True)
    with pytest.warns(UserWarning, match=f"the cached scores {path} are damaged .*: dropped and computed again"):
        again = cached_scores(("rouge", {}, "scores"), bench, "digest")
    assert np.array_equal(again, fresh) and np.array_equal(np.load(path), fresh)


def test_a_sound_cache_entry_is_read_not_recomputed(cache, monkeypatch):
    import warnings

    from capeval.benchmarks import harness
    from capeval.benchmarks.reproduce import cached_scores
    from capeval.benchmarks.rowsets import Benchmark, Items

    bench = Benchmark("rows", "rows", Items([row["candidate"] for row in ROWS], [row["references"] for row in ROWS], ["", "", ""]))
    fresh = cached_scores(("rouge", {}, "scores"), bench, "digest")
    monkeypatch.setattr(harness, "as_scoring_metric", pytest.fail)  # a second scoring would fail the test
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(cached_scores(("rouge", {}, "scores"), bench, "digest"), fresh)


def test_an_entry_another_run_dropped_first_is_no_error(cache, monkeypatch):
    """Two runs that find one damaged entry both drop it: the second finds it gone, which is what it wanted."""
    from capeval.benchmarks import reproduce

    cache.mkdir(parents=True)
    path = cache / "gone.npy"
    path.write_bytes(b"")

    def load_after_another_run(file, allow_pickle):
        path.unlink()  # the other run drops it between our check and our read
        raise ValueError("cut short")

    monkeypatch.setattr(reproduce.np, "load", load_after_another_run)
    with pytest.warns(UserWarning, match="gone.npy are damaged"):
        assert reproduce.read_cached_scores(path, 3) is None


class Planted:
    """An object whose unpickling leaves a file behind: a cache entry must never be unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_cache_entry_is_never_unpickled(cache, tmp_path):
    from capeval.benchmarks.reproduce import cached_scores
    from capeval.benchmarks.rowsets import Benchmark, Items

    bench = Benchmark("rows", "rows", Items([row["candidate"] for row in ROWS], [row["references"] for row in ROWS], ["", "", ""]))
    fresh = cached_scores(("rouge", {}, "scores"), bench, "digest")
    (path,) = cache.iterdir()
    with open(path, "wb") as out:
        np.save(out, np.array([Planted(str(tmp_path / "unpickled")), 1, 2], dtype=object), allow_pickle=True)
    with pytest.warns(UserWarning, match="damaged"):
        assert np.array_equal(cached_scores(("rouge", {}, "scores"), bench, "digest"), fresh)
    assert not (tmp_path / "unpickled").exists()


def test_a_cache_setting_that_names_a_file_is_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")
    code, out, err = capeval("reproduce", "pacs", "--row", "BLEU-1", env={"CAPEVAL_CACHE": str(tmp_path / "a-file")})
    one_line(code, err, f"CAPEVAL_CACHE={tmp_path / 'a-file'} is a file: point it at a folder")


# --------------------------------------------------------------------------- settings and input files

@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    return str(save_tiny_bert(tmp_path_factory.mktemp("bert"), num_layers=2))


def test_a_cache_setting_names_the_cache_folder(tmp_path, monkeypatch):
    from pathlib import Path

    from capeval.settings import cache_dir

    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "new"))
    assert cache_dir() == tmp_path / "new" and not (tmp_path / "new").exists()  # made when first written to
    monkeypatch.setenv("CAPEVAL_CACHE", "~/elsewhere")
    assert cache_dir() == Path.home() / "elsewhere"
    for unset in ("", None):
        monkeypatch.setenv("CAPEVAL_CACHE", unset) if unset is not None else monkeypatch.delenv("CAPEVAL_CACHE")
        assert cache_dir() == Path.home() / ".cache" / "capeval"


@pytest.mark.parametrize("value, megabytes", [("0", 0), (" 2 ", 2), ("", 1024)])
def test_an_encoding_cache_setting_of_zero_turns_the_caches_off(value, megabytes, monkeypatch):
    from capeval.settings import encoding_cache_bytes

    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", value)
    assert encoding_cache_bytes() == megabytes * 2**20


def test_an_offline_setting_is_any_of_its_variables_set_to_yes(monkeypatch):
    from capeval.settings import OFFLINE_VARIABLES, offline

    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert offline() is False
    for name in OFFLINE_VARIABLES:
        for value in ("1", " True ", "yes", "ON"):
            monkeypatch.setenv(name, value)
            assert offline() is True, (name, value)
        monkeypatch.setenv(name, "0")
        assert offline() is False
        monkeypatch.delenv(name)


@pytest.mark.parametrize("value", ["abc", "-5", "nan"])
def test_a_bad_encoding_cache_size_names_the_variable(value, tmp_path, tiny_bert):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(row) for row in ROWS))
    code, out, err = capeval("score", "--input", rows, "--metric", f"bert_tbr:model_name={tiny_bert},layer=2,beta=0.4",
                             env={"CAPEVAL_ENCODING_CACHE_MB": value})
    one_line(code, err, f"CAPEVAL_ENCODING_CACHE_MB must be a number of megabytes >= 0 (0 turns the caches off), got {value!r}")


def test_human_scores_on_some_rows_are_named_not_used(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({**row, **({"human_score": 3.5} if i else {})}) for i, row in enumerate(ROWS)))
    code, out, err = capeval("score", "--input", rows, "--metric", "rouge")
    assert code == 0, err
    assert "(2 of 3 rows have a human_score: they are shown and correlated only when every row has one)" in out
    assert "Kendall" not in out and "| # | rouge | candidate |" in out
    rows.write_text("\n".join(json.dumps({**row, "human_score": 1.0 + i}) for i, row in enumerate(ROWS)))
    code, out, err = capeval("score", "--input", rows, "--metric", "rouge")
    assert code == 0 and "| # | human | rouge | candidate |" in out and "Kendall τ-b" in out and "rows have a human_score" not in out


@pytest.mark.parametrize("value", ['"high"', "true", "NaN"])
def test_a_human_score_that_is_no_number_is_one_line(value, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(row)[:-1] + f', "human_score": {value}}}' for row in ROWS))
    code, out, err = capeval("score", "--input", rows, "--metric", "rouge")
    one_line(code, err, "rows.jsonl:1: 'human_score' must be a number, got ")


def test_a_one_row_json_lines_results_file_is_accepted(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"image_id": 7, "caption": "a dog runs"}) + "\n")
    annotations = tmp_path / "captions.json"
    annotations.write_text(json.dumps({"annotations": [{"image_id": 7, "caption": "a dog runs fast"}]}))
    code, out, err = capeval("score", "--results", results, "--annotations", annotations, "--metric", "rouge")
    assert code == 0 and "Scoring 1 captions" in out, err


def write_rows(path, rows):
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return str(path)


def test_one_human_score_among_several_rows_is_named(tmp_path, capsys):
    from capeval.cli import main

    rows = write_rows(tmp_path / "rows.jsonl", [{**row, **({"human_score": 2.0} if i == 1 else {})} for i, row in enumerate(ROWS)])
    assert main(["score", "--input", rows, "--metric", "rouge"]) == 0
    out = capsys.readouterr().out
    assert "(1 of 3 rows have a human_score" in out and "| # | rouge | candidate |" in out


def test_ray_scores_only_when_asked_and_text_metrics_only(tmp_path, capsys, monkeypatch):
    """In this process, with Ray's scoring replaced by a spy: the local engine never calls it; --engine ray calls it
    for every text metric and refuses image metrics (given images or region features) in one line."""
    from capeval import distributed
    from capeval.cli import main
    from capeval.scoring.protocol import score_checked

    called = []

    def spy(scorer, predictions, references, **options):
        called.append(scorer.metric)
        return score_checked(scorer, predictions, references)

    monkeypatch.setattr(distributed, "score_on_ray", spy)
    rows = write_rows(tmp_path / "rows.jsonl", [{**row, "image": f"{i}.jpg"} for i, row in enumerate(ROWS)])
    assert main(["score", "--input", rows, "--metric", "rouge"]) == 0 and called == []
    assert main(["score", "--input", rows, "--metric", "rouge", "--metric", "bleu", "--engine", "ray"]) == 0
    assert called == ["rouge", "bleu"]
    (tmp_path / "features").mkdir()
    for i in range(len(ROWS)):
        (tmp_path / "features" / f"{i}.npz").touch()
    capsys.readouterr()
    assert main(["score", "--input", rows, "--metric", "umic", "--features", str(tmp_path / "features"), "--engine", "ray"]) == 2
    assert "--engine ray scores text metrics here" in capsys.readouterr().err and called == ["rouge", "bleu"]


@pytest.mark.parametrize("count, shown", [(20, True), (21, False)])
def test_printed_rows_stop_at_twenty(count, shown, tmp_path, capsys):
    from capeval.cli import PRINTED_ROWS, main

    assert PRINTED_ROWS == 20
    rows = write_rows(tmp_path / "rows.jsonl", [ROWS[i % 3] for i in range(count)])
    assert main(["score", "--input", rows, "--metric", "rouge"]) == 0
    out = capsys.readouterr().out
    assert ("| # | rouge | candidate |" in out) is shown and (f"({count} rows: per-caption scores go to --output)" in out) is not shown


@pytest.mark.parametrize("scipy", [True, False])
@pytest.mark.parametrize("count, correlated", [(2, False), (3, True)])
def test_kendall_needs_three_rows_with_human_scores(count, correlated, scipy, tmp_path, capsys, monkeypatch):
    import importlib.util

    from capeval.cli import main

    if not scipy:
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "scipy" else real(name, *rest))
    rows = write_rows(tmp_path / "rows.jsonl", [{**ROWS[i], "human_score": float(i)} for i in range(count)])
    assert main(["score", "--input", rows, "--metric", "rouge"]) == 0
    out = capsys.readouterr().out
    assert "| # | human | rouge | candidate |" in out and ("Kendall τ-b" in out) is correlated
    assert ("Kendall τ-b against the human scores (n = 3" in out) is (correlated and scipy)
    assert ("needs scipy: pip install 'capeval[benchmarks]'" in out) is (correlated and not scipy)
