"""The Spaces as a visitor meets them: each app served on 127.0.0.1 and called with gradio_client, its numbers
equal to a direct compute; errors raised to the client; the leaderboard's table equal to the stored results."""

import json

import pytest

import capeval
from capeval.integrations.gradio_app import (build_suite_space, candidate_labels, metric_card, metric_panels, shown,
                                             space_scorer, suite_metrics)
from capeval.integrations.leaderboard import baseline_results, build_leaderboard_space
from fixtures.spaces import load_app, table_columns

gr = pytest.importorskip("gradio")
from gradio_client.exceptions import AppError  # noqa: E402

CANDIDATES = ["a man riding a horse", "A man rides a brown horse ."]
REFERENCES = ["A man rides a brown horse .", "a man on a horse", "a rider on a horse in a field"]


def expected_columns(metric, headers: list[str], predictions, references) -> dict[str, list[str]]:
    """The module's values of the columns a Space shows, as it shows them: each candidate's, then the corpus row
    (the corpus value of every column, and the corpus-only values such as BLEU-1..4, blank above it)."""
    result = metric.compute(predictions=predictions, references=references)
    scores = metric.scorer.score(predictions, references)
    columns = {}
    for column in headers:
        if column == "candidate":
            continue
        per_caption = result["scores"] if column == metric.scorer.primary else result.get(column)
        values = [shown(v) for v in per_caption] if isinstance(per_caption, list) else [""] * len(predictions)
        columns[column] = values + [shown(scores.corpus[column])]
    return columns


def space_options(name, minilm_path):
    """What each Space runs offline: the registry's stand-in where the paper's model is absent, IDF from Flickr8k."""
    return {"bleu": {}, "rouge": {}, "cider": {"idf": "flickr8k"}, "smurf": {"components": ["sparcs"]},
            "bert_tbr": {"model_name": minilm_path, "layer": 6, "beta": 0.4, "idf": "flickr8k"},
            "bertscore": {"model_name": minilm_path, "layer": 6}}[name]  # BERTScore's idf is a switch: left off


@pytest.mark.parametrize("name", ["bleu", "rouge", "cider", "smurf", "bert_tbr", "bertscore"])
def test_metric_space_scores_like_compute(name, repo_root, serve, minilm_path):
    app = load_app(repo_root / "metrics" / name)
    client = serve(app.demo)
    table, chart, details = client.predict("\n".join(CANDIDATES), "\n".join(REFERENCES), api_name="/score")
    columns = table_columns(table)
    assert columns["candidate"] == [*CANDIDATES, "corpus"]
    metric = capeval.load(name, **space_options(name, minilm_path))
    assert {k: v for k, v in columns.items() if k != "candidate"} == expected_columns(metric, list(columns), CANDIDATES, [REFERENCES] * 2)
    # Every output of the metric is a column: BLEU shows BLEU-1..4 (corpus values), SMURF's SPARCS its standardized form.
    assert set(metric.scorer.columns()) | ({f"bleu_{n}" for n in range(1, 5)} if name == "bleu" else set()) <= set(columns)
    with pytest.raises(AppError, match="Type at least one candidate caption"):
        client.predict("  \n", "\n".join(REFERENCES), api_name="/score")


def test_stand_ins_are_labelled_and_one_caption_gets_a_cider(repo_root):
    bert_tbr = load_app(repo_root / "metrics" / "bert_tbr").demo
    notes = " ".join(str(block.value) for block in bert_tbr.blocks.values() if isinstance(block, gr.Markdown))
    assert "Offline stand-in" in notes and "all-MiniLM-L6-v2" in notes and "IDF from the Flickr8k references" in notes
    assert "# Metric Card for BERT-TBR" in notes  # the card, rendered below the app
    one = capeval.load("cider", idf="flickr8k").compute(predictions=[REFERENCES[0]], references=[REFERENCES])
    assert one["cider"] > 3.0  # the corpus-IDF default gives 0 for a one-caption corpus
    assert capeval.load("cider").compute(predictions=[REFERENCES[0]], references=[REFERENCES])["cider"] == 0.0


def test_every_metric_card_renders():
    for name in capeval.registry.METRICS:
        header, body = metric_card(name)
        assert header["sdk"] == "gradio" and body.startswith("# Metric Card"), name


def test_spaces_take_idf_from_flickr8k_only_where_the_idf_option_offers_it(minilm_path):
    assert space_scorer("cider", {}).idf == "flickr8k" and space_scorer("cider", {"idf": "corpus"}).idf == "corpus"
    assert space_scorer("bertscore", {"model_name": minilm_path, "layer": 6}).idf is False  # a flag, not a corpus
    assert "BERTScore (MiniLM)" in [metric.label for metric in suite_metrics()]
    # Your own IDF documents are the IDF: no flickr8k added beside them (BERT-TBR would refuse the pair).
    own = space_scorer("bert_tbr", {"idf_sentences": ["a dog runs", "a cat sits"]})
    assert (own.idf, own.idf_sentences) == ("corpus", ["a dog runs", "a cat sits"])
    assert space_scorer("bert_tbr", {}).idf == "flickr8k"


def test_suite_space_side_by_side(serve):
    metrics = [m for m in suite_metrics() if m.label != "METEOR"]  # the JVM start is slow; METEOR has its own tests
    client = serve(build_suite_space(metrics))
    table, chart, breakdown, details, skipped = client.predict(None, None, "\n".join(CANDIDATES), "\n".join(REFERENCES),
                                                               api_name="/score")
    columns = table_columns(table)
    assert {"BERT-TBR", "BERT-TBR (unigram)", "SPARCS", "BLEU-4", "ROUGE-L", "CIDEr-D"} <= set(columns)
    assert columns["BERT-TBR (unigram)"][0] == "0.3333"
    bleu = capeval.load("bleu").compute(predictions=CANDIDATES, references=[REFERENCES] * 2)
    cider = capeval.load("cider", idf="flickr8k").compute(predictions=CANDIDATES, references=[REFERENCES] * 2)
    assert columns["BLEU-4"] == [shown(v) for v in bleu["scores"]] and columns["BLEU-4"][0] == "1.6e-08"
    assert columns["CIDEr-D"] == [f"{v:.4f}" for v in cider["scores"]]
    # Every output, then each metric's corpus values (BLEU-1..4 among them).
    parts = table_columns(breakdown)
    corpus = {(m, o): v for c, m, o, v in zip(parts["candidate"], parts["metric"], parts["output"], parts["value"]) if c == "corpus"}
    assert [corpus[("BLEU-4", f"bleu_{n}")] for n in range(1, 5)] == [shown(bleu[f"bleu_{n}"]) for n in range(1, 5)]
    # One panel per metric, the candidates side by side in each (never a sum of candidates).
    figure = metric_panels(candidate_labels(CANDIDATES), {"BLEU-4": bleu["scores"], "CIDEr-D": cider["scores"]})
    panels = [axis for axis in figure.axes if axis.get_visible()]
    assert [axis.get_title() for axis in panels] == ["BLEU-4", "CIDEr-D"]
    assert [[bar.get_height() for bar in axis.patches] for axis in panels] == [bleu["scores"], cider["scores"]]
    parts = table_columns(breakdown)
    assert {"metric", "output", "value"} <= set(parts) and "sparcs" in parts["output"]
    assert skipped == ""
    with pytest.raises(AppError, match="Type at least one candidate caption"):
        client.predict(None, None, "", "a dog", api_name="/score")


def test_leaderboard_shows_the_stored_results(serve):
    stored = json.loads(baseline_results().read_text())
    client = serve(build_leaderboard_space())
    wide, long, message = client.predict(["Flickr8k-Expert"], ["tau-b"], "cider", api_name="/filter")
    table = table_columns(long)
    cider = next(r for r in stored if r["metric"] == "cider" and r["benchmark"] == "flickr8k_expert")
    expected = [row for row in cider["rows"] if row["statistic"] == "tau-b"]
    assert table["row set"] == [row["row_set"] for row in expected] == ["P1 mean", "P2 all"]
    assert table["value"] == [round(row["value"], 3) for row in expected]
    assert table["95% interval"][0] == f"[{expected[0]['low']:.3f}, {expected[0]['high']:.3f}]"
    # Metrics × benchmarks: one row per metric, a column per benchmark with its headline result among those kept.
    pivoted = table_columns(wide)
    assert pivoted == {"metric": ["cider"], "Flickr8k-Expert · P1 mean · tau-b": [f"{expected[0]['value']:.3f}"]}
    # One benchmark: every row set and statistic the filters keep.
    detail = table_columns(client.predict("Flickr8k-Expert", ["tau-b"], "cider", api_name="/benchmark"))
    assert detail == {"metric": ["cider"], "Flickr8k-Expert · P1 mean · tau-b": [f"{expected[0]['value']:.3f}"],
                      "Flickr8k-Expert · P2 all · tau-b": [f"{expected[1]['value']:.3f}"]}
    assert message == ""
    shown = sorted({r["title"] for r in stored if not r.get("skipped")})
    every = table_columns(client.predict(shown, ["tau-b", "tau-c", "accuracy"], "", api_name="/filter")[0])
    assert len(every["metric"]) == len({r["metric"] for r in stored if not r.get("skipped")})
    _, _, message = client.predict(["Flickr8k-Expert"], ["tau-b"], "no such metric", api_name="/filter")
    assert "No result matches these filters" in message
    every_benchmark = list(dict.fromkeys(r["title"] for r in stored if not r.get("skipped")))
    points, figure = client.predict("Flickr8k-Expert · P1 mean · tau-b", "Flickr8k-Expert · P1 mean · tau-c", every_benchmark,
                                    ["tau-b", "tau-c", "accuracy"], "", api_name="/scatter")
    stored_metrics = {r["metric"] for r in stored if r["benchmark"] == "flickr8k_expert" and not r.get("skipped")}
    assert points["headers"] == ["metric", "x", "y"] and len(points["data"]) == len(stored_metrics) == 9  # one point per metric
    # The seed metrics' model-free configurations are rows of the board, labelled by the spec that runs them.
    seed = table_columns(client.predict(["Flickr8k-Expert"], ["tau-b"], "bert_tbr", api_name="/filter")[0])
    assert seed["metric"] == ["bert_tbr:mode=unigram"] and seed["Flickr8k-Expert · P1 mean · tau-b"] == ["0.471"]
    assert ["cider", round(expected[0]["value"], 3)] == next(row[:2] for row in points["data"] if row[0] == "cider")
    # The scatter follows the filters: the metric text keeps BLEU's four points, a statistic filtered out moves the
    # y axis to one the filters keep.
    points, _ = client.predict("Flickr8k-Expert · P1 mean · tau-b", "Flickr8k-Expert · P1 mean · tau-c", every_benchmark,
                               ["tau-b", "tau-c"], "bleu", api_name="/scatter")
    assert [row[0] for row in points["data"]] == [f"bleu:order={n}" for n in range(1, 5)]
    points, _ = client.predict("Flickr8k-Expert · P1 mean · tau-b", "Flickr8k-Expert · P1 mean · tau-c", ["Flickr8k-Expert"],
                               ["tau-b"], "cider", api_name="/scatter")
    assert points["data"] == [["cider", round(expected[0]["value"], 3), round(expected[1]["value"], 3)]]


def test_leaderboard_shows_published_beside_reproduced(serve):
    cells = json.loads((baseline_results().parent / "reproduce.json").read_text())
    client = serve(build_leaderboard_space())
    shown = table_columns(client.predict(["bert_tbr"], ["reproduced"], api_name="/published"))
    expected = [c for c in cells if c["paper"] == "bert_tbr" and c["status"] == "reproduced"]
    assert shown["row"] == [c["row"] for c in expected] and "Ours (Unigram)" in shown["row"]
    assert shown["published"] == [f"{c['published']:.3f}" for c in expected]
    assert shown["capeval"] == [f"{c['capeval']:.3f}" for c in expected]
    assert all(protocol for protocol in shown["protocol"])


def test_leaderboard_scatter_labels_its_axes_and_points():
    import pandas as pd

    from capeval.integrations.leaderboard import scatter_figure

    points = pd.DataFrame({"metric": ["bleu", "cider"], "x": [0.2, 0.4], "y": [0.3, 0.5]})
    (axis,) = scatter_figure(points, "A · P1 · tau-b", "A · P1 · tau-c").axes
    assert (axis.get_xlabel(), axis.get_ylabel()) == ("A · P1 · tau-b", "A · P1 · tau-c")
    assert sorted(text.get_text() for text in axis.texts) == ["bleu", "cider"]


def test_details_become_a_table():
    from capeval.integrations.gradio_app import details_table
    from capeval.scoring.protocol import Scores

    scores = Scores({"qace": [0.5, 0.25]}, details={"questions": [
        [{"question": "What rides?", "answer": "men", "predicted_answer": "men", "f1": 1.0, "bertscore": 0.987654}],
        [{"question": "Where?", "answer": "arena", "predicted_answer": "field", "f1": 0.0, "bertscore": 0.412345}]]})
    rows = details_table(["two men ride", "a dog"], scores, "QACE").to_dict("records")
    assert rows[1] == {"candidate": "a dog", "metric": "QACE", "detail": "questions", "question": "Where?", "answer": "arena",
                       "predicted_answer": "field", "f1": 0.0, "bertscore": 0.4123}


def test_the_suite_asks_for_an_image_only_when_an_image_metric_runs():
    import gradio as gr

    from capeval.integrations.gradio_app import SpaceMetric
    from capeval.scoring.coco import BleuScorer
    from capeval.scoring.umic import UmicScorer

    def image_column_visible(demo):
        (image,) = [block for block in demo.blocks.values() if isinstance(block, gr.Image)]
        column = next(block for block in demo.blocks.values() if isinstance(block, gr.Column) and image in block.children)
        notes = [block for block in demo.blocks.values() if isinstance(block, gr.Markdown) and block.elem_id == "no-image-metric"]
        return column.visible, bool(notes)

    text_only = build_suite_space([SpaceMetric("BLEU-4", BleuScorer())])
    assert image_column_visible(text_only) == (False, True)
    with_image = build_suite_space([SpaceMetric("BLEU-4", BleuScorer()), SpaceMetric("UMIC", UmicScorer())])
    assert image_column_visible(with_image) == (True, False)
