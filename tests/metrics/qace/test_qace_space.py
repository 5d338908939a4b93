"""QACE's Space shows the scores and, below them, every question with both answers (tiny random T5 models)."""

import pytest

import capeval
from capeval.integrations.gradio_app import build_metric_space
from fixtures.spaces import table_columns

pytest.importorskip("gradio")

CANDIDATES = ["Two men are riding horses on the ground", "a horse"]
REFERENCES = ["two people ride horses in an arena", "riders on brown horses in a ring"]


def test_space_shows_scores_and_the_questions_behind_them(serve, qace_options):
    client = serve(build_metric_space("qace", options=qace_options))
    table, chart, details = client.predict("\n".join(CANDIDATES), "\n".join(REFERENCES), api_name="/score")
    expected = capeval.load("qace", **qace_options).compute(predictions=CANDIDATES, references=[REFERENCES] * 2)
    columns = table_columns(table)
    assert columns["qace"] == [*(f"{v:.4f}" for v in expected["scores"]), f"{expected['qace']:.4f}"]  # then the corpus row
    details = details.get("value", details)  # an update of the (initially hidden) Dataframe
    rows = [dict(zip(details["headers"], row)) for row in details["data"]]
    questions = [row["question"] for row in rows if row["detail"] == "questions"]
    assert questions == [q["question"] for per_caption in expected["questions"] for q in per_caption]
    assert {"answer", "predicted_answer", "f1", "bertscore"} <= set(details["headers"])
