"""The QACE demo's outputs with the real checkpoints, which cannot be downloaded in CI. Each test runs when its
checkpoints are available locally and is skipped with the reason otherwise:

* ``CAPEVAL_QACE_QG_MODEL``: mrm8488/t5-base-finetuned-question-generation-ap (a folder or a cached hub id);
* ``CAPEVAL_QACE_QA_MODEL``: valhalla/t5-base-qa-qg-hl, the demo's text QA model;
* ``CAPEVAL_QACE_VISUAL_T5``: the Visual-T5 checkpoint (folder or ckpt.zip), with ``CAPEVAL_QACE_T5_TOKENIZER``
  (default ``t5-small``, which must then be in the HuggingFace cache).

The demo ran transformers 4.4.1 and an unknown spaCy; these are the notebook's printed outputs.
"""

import os

import pytest

from capeval.backbones.visual_t5 import VisualT5Answerer
from capeval.scoring.qace import QA_FORMATS, QaceScorer, T5TextGenerator, normalize_predicted_answer
from capeval.vision.regions import as_region_features

CAPTION = "Two men are riding horses on the ground"
DEMO_QUESTIONS = ["What do the two men ride on the ground?", "How many men are riding horses on the ground?", "Where are the horses?"]


def checkpoint(variable: str, what: str) -> str:
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"set {variable} to a local copy of {what} to run this test")
    return value


def test_demo_questions():
    qg = checkpoint("CAPEVAL_QACE_QG_MODEL", "mrm8488/t5-base-finetuned-question-generation-ap")
    [asked] = QaceScorer("ref", qg_model=qg, device="cpu").ask([CAPTION])
    # spaCy 3.8 finds a fourth span ("two"); its question, if new, is an extra one
    assert set(DEMO_QUESTIONS) <= {question for question, _ in asked}


def test_demo_text_answers_on_the_caption_itself():
    qa = checkpoint("CAPEVAL_QACE_QA_MODEL", "valhalla/t5-base-qa-qg-hl")
    answers = T5TextGenerator(qa, QA_FORMATS["demo"], device="cpu").generate([{"question": q, "context": CAPTION} for q in DEMO_QUESTIONS])
    assert [normalize_predicted_answer(text) for text, _ in answers] == ["horses", "two", "ground"]


@pytest.fixture(scope="module")
def visual_answerer_options():
    return {"checkpoint": checkpoint("CAPEVAL_QACE_VISUAL_T5", "the Visual-T5 checkpoint (t5vqa/ckpt.zip)"),
            "tokenizer": os.environ.get("CAPEVAL_QACE_T5_TOKENIZER", "t5-small"), "device": "cpu"}


def test_demo_visual_answers(visual_answerer_options, sample_features):
    regions = as_region_features(sample_features)
    qace_demo = VisualT5Answerer(**visual_answerer_options)
    assert [text for text, _ in qace_demo.answer(DEMO_QUESTIONS, [regions] * 3)] == ["horses", "two", "field"]
    vqa_demo = VisualT5Answerer(**visual_answerer_options, prompt="")
    assert vqa_demo.answer(["What kind of animals are the men on?"], [regions])[0][0] == "horses"


def test_qace_img_with_the_real_models(visual_answerer_options, sample_features, minilm_path):
    qg = checkpoint("CAPEVAL_QACE_QG_MODEL", "mrm8488/t5-base-finetuned-question-generation-ap")
    scorer = QaceScorer("img", qg_model=qg, visual_t5=visual_answerer_options["checkpoint"],
                        visual_t5_tokenizer=visual_answerer_options["tokenizer"], bertscore_model=minilm_path, device="cpu")
    scores = scorer.score([CAPTION, "a cow is standing in a field of grass"], region_features=[sample_features] * 2)
    assert all(0.0 <= v <= 1.0 for v in scores["qace"])
    answers = {r["question"]: r["predicted_answer"] for r in scores.details["questions"][0]}
    assert answers["What do the two men ride on the ground?"] == "horses"
