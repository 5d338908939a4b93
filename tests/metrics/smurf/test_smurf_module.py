"""The SMURF evaluate module, its Space app and the system-report command."""

import math

import pytest

import capeval
from capeval.scoring.smurf import SmurfScorer, fuse, grammar_penalty, standardize, style_reward

PREDICTIONS = ["A man riding a motorcycle down a dirt road.", "a couple of people that are eating some food", "."]
REFERENCES = [
    ["man riding a motor bike on a dirt road on the countryside", "a man riding on the back of a motorcycle"],
    ["a young girl is preparing to blow out her candle", "girl blowing out the candle on an ice-cream"],
    ["a dog"],
]


@pytest.fixture(scope="module")
def tiny_smurf(load_metric, tiny_roberta_path, tiny_distilbert_path):
    return load_metric("smurf", spurts_model=tiny_roberta_path, mima_model=tiny_distilbert_path, device="cpu")


def test_scores_every_component_raw_and_standardized(tiny_smurf):
    result = tiny_smurf.compute(predictions=PREDICTIONS, references=REFERENCES)
    for key in ("scores", "sparcs", "spurts", "mima", "sparcs_standardized", "spurts_standardized", "mima_standardized",
                "style_reward", "grammar_penalty"):
        assert len(result[key]) == 3 and all(math.isfinite(v) for v in result[key]), key
        if key != "scores":
            assert result["means"][key] == pytest.approx(sum(result[key]) / 3), key
    # Each derived column is what the released formulas make of the raw components.
    for component in ("sparcs", "spurts", "mima"):
        assert result[f"{component}_standardized"] == pytest.approx(standardize(result[component], component).tolist())
    assert result["style_reward"] == pytest.approx(style_reward(result["spurts_standardized"]).tolist())
    assert result["grammar_penalty"] == pytest.approx(grammar_penalty(result["mima_standardized"]).tolist())
    assert result["scores"] == pytest.approx(fuse(result["sparcs"], result["spurts"], result["mima"])["smurf"].tolist())
    assert result["smurf"] == pytest.approx(sum(result["scores"]) / 3)
    assert result["sparcs"][:2] == pytest.approx([7 / 9, 0.0])
    # "." preprocesses to "": 0 on every component, as released
    assert (result["sparcs"][2], result["spurts"][2], result["mima"][2]) == (0.0, 0.0, 0.0)
    assert result["hashcode"].startswith("smurf(components=sparcs+spurts+mima,") and "fusion=code" in result["hashcode"]


def test_paper_fusion_and_no_preprocessing(load_metric, tiny_roberta_path, tiny_distilbert_path, tiny_smurf):
    paper = load_metric("smurf", fusion="paper", spurts_model=tiny_roberta_path, mima_model=tiny_distilbert_path, device="cpu")
    code = tiny_smurf.compute(predictions=PREDICTIONS[:1], references=REFERENCES[:1])
    summed = paper.compute(predictions=PREDICTIONS[:1], references=REFERENCES[:1])
    assert summed["scores"][0] == pytest.approx(3 * code["scores"][0])
    raw = load_metric("smurf", components="sparcs", preprocess=False)
    # Without lower-casing "A" is no stop word: an unmatched concept.
    assert raw.compute(predictions=["A dirt road"], references=[["a dirt road"]])["scores"][0] == pytest.approx(0.8)
    assert load_metric("smurf", components="sparcs").compute(predictions=["A dirt road"], references=[["a dirt road"]])["scores"][0] == 1.0
    assert "preprocess=False" in raw.compute(predictions=["a"], references=["a"])["hashcode"]


def test_sparcs_alone_loads_no_model(load_metric, monkeypatch):
    import capeval.scoring.smurf as smurf

    monkeypatch.setattr(smurf, "get_text_encoder", lambda *a, **k: pytest.fail("SPARCS alone must not load a model"))
    metric = load_metric("smurf", components=["sparcs"])
    result = metric.compute(predictions=["a man riding a motorcycle"], references=["a man on a motorcycle"])
    # SPARCS takes SMURF's place: its corpus value and per-caption scores, as every capeval result has them.
    assert set(result) == {"sparcs", "scores", "sparcs_standardized", "means", "hashcode"}
    assert result["scores"] == [result["sparcs"]] and result["hashcode"].startswith("smurf(")


def test_reference_free_components_take_no_references(load_metric, tiny_roberta_path, tiny_distilbert_path):
    metric = load_metric("smurf", components=["mima", "spurts"], spurts_model=tiny_roberta_path, mima_model=tiny_distilbert_path, device="cpu")
    result = metric.compute(predictions=["a man riding a horse", "two dogs"])
    assert len(result["mima"]) == 2 and "sparcs" not in result
    direct = SmurfScorer(["spurts", "mima"], spurts_model=tiny_roberta_path, mima_model=tiny_distilbert_path,
                         device="cpu").score(["a man riding a horse", "two dogs"])
    # SPURTS (the first component computed) is the configuration's score.
    assert result["mima"] == direct["mima"] and result["scores"] == direct["spurts"]
    assert result["spurts"] == pytest.approx(sum(direct["spurts"]) / 2)
    assert all(0.0 < value < 1.0 for value in result["mima"] + result["scores"])
    assert len(metric.compute(predictions=["a man"], references=[["ignored"]])["scores"]) == 1


def test_option_errors(load_metric):
    with pytest.raises(TypeError, match="unknown option\\(s\\) \\['fuse'\\]"):
        load_metric("smurf", fuse=True)
    with pytest.raises(ValueError, match="components must be distinct names"):
        load_metric("smurf", components=["sparcs", "bleu"])
    with pytest.raises(ValueError, match="fusion must be one of"):
        load_metric("smurf", fusion="sum")


def test_missing_checkpoint_names_the_model(load_metric):
    metric = load_metric("smurf", components=["mima"])
    with pytest.raises(OSError, match="distilbert-base-uncased"):
        metric.compute(predictions=["a dog"])


def test_space_shows_every_part_and_labels_the_offline_stand_in(serve, tiny_roberta_path, tiny_distilbert_path):
    pytest.importorskip("gradio")
    from capeval.integrations.gradio_app import build_metric_space

    options = {"spurts_model": tiny_roberta_path, "mima_model": tiny_distilbert_path, "device": "cpu"}
    client = serve(build_metric_space("smurf", options=options))
    table, chart, details = client.predict("a man riding a motorcycle\na dog", "a man riding on the back of a motorcycle\nman on a motor bike",
                                           api_name="/score")
    assert {"candidate", "smurf", "sparcs", "spurts", "mima", "grammar_penalty"} <= set(table["headers"])
    expected = capeval.load("smurf", **options).compute(predictions=["a man riding a motorcycle", "a dog"],
                                                        references=[["a man riding on the back of a motorcycle", "man on a motor bike"]] * 2)
    column = table["headers"].index("smurf")
    assert [row[column] for row in table["data"]] == [*(f"{v:.4f}" for v in expected["scores"]), f"{expected['smurf']:.4f}"]
    # The paper's checkpoints are absent offline: the Space runs SPARCS alone and says so.
    offline = build_metric_space("smurf")
    notes = " ".join(str(block.value) for block in offline.blocks.values() if type(block).__name__ == "Markdown")
    assert "Offline stand-in" in notes and "SPURTS/MIMA need distilroberta-base" in notes


def test_report_command_writes_the_png(tmp_path, capsys):
    from capeval.cli import main

    output = tmp_path / "report.png"
    assert main(["smurf-report", "--output", str(output)]) == 0
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and output.stat().st_size > 50_000
    table = capsys.readouterr().out
    assert "| C1 (human) | +0.000 | +0.000 | +0.630 | 1.000 | -44.925 |" in table
    assert "-7.467" in table and "-7.561" in table and "-4.465" in table


def test_report_from_a_scores_file(tmp_path):
    import json

    from capeval.reports.smurf import load_golden, main

    golden = load_golden().iloc[:3000]
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"sparcs": golden.SPARCS.tolist(), "spurts": golden.SPURTS.tolist(), "mima": golden.MIMA.tolist()}))
    output = tmp_path / "three.png"
    assert main(["--scores", str(scores), "--systems", "3", "--labels", "x", "y", "z", "--output", str(output)]) == 0
    assert output.exists()
    with pytest.raises(ValueError, match="has no MIMA"):
        scores.write_text(json.dumps({"SPARCS": [0.1], "SPURTS": [0.1]}))
        main(["--scores", str(scores), "--output", str(output), "--overwrite"])
