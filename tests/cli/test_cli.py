"""`capeval score` on the bundled sample and on a user file."""

import json

import pytest

import capeval
from capeval.cli import main
from capeval.samples import sample_captions as load_sample


@pytest.mark.models
def test_score_bundled_sample(capsys):
    assert main(["score", "--offline", "bert_tbr,bleu,smurf"]) == 0
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
    assert main(["score", "--input", str(source), "--output", str(target), "--offline", "rouge"]) == 0
    scores = json.loads(target.read_text())["scores"]
    # "a dog runs": LCS 2 of 3 with either reference; "a cat": precision 1, recall 2/3, F with β = 1.2.
    assert scores == {"rouge_l": pytest.approx([2 / 3, 2.44 * (2 / 3) / (2 / 3 + 1.44)])}
    assert "Kendall" not in capsys.readouterr().out  # no human scores in the file


COCO_ANNOTATIONS = {"images": [{"id": 1}, {"id": 2}, {"id": 3}], "annotations": [
    {"id": 10, "image_id": 1, "caption": "A dog runs on the grass."}, {"id": 11, "image_id": 1, "caption": "a brown dog running"},
    {"id": 12, "image_id": 2, "caption": "two men ride horses"}, {"id": 13, "image_id": 2, "caption": "riders on horses"},
    {"id": 14, "image_id": 3, "caption": "a cat sleeps"}]}


def write(folder, name, value):
    path = folder / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def test_score_coco_results_with_model_options(tmp_path, capsys):
    results = write(tmp_path, "results.json", [{"image_id": 2, "caption": "two men riding horses"},
                                               {"image_id": 1, "caption": "a dog runs"}])
    annotations = write(tmp_path, "captions_val.json", COCO_ANNOTATIONS)
    target = tmp_path / "scores.json"
    assert main(["score", "--results", results, "--annotations", annotations, "--metric", "bleu:order=2",
                 "--metric", "cider", "--metric", "cider:idf=flickr8k", "--output", str(target)]) == 0
    out = capsys.readouterr().out
    assert "Scoring 2 captions" in out and "| # | bleu(order=2) | cider | cider(idf=flickr8k) | candidate |" in out
    assert "IDF from the references of the 2 scored captions (too few for meaningful weights: try idf=flickr8k)" in out
    assert "IDF from the Flickr8k references shipped with capeval" in out
    written = json.loads(target.read_text())
    predictions, references = ["two men riding horses", "a dog runs"], [["two men ride horses", "riders on horses"],
                                                                        ["A dog runs on the grass.", "a brown dog running"]]
    bleu = capeval.load("bleu", order=2).compute(predictions=predictions, references=references)
    assert written["system"]["bleu"] == pytest.approx(bleu["bleu"], abs=1e-12)
    assert [written["system"][f"bleu_{n}"] for n in range(1, 5)] == pytest.approx([bleu[f"bleu_{n}"] for n in range(1, 5)], abs=1e-12)
    assert written["system"]["cider_idf_flickr8k"] != written["system"]["cider"]
    assert [image["image_id"] for image in written["images"]] == [2, 1]
    assert written["images"][1]["bleu"] == pytest.approx(bleu["scores"][1], abs=1e-12)
    assert written["metrics"]["cider"]["hashcode"].startswith("cider_d(")
    # JSON lines results work too.
    lines = write(tmp_path, "results.jsonl", '{"image_id": 3, "caption": "a cat"}\n{"image_id": 1, "caption": "a dog"}\n')
    assert main(["score", "--results", lines, "--annotations", annotations, "--metric", "rouge"]) == 0


@pytest.mark.parametrize("arguments, message", [
    (["--input", "{missing}"], "missing.jsonl: no such file"),
    (["--input", "{bad_json}"], "bad.jsonl:2: not JSON"),
    (["--input", "{wrong_key}"], "wrong.jsonl:1: each row needs 'candidate' and 'references'"),
    (["--results", "{unknown_ids}", "--annotations", "{annotations}"], "1 image id(s) not in"),
    (["--results", "{empty_caption}", "--annotations", "{annotations}"], "result 1 (image 1): empty caption"),
    (["--results", "{unknown_ids}"], "--results and --annotations go together"),
    (["--metric", "bleu:max_order=2"], "--metric bleu:max_order=2: bleu: unknown option(s) ['max_order']; valid options: ['order', 'tokenizer', 'smoothing']"),
    (["--metric", "bleu:order=7"], "order must be one of (1, 2, 3, 4)"),
    (["--metric", "blue"], "no capeval metric 'blue'"),
    (["--offline", "nope"], "no offline configuration of ['nope']"),
    (["--metrics", "bleu"], "--metrics is spelled --metric NAME"),
])
def test_mistakes_are_one_line_and_exit_2(arguments, message, tmp_path, capsys):
    files = {"missing": str(tmp_path / "missing.jsonl"),
             "bad_json": write(tmp_path, "bad.jsonl", '{"candidate": "a", "references": ["b"]}\n{"candidate": \n'),
             "wrong_key": write(tmp_path, "wrong.jsonl", '{"caption": "a dog"}\n'),
             "annotations": write(tmp_path, "ann.json", COCO_ANNOTATIONS),
             "unknown_ids": write(tmp_path, "res.json", [{"image_id": 1, "caption": "a dog"}, {"image_id": 99, "caption": "x"}]),
             "empty_caption": write(tmp_path, "empty.json", [{"image_id": 1, "caption": "  "}])}
    assert main(["score", *(a.format(**files) for a in arguments)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capeval score: ") and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_benchmark_mistakes_are_one_line_and_exit_2(capsys):
    assert main(["benchmark", "--metric", "bleu:max_order=2", "--dataset", "pascal50s", "--samples", "0"]) == 2
    assert "unknown option(s) ['max_order']" in capsys.readouterr().err
    assert main(["benchmark", "--metric", "bleu", "--dataset", "pascal50s", "--protocol", "refz=random5:0"]) == 2
    assert "--protocol ['refz']: no chosen benchmark takes it" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_code:
        main(["--version"])
    assert exit_code.value.code == 0 and capsys.readouterr().out.strip() == f"capeval {capeval.__version__}"


def test_missing_checkpoint_is_reported_without_a_traceback(capsys):
    assert main(["benchmark", "--metric", "bert_tbr", "--dataset", "flickr8k_expert", "--samples", "0", "--no-plots"]) == 2
    assert "capeval benchmark: The tokenizer 'bert-base-uncased' is not available locally" in capsys.readouterr().err
