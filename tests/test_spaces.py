"""The metric Spaces: handlers called directly, and one app served over loopback."""

import importlib.util

import pytest

from capeval.integrations.gradio_app import build_text_demo, make_text_handler

gr = pytest.importorskip("gradio")


def load_app(folder):
    spec = importlib.util.spec_from_file_location(f"{folder.name}_app", folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bert_tbr_app_builds_and_reports_a_missing_checkpoint(repo_root):
    app = load_app(repo_root / "metrics" / "bert_tbr")
    assert isinstance(app.demo, gr.Blocks)
    result = make_text_handler(app.metric)("a dog runs", "a dog running\na brown dog")
    # Offline the paper's bert-base-uncased is absent: the Space shows the error instead of crashing.
    assert "bert-base-uncased" in result["error"]


def test_handler_scores_with_real_weights(load_metric, minilm_path):
    handler = make_text_handler(load_metric("bert_tbr", model_name=minilm_path, layer=6, beta=0.4))
    result = handler("a brown dog runs across the grass", "a brown dog runs across the grass\n\na dog running on grass")
    assert 0.0 < result["scores"] <= 1.0 and result["bert_tbr"] == result["scores"]
    assert handler("a dog", "  \n")["error"].startswith("references[0] is empty")


def test_app_answers_over_loopback(load_metric, tmp_path):
    from gradio_client import Client

    demo = build_text_demo(load_metric("bert_tbr", mode="unigram"), title="BERT-TBR (unigram)", description="test")
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        result = client.predict("a man riding a horse", "A man rides a brown horse .\na man on a horse", api_name="/score")
        assert result["scores"] == 0.5
    finally:
        demo.close()


def test_suite_space_scores_with_every_offline_metric(repo_root):
    app = load_app(repo_root / "spaces" / "suite")
    metrics = [m for m in app.load_metrics() if m[0] != "METEOR"]  # the JVM start is slow; METEOR has its own tests
    rows = app.make_handler(metrics)("a man riding a horse", "A man rides a brown horse .\na man on a horse")
    scores = {label: value for label, value, _ in rows}
    assert scores["BERT-TBR (unigram)"] == "0.5000"
    assert {"BERT-TBR", "SPARCS", "BLEU-4", "ROUGE-L", "CIDEr-D"} <= set(scores)
    assert isinstance(app.build_demo(metrics), gr.Blocks)

