"""The ``_extra`` tasks' per-document metrics: each caption scored with its document's image as ``capeval.evaluate``
scores it; a metric that cannot run here (no weights offline, no judge configured) is NaN and says why once, and
leaves the others; ``CAPEVAL_LMMS_SPECS`` replaces a metric's default spec. Needs no lmms-eval."""

import logging
import math

import pytest
from PIL import Image

import capeval
from capeval.integrations.lmms_eval import caption_tasks

pytestmark = pytest.mark.models


def numbers(values: dict) -> dict:
    """``values`` without its NaNs (NaN is unequal to itself)."""
    return {key: value for key, value in values.items() if not (isinstance(value, float) and math.isnan(value))}


def test_extra_metrics_per_document(tiny_clip, monkeypatch, caplog):
    monkeypatch.setattr(caption_tasks, "_WARNED", set())
    monkeypatch.setattr(caption_tasks, "_SCORERS", {})
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CAPEVAL_LMMS_SPECS", f"clip_score:model_name={tiny_clip}")
    monkeypatch.delenv("CAPEVAL_LMMS_JUDGE", raising=False)
    image = Image.new("RGB", (40, 30), (10, 200, 30))
    doc = {"image": image, "question_id": "COCO_val2014_000000000042.jpg", "id": 3, "answer": ["a green square", "a block"]}
    with caplog.at_level(logging.WARNING, logger="capeval.lmms_eval"):
        out = caption_tasks.coco_process_result_extra(doc, ["a green box"])
        again = caption_tasks.coco_process_result_extra(doc, ["a green box"])
    expected = capeval.evaluate(["a green box"], [doc["answer"]], images=[image], metrics=[f"clip_score:model_name={tiny_clip}"]).corpus
    assert out["coco_CLIP-S"] == pytest.approx(expected["clip_s"], rel=1e-6)
    assert out["coco_RefCLIP-S"] == pytest.approx(expected["refclip_s"], rel=1e-6)
    assert out["coco_CIDEr"] == {"answer": doc["answer"], "pred": "a green box", "image_id": 42, "id": 3}
    assert math.isnan(out["coco_judge"])
    assert numbers(again) == numbers(out)
    judge_lines = [r.message for r in caplog.records if "judge" in r.message]
    assert len(judge_lines) == 1 and "CAPEVAL_LMMS_JUDGE" in judge_lines[0]  # said once, not per document


def test_a_metric_that_cannot_run_is_nan_and_leaves_the_others(tiny_clip, monkeypatch, caplog):
    monkeypatch.setattr(caption_tasks, "_WARNED", set())
    monkeypatch.setattr(caption_tasks, "_SCORERS", {})
    monkeypatch.setenv("CAPEVAL_LMMS_SPECS", f"clip_score:model_name={tiny_clip};pac_score:variant=pac-s,checkpoint=/nonexistent/clip.pth")
    doc = {"image": Image.new("RGB", (20, 20)), "image_id": 5, "annotations_captions": ["a black square"]}
    with caplog.at_level(logging.WARNING, logger="capeval.lmms_eval"):
        out = caption_tasks.nocaps_process_result_extra(doc, ["a square"])
    assert not math.isnan(out["nocaps_CLIP-S"])
    assert math.isnan(out["nocaps_PAC-S"]) and math.isnan(out["nocaps_RefPAC-S"])
    assert any("pac_score:variant=pac-s,checkpoint=/nonexistent/clip.pth is NaN" in r.message for r in caplog.records)


def test_spice_is_nan_and_said_once_without_corenlp(monkeypatch, caplog):
    monkeypatch.setattr(caption_tasks, "_WARNED", set())
    monkeypatch.setattr(caption_tasks, "spice_available", lambda: False)
    monkeypatch.setattr(caption_tasks, "_RESULTS", type(caption_tasks._RESULTS)())
    items = [{"answer": ["a dog runs"], "pred": "a dog runs", "image_id": 1}, {"answer": ["a cat"], "pred": "a cat sits", "image_id": 2}]
    with caplog.at_level(logging.WARNING, logger="capeval.lmms_eval"):
        assert math.isnan(caption_tasks.spice(items)) and caption_tasks.cider(items) > 0
    assert [r.message for r in caplog.records if "SPICE" in r.message] == [
        "capeval: SPICE is left out (NaN): it needs Stanford CoreNLP (capeval download spice) and Java on PATH"]
