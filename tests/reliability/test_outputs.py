"""Results are never overwritten without asking, appear whole or not at all, and Ctrl-C is one line."""

import json

import pytest

from capeval.atomic import partial_file, partial_folder
from capeval.benchmarks import harness
from capeval.benchmarks.harness import run_benchmark, write_outputs
from capeval.cli import main


def length(predictions, references):
    return [len(p) for p in predictions]


@pytest.fixture(scope="module")
def thumb_result():
    return run_benchmark(length, "thumb", num_samples=0, verbose=False, metric_name="length")


def test_a_second_benchmark_output_is_refused_then_replaced_whole(tmp_path, thumb_result):
    out = tmp_path / "results"
    first = write_outputs([thumb_result], out)
    assert [p.name for p in first] == ["results.md", "results.csv", "results.json", "scatter_length_thumb.png"]
    with pytest.raises(FileExistsError, match="pass --overwrite"):
        write_outputs([thumb_result], out, plots=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in first)
    write_outputs([thumb_result], out, plots=False, overwrite=True)
    # The old plot went with the old run: nothing of it is left beside the new tables.
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "results.json", "results.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_an_interrupted_write_leaves_the_old_results_and_no_partial_folder(tmp_path, thumb_result, monkeypatch):
    out = tmp_path / "results"
    write_outputs([thumb_result], out, plots=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("capeval.benchmarks.plots.scatter_plot", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_outputs([thumb_result], out, overwrite=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_partial_files_and_folders_vanish_on_failure(tmp_path):
    with pytest.raises(RuntimeError):
        with partial_file(tmp_path / "model.pt") as out:
            out.write(b"half")
            raise RuntimeError("cut short")
    with pytest.raises(RuntimeError):
        with partial_folder(tmp_path / "tables") as folder:
            (folder / "results.md").write_text("half")
            raise RuntimeError("cut short")
    assert list(tmp_path.iterdir()) == []


def test_score_output_is_refused_without_overwrite(tmp_path, capsys):
    target = tmp_path / "scores.json"
    assert main(["score", "--offline", "bleu", "--output", str(target)]) == 0
    first = target.read_text()
    capsys.readouterr()
    assert main(["score", "--offline", "rouge", "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists; pass --overwrite" in err
    assert target.read_text() == first
    assert main(["score", "--offline", "rouge", "--output", str(target), "--overwrite"]) == 0
    assert list(json.loads(target.read_text())["system"]) == ["rouge_l"]
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_benchmark_out_is_refused_before_scoring(tmp_path, capsys, monkeypatch):
    out = tmp_path / "results"
    command = ["benchmark", "--metric", "bleu", "--dataset", "thumb", "--samples", "0", "--no-plots", "--output", str(out)]
    assert main(command) == 0
    capsys.readouterr()
    monkeypatch.setattr(harness, "run_benchmarks", pytest.fail)  # refused before any scoring
    assert main(command) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err


def test_ctrl_c_is_one_line_and_exit_code_130(capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("capeval.cli.read_input", interrupted)
    assert main(["score", "--offline", "bleu"]) == 130
    assert capsys.readouterr().err == "capeval score: interrupted\n"
