"""QACE's model-dependent steps with scripted tiny T5s: copies of the random tiny T5 whose decoder ignores everything
but the previous token, with a language-model head that makes greedy decoding emit a chosen token sequence. Random
tiny T5s put P(token 73) near 0 and repeat one token, so the answerability token, the generation length, the
answer-similarity column and the reference concatenation were never checked against a known answer."""

import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, T5ForConditionalGeneration

from capeval.backbones.visual_t5 import UNANSWERABLE_TOKEN_ID
from capeval.scoring import qace
from capeval.scoring.bertscore import BERTScorer
from capeval.scoring.qace import QaceScorer
from capeval.text.spans import strip_stop_words

CAPTION = "a dog runs on the grass"
REFERENCES = [["a brown dog in a park", "the dog plays outside"]]
EOS = 1


def scripted_t5(source: str, target: Path, chain: list[int]) -> str:
    """A copy of the T5 in ``source`` whose greedy decoding emits ``chain`` (distinct ids) whatever its input: every
    decoder sub-layer's output projection is zero, so the decoder state is the previous token's embedding, and the
    head maps each chain token's state to the next token with a margin of hundreds of logits (tens after T5's
    d_model ** -0.5 output scaling), so the chosen token's probability is 1 in float32."""
    shutil.copytree(source, target)
    model = T5ForConditionalGeneration.from_pretrained(source)
    with torch.no_grad():
        for block in model.decoder.block:
            block.layer[0].SelfAttention.o.weight.zero_()
            block.layer[1].EncDecAttention.o.weight.zero_()
            block.layer[2].DenseReluDense.wo.weight.zero_()
        previous = [model.config.decoder_start_token_id, *chain[:-1]]
        states = model.decoder.final_layer_norm(model.shared.weight[previous])
        head = torch.zeros_like(model.lm_head.weight)
        for state, following in zip(states, chain):
            head[following] += 400 * state / state.dot(state)
        model.config.tie_word_embeddings = False
        model.lm_head.weight = torch.nn.Parameter(head)
    model.save_pretrained(target)
    return str(target)


def word_ids(folder: str, words: list[str]) -> list[int]:
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = [tokenizer.convert_tokens_to_ids("▁" + word) for word in words]
    assert tokenizer.unk_token_id not in ids
    return ids


@pytest.fixture(scope="module")
def scripted_qa(tiny_qa, tmp_path_factory):
    """``scripted_qa(chain)``: a QA model folder that answers ``chain`` to every question."""
    folder = tmp_path_factory.mktemp("scripted-qa")

    def build(chain: list[int]) -> str:
        return scripted_t5(tiny_qa, folder / "-".join(map(str, chain[:4])), chain)

    return build


def records(scorer, captions=(CAPTION,), references=REFERENCES):
    scores = scorer.score(list(captions), [list(refs) for refs in references])
    return scores, [record for per_caption in scores.details["questions"] for record in per_caption]


@pytest.mark.parametrize("first, answerability", [(UNANSWERABLE_TOKEN_ID, 0.0), (UNANSWERABLE_TOKEN_ID + 1, 1.0)])
def test_answerability_is_one_minus_p_of_token_73(qace_options, scripted_qa, first, answerability):
    scorer = QaceScorer("ref", **{**qace_options, "qa_model": scripted_qa([first, EOS])})
    scores, shown = records(scorer)
    assert shown and {record["answerability"] for record in shown} == {answerability}
    assert scores["qace_answerability"] == [answerability]


def test_answers_run_to_the_generation_length(qace_options, scripted_qa):
    """questeval's QA format decodes at most 20 positions (the start token and 19 more), as transformers 4.4.1 did."""
    words = [w for w in ["dog", "runs", "grass", "man", "rides", "bicycle", "street", "brown", "playing", "outside", "park",
                         "answer", "context", "question", "visual", "horses", "riding", "people", "arena", "field", "bike"]
             if strip_stop_words(w) == w]
    assert len(words) >= 20
    scorer = QaceScorer("ref", **{**qace_options, "qa_model": scripted_qa(word_ids(qace_options["qa_model"], words))})
    _, shown = records(scorer)
    assert {record["predicted_answer"] for record in shown} == {" ".join(words[:19])}


def test_similarity_column_is_the_bertscore_of_answer_and_span(qace_options, scripted_qa, tiny_bert_path):
    """Every question is answered "dog": right for the caption about a dog (F1 1, similarity 1), wrong for the one about
    grass (F1 0, the BERTScore of "dog" against "grass")."""
    scorer = QaceScorer("ref", **{**qace_options, "qa_model": scripted_qa([*word_ids(qace_options["qa_model"], ["dog"]), EOS])})
    scores, shown = records(scorer, ["a dog runs", "the grass is green"], [["a dog"], ["green grass"]])
    assert [(r["answer"], r["predicted_answer"], r["f1"]) for r in shown] == [("dog", "dog", 1.0), ("grass", "dog", 0.0)]
    expected = BERTScorer(tiny_bert_path, device="cpu", pad_like_bert_score=False).score(["dog", "dog"], [["dog"], ["grass"]])["f1"]
    assert [r["bertscore"] for r in shown] == pytest.approx(expected, abs=1e-6)
    assert scores["qace_bertscore"] == pytest.approx(expected, abs=1e-6) and scores["qace_f1"] == [1.0, 0.0]
    assert expected[0] == pytest.approx(1.0, abs=1e-6) and expected[1] < 0.99


@pytest.mark.parametrize("multi_ref, contexts", [("concat", ["a brown dog in a park the dog plays outside"]),
                                                  ("max", ["a brown dog in a park", "the dog plays outside"])])
def test_references_are_read_joined_by_a_space_or_one_by_one(qace_options, monkeypatch, multi_ref, contexts):
    read = []
    generate = qace.T5TextGenerator.generate

    def spy(self, fields, **kwargs):
        read.extend(item["context"] for item in fields if "question" in item)
        return generate(self, fields, **kwargs)

    monkeypatch.setattr(qace.T5TextGenerator, "generate", spy)
    scores, shown = records(QaceScorer("ref", multi_ref=multi_ref, **qace_options))
    questions = len({record["question"] for record in shown})
    assert questions and read == [context for context in contexts for _ in range(questions)]
