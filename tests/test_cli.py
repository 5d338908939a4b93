"""`capeval score` on the bundled sample and on a user file."""

import json

import pytest

from capeval.cli import load_sample, main


def test_score_bundled_sample(capsys):
    assert main(["score", "--metrics", "bert_tbr,bleu,smurf"]) == 0
    out = capsys.readouterr().out
    assert "Scoring 16 captions (bundled Flickr8k-Expert sample)" in out
    assert "all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased" in out
    assert "- SPARCS: mean" in out and "- BLEU-4: mean" in out and "Kendall τ-b" in out
    assert len(load_sample()) == 16


def test_score_a_user_file(tmp_path, capsys):
    rows = [{"candidate": "a dog runs", "references": ["a dog running", "a brown dog"]},
            {"candidate": "a cat", "references": ["a cat sleeps"]}]
    source = tmp_path / "captions.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    target = tmp_path / "scores.json"
    assert main(["score", "--input", str(source), "--output", str(target), "--metrics", "rouge"]) == 0
    scores = json.loads(target.read_text())["scores"]
    assert list(scores) == ["ROUGE-L"] and len(scores["ROUGE-L"]) == 2
    assert "Kendall" not in capsys.readouterr().out  # no human scores in the file


def test_bad_inputs(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps({"caption": "a dog"}))
    with pytest.raises(ValueError, match="needs 'candidate' and 'references'"):
        main(["score", "--input", str(source)])
    with pytest.raises(SystemExit, match="no offline metric module named \\['nope'\\]"):
        main(["score", "--metrics", "nope"])


def test_missing_checkpoint_is_reported_without_a_traceback(capsys):
    assert main(["benchmark", "--metric", "bert_tbr", "--dataset", "flickr8k_expert", "--samples", "0", "--no-plots"]) == 2
    assert "capeval benchmark: The tokenizer 'bert-base-uncased' is not available locally" in capsys.readouterr().err
