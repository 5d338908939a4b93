"""``capeval score --metric spice``: without CoreNLP one line naming ``capeval download spice`` (exit 2); with it (the
fake ``java``), the SPICE column beside the others in the summary, the table and ``--output``."""

import json

import pytest

from capeval import cli



@pytest.fixture
def captions(tmp_path, items):
    predictions, references = items
    path = tmp_path / "captions.jsonl"
    rows = [{"image_id": 100 + i, "candidate": candidate, "references": refs}
            for i, (candidate, refs) in enumerate(zip(predictions[:4], references[:4]))]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_without_corenlp_one_line_names_the_download_command(fake_java, captions, capsys):
    fake_java(corenlp=False)
    assert cli.main(["score", "--input", str(captions), "--metric", "spice"]) == 2
    err = capsys.readouterr().err
    assert err == f"capeval score: {spice_fixtures_missing()}\n"
    assert "`capeval download spice`" in err


def spice_fixtures_missing():
    from capeval.scoring.spice import CORENLP_MISSING

    return CORENLP_MISSING


def test_the_spice_column_beside_the_others(fake_java, captions, tmp_path, capsys):
    fake_java()
    output = tmp_path / "scores.json"
    assert cli.main(["score", "--input", str(captions), "--metric", "bleu", "--metric", "spice", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    expected = [8 / 9, 8 / 9, 0.625, 1 / 3]
    mean = sum(expected) / 4
    spice_line = next(line for line in out.splitlines() if line.startswith("- spice:"))
    assert spice_line.startswith(f"- spice: {mean:.4f} corpus = per-caption mean (spice_precision ")  # the mean of the F-scores
    assert "spice_object 0.8810" in spice_line and "spice_count 1.0000" in spice_line
    assert any(line.startswith("- bleu: ") and line.endswith(")") for line in out.splitlines())
    header = next(line for line in out.splitlines() if line.startswith("| #"))
    assert header == "| # | bleu | spice | candidate |"
    assert "| 102 | " in out and "| 0.6250 | two men ride horses in an arena |" in out
    document = json.loads(output.read_text())
    assert document["system"]["spice"] == pytest.approx(mean)
    assert document["scores"]["spice"] == pytest.approx(expected) and len(document["scores"]["spice_size"]) == 4
    assert document["images"][2]["spice_relation"] == pytest.approx(1 / 3) and document["images"][2]["image_id"] == 102
    assert document["metrics"]["spice"]["column"] == "spice" and document["metrics"]["spice"]["hashcode"].startswith("spice(")


@pytest.mark.parametrize("metrics, advice", [(["bleu", "spice", "rouge"], "; to score bleu, rouge without it, leave out --metric spice"),
                                             (["spice"], "")])
def test_spice_without_corenlp_stops_before_any_work(tmp_path, monkeypatch, capsys, metrics, advice):
    pytest.importorskip("pycocoevalcap", reason="SPICE's jar comes with pycocoevalcap")
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "empty-cache"))  # no CoreNLP installed there
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")  # Java or not: CoreNLP is what lacks
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps({"candidate": "a dog", "references": ["a dog runs"]}) + "\n")
    assert cli.main(["score", "--input", str(source), *(f for m in metrics for f in ("--metric", m))]) == 2
    out, err = capsys.readouterr()
    assert "Scoring" not in out and len(err.strip().splitlines()) == 1
    assert err.startswith("capeval score: SPICE needs Stanford CoreNLP 3.6.0, which is not installed: run "
                          "`capeval download spice`") and err.strip().endswith(")" + advice)
