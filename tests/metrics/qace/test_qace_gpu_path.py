"""QACE's GPU-path options on CPU: fused (SDPA) attention in Visual-T5 and the text T5s against eager, and the
T5 forward passes in reduced precision against float32, with the tiny random models."""

import pytest
import torch

from capeval.backbones.precision import autocast_forward
from capeval.backbones.t5 import load_t5
from capeval.backbones.visual_t5 import VisualT5Answerer, save_random_t5
from capeval.scoring.qace import CPU_SIMILARITY_BATCH_SIZE, QaceScorer
from capeval.vision.regions import as_region_features

from fixtures.qace import CAPTIONS, REFERENCES, T5_WORDS

QUESTIONS = ["What do the two men ride on the ground?", "Where are the horses?", "How many men are riding?"]


@pytest.fixture(scope="module")
def sample(sample_features):
    return as_region_features(sample_features)


def test_visual_t5_sdpa_attention_equals_eager(tiny_visual_t5, sample):
    answerer = VisualT5Answerer(tiny_visual_t5, tiny_visual_t5, device="cpu")
    fused, eager = answerer.model, VisualT5Answerer(tiny_visual_t5, tiny_visual_t5, device="cpu", attention="eager").model
    assert fused.t5.config._attn_implementation == "sdpa" and eager.t5.config._attn_implementation == "eager"
    input_ids, mask, regions = answerer.encoder_inputs(QUESTIONS, [sample] * len(QUESTIONS))
    with torch.inference_mode():
        hidden = [model.t5.encoder(inputs_embeds=model.encoder_embeddings(input_ids, regions), attention_mask=mask)
                  .last_hidden_state for model in (fused, eager)]
        (fused_ids, fused_answerability), (eager_ids, eager_answerability) = (
            model.generate(input_ids, mask, regions) for model in (fused, eager))
    # The same softmax(q·kᵀ + position bias + mask)·v, with no 1/√d scaling, in another kernel: float32 rounding
    # (measured 4.8e-5 on activations up to 16; the wide initialisation gives sharp attention that amplifies it).
    assert hidden[1].abs().max() > 10 and torch.allclose(hidden[0], hidden[1], atol=1e-4, rtol=0)
    assert fused_ids == eager_ids
    assert fused_answerability == pytest.approx(eager_answerability, abs=1e-6)


def test_text_t5_attention_is_sdpa(tiny_qg):
    assert load_t5(tiny_qg, device="cpu").config._attn_implementation == "sdpa"


@pytest.fixture(scope="module")
def calm_visual_t5(tmp_path_factory) -> str:
    """A tiny Visual-T5 with T5's own initialisation: the fixtures' wide one makes a chaotic network, where any
    rounding grows without bound, as in no trained model."""
    return save_random_t5(tmp_path_factory.mktemp("calm-visual-t5"), T5_WORDS, visual=True, seed=3)


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 1e-2), ("float16", 1e-3)])
def test_reduced_precision_first_step_scores_are_near_float32(calm_visual_t5, sample, dtype, tolerance):
    answerer = VisualT5Answerer(calm_visual_t5, calm_visual_t5, device="cpu")
    input_ids, mask, regions = answerer.encoder_inputs(QUESTIONS, [sample] * len(QUESTIONS))
    model = answerer.model

    def first_step_log_probabilities(dtype: str) -> torch.Tensor:
        with torch.inference_mode(), autocast_forward(torch.device("cpu"), dtype):
            logits = model.t5(inputs_embeds=model.encoder_embeddings(input_ids, regions), attention_mask=mask,
                              decoder_input_ids=torch.zeros(len(QUESTIONS), 1, dtype=torch.long)).logits
        return logits[:, 0].float().log_softmax(-1)

    exact, reduced = first_step_log_probabilities("float32"), first_step_log_probabilities(dtype)
    # Relative to the spread of the log-probabilities (7.6 nats): measured 3.2e-3 in bfloat16, 2.8e-4 in float16.
    spread = (exact.max() - exact.min()).item()
    assert 1e-6 < (exact - reduced).abs().max().item() / spread < tolerance


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["ref", "img"])
def test_reduced_precision_changes_the_scores_and_the_hashcode(qace_options, sample_features, variant):
    inputs = {"references": REFERENCES[:2]} if variant == "ref" else {"region_features": [sample_features] * 2}
    scorers = [QaceScorer(variant, **qace_options, dtype=dtype) for dtype in ("float32", "bfloat16")]
    exact, reduced = (scorer.score(CAPTIONS[:2], **inputs) for scorer in scorers)
    # These random models' greedy answers are near-ties, so a rounding changes some answers (real ones rarely).
    assert exact["qace"] != reduced["qace"] and all(0.0 <= value <= 1.0 for value in reduced["qace"])
    assert scorers[0].hashcode(exact) != scorers[1].hashcode(reduced)


def test_dtype_enters_the_options_only_when_reduced(qace_options):
    assert "dtype" not in QaceScorer("ref", **qace_options).options(), "float32 results keep their hashcodes"
    assert QaceScorer("img", **qace_options, dtype="float16").options()["dtype"] == "float16"
    with pytest.raises(ValueError, match="dtype must be one of"):
        QaceScorer("ref", **qace_options, dtype="float64")


def test_each_distinct_input_is_generated_once(monkeypatch, tiny_qa):
    from capeval.backbones import t5
    from capeval.backbones.t5 import T5TextGenerator
    from capeval.scoring.qace import QA_FORMATS

    generator = T5TextGenerator(tiny_qa, QA_FORMATS["questeval"], device="cpu")
    fields = [{"question": q, "context": c} for q, c in [("what is riding?", "two men ride horses"), ("where?", "a dog on the grass"),
                                                          ("what is riding?", "two men ride horses"), ("who?", "a man"),
                                                          ("where?", "a dog on the grass")]]
    expected = [generator.generate([item])[0] for item in fields]
    rows = []
    original = t5.greedy_generate
    monkeypatch.setattr(t5, "greedy_generate", lambda model, **inputs: rows.append(len(inputs["input_ids"])) or original(model, **inputs))
    results = generator.generate(fields, batch_size=2)
    assert rows == [2, 1], "three distinct inputs, in batches of two"
    assert [text for text, _ in results] == [text for text, _ in expected]
    assert [a for _, a in results] == pytest.approx([a for _, a in expected], abs=1e-6)
    assert results[0] == results[2] and results[1] == results[4]


def test_each_distinct_answer_pair_is_matched_once(monkeypatch, qace_options):
    """The answer-similarity BERTScore sees each (predicted answer, span) pair once; every record gets its pair's value,
    the value BERTScore gives the pair among all of them."""
    from capeval.scoring.bertscore import BERTScorer

    scorer = QaceScorer("ref", **qace_options)
    asked = [[("what?", "horses"), ("who?", "two men")], [("what?", "horses")]]
    answered = [[[("horses", 1.0), ("men", 1.0)], [("horses", 1.0), ("two men", 1.0)]], [[("horses", 1.0)]]]
    seen = []
    original = BERTScorer.score

    def spy(self, predictions, references=None, **kwargs):
        seen.append((list(predictions), [list(r) for r in references], kwargs.get("batch_size")))
        return original(self, predictions, references, **kwargs)

    monkeypatch.setattr(BERTScorer, "score", spy)
    records = scorer._compare(asked, answered)
    assert seen == [(["horses", "men", "two men"], [["horses"], ["two men"], ["two men"]], CPU_SIMILARITY_BATCH_SIZE)]
    flat = [r for per_caption in records for per_context in per_caption for r in per_context]
    assert [(r["predicted_answer"], r["answer"]) for r in flat] == [("horses", "horses"), ("men", "two men"), ("horses", "horses"),
                                                                    ("two men", "two men"), ("horses", "horses")]
    similarity = original(BERTScorer(qace_options["bertscore_model"], device="cpu", pad_like_bert_score=False),
                          ["horses", "men", "two men"], [["horses"], ["two men"], ["two men"]])["f1"]
    assert [r["bertscore"] for r in flat] == pytest.approx([similarity[0], similarity[1], similarity[0], similarity[2], similarity[0]],
                                                           abs=1e-6)
    assert flat[0]["bertscore"] == flat[2]["bertscore"] == flat[4]["bertscore"] and flat[1]["bertscore"] != flat[3]["bertscore"]
