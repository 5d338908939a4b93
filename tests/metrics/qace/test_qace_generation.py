"""Question generation and text QA with tiny random T5 checkpoints: exact inputs, the demos' decoding, batching,
determinism and the answerability definition."""

import pytest
import torch

from capeval.backbones.common import pad_ids
from capeval.backbones.t5 import T5TextGenerator
from capeval.backbones.visual_t5 import UNANSWERABLE_TOKEN_ID, decode_like_demo, greedy_generate
from capeval.scoring.qace import QA_FORMATS, QG_FORMATS, QaceScorer

from fixtures.qace import CAPTIONS

CAPTION = "Two men are riding horses on the ground"


def test_the_demo_qg_and_qa_inputs_byte_for_byte():
    qg = QG_FORMATS["demo"].render({"answer": "two men", "context": CAPTION})
    assert qg.encode() == b"answer: two men  context: Two men are riding horses on the ground </s>"
    qa = QA_FORMATS["demo"].render({"question": "Where are the horses?", "context": "riders in a field"})
    assert qa.encode() == b"question: Where are the horses?  context: riders in a field </s>"
    assert QG_FORMATS["questeval"].render({"answer": "two men", "context": CAPTION}) == f"sv1 </s> two men </s> {CAPTION}"
    assert QA_FORMATS["questeval"].render({"question": "Who?", "context": "a man"}) == "Who? </s> a man"


def test_the_literal_eos_and_the_appended_one(tiny_qg):
    generator = T5TextGenerator(tiny_qg, QG_FORMATS["demo"], device="cpu")
    [ids] = generator.input_ids([{"answer": "two men", "context": CAPTION}])
    eos = generator.tokenizer.eos_token_id
    assert ids[-2:] == [eos, eos] and ids.count(eos) == 2
    pieces = generator.tokenizer("answer: two men  context: " + CAPTION, add_special_tokens=False)["input_ids"]
    assert ids == pieces + [eos, eos]


def test_the_scorer_asks_with_the_lower_cased_span_and_the_caption_as_given(monkeypatch, qace_options):
    seen = []
    original = T5TextGenerator.generate

    def spy(self, fields, **kwargs):
        seen.extend(self.format.render(item) for item in fields)
        return original(self, fields, **kwargs)

    monkeypatch.setattr(T5TextGenerator, "generate", spy)
    QaceScorer("ref", **qace_options).ask([CAPTION])
    assert seen == [f"answer: {span}  context: {CAPTION} </s>" for span in ["ground", "horses", "two", "two men"]]


def test_demo_decoding(tiny_qg):
    tokenizer = T5TextGenerator(tiny_qg, QG_FORMATS["demo"], device="cpu").tokenizer
    question = tokenizer("question: what is the man riding?", add_special_tokens=False)["input_ids"]
    # generate's output: start token 0, the pieces, EOS, then padding when a longer row shares the batch
    assert tokenizer.decode([0, *question, 1, 0, 0]).startswith("<pad> question:")
    assert decode_like_demo(tokenizer, [0, *question, 1, 0, 0], cut=11) == "what is the man riding?"
    assert decode_like_demo(tokenizer, [0, *tokenizer("horses", add_special_tokens=False)["input_ids"], 1], cut=1) == "horses"
    assert QA_FORMATS["questeval"].decode(tokenizer, [0, *tokenizer("two men", add_special_tokens=False)["input_ids"], 1]) == "two men"


@pytest.fixture(scope="module")
def qa_fields():
    questions = ["what are the men riding?", "where is the dog?", "how many men?", "who is riding a red bike down the street?"]
    contexts = ["two people ride horses in a dirt arena", "a dog runs on the grass", "a man rides a bicycle on the street"]
    return [{"question": q, "context": c} for q in questions for c in contexts]


@pytest.mark.slow
@pytest.mark.parametrize("text_format", ["demo", "questeval"])
def test_batched_generation_equals_one_by_one_and_is_deterministic(tiny_qa, qa_fields, text_format):
    generator = T5TextGenerator(tiny_qa, QA_FORMATS[text_format], device="cpu")
    one_by_one = [generator.generate([item])[0] for item in qa_fields]
    for batch_size in (3, 32):
        batched = generator.generate(qa_fields, batch_size=batch_size)
        assert [text for text, _ in batched] == [text for text, _ in one_by_one]
        assert [a for _, a in batched] == pytest.approx([a for _, a in one_by_one], abs=1e-5)
    assert generator.generate(qa_fields) == generator.generate(qa_fields)
    assert len({text for text, _ in one_by_one}) > 1, "the tiny model should answer different inputs differently"


def test_generation_length_and_answerability_definition(unsure_qa, qa_fields):
    generator = T5TextGenerator(unsure_qa, QA_FORMATS["questeval"], device="cpu")
    results = generator.generate(qa_fields[:4])
    assert max(a for _, a in results) < 0.9999, "the model should give token 73 a probability float32 can see"
    ids = generator.input_ids(qa_fields[:4])
    for item_ids, (text, answerability) in zip(ids, results):
        with torch.inference_mode():
            logits = generator.model(input_ids=torch.tensor([item_ids]), decoder_input_ids=torch.tensor([[0]])).logits[0, -1]
        assert answerability == pytest.approx(1 - logits.softmax(-1)[UNANSWERABLE_TOKEN_ID].item(), abs=1e-6)
        # max_length 20 counts the start token: at most 19 generated pieces
        assert len(generator.tokenizer(text, add_special_tokens=False)["input_ids"]) <= 19


def test_greedy_generate_equals_generate_keeping_every_steps_scores(unsure_qa, qa_fields):
    """The first-step recorder gives what generate(output_scores=True).scores[0] gives, row by row of a padded batch."""
    generator = T5TextGenerator(unsure_qa, QA_FORMATS["questeval"], device="cpu")
    ids = generator.input_ids(qa_fields[:5])
    assert len({len(row) for row in ids}) > 1, "the batch should need padding"
    input_ids, mask = pad_ids(ids, pad_id=generator.tokenizer.pad_token_id)
    with torch.inference_mode():
        sequences, answerability = greedy_generate(generator.model, max_length=20, input_ids=input_ids, attention_mask=mask)
        kept = generator.model.generate(input_ids=input_ids, attention_mask=mask, do_sample=False, num_beams=1, max_length=20,
                                        output_scores=True, return_dict_in_generate=True)
    assert sequences == kept.sequences.tolist()
    assert answerability == (1 - kept.scores[0].softmax(-1)[:, UNANSWERABLE_TOKEN_ID]).tolist()
    assert max(answerability) < 0.9999 and len(set(answerability)) == 5


@pytest.mark.slow
def test_questions_for_all_captions_in_one_call_equal_one_caption_at_a_time(qace_options):
    scorer = QaceScorer("ref", **qace_options)
    together = scorer.ask(CAPTIONS, batch_size=4)
    assert together == [scorer.ask([caption], batch_size=1)[0] for caption in CAPTIONS]
    assert all(len({q for q, _ in pairs}) == len(pairs) for pairs in together)


def test_questevals_generation_stops_at_transformers_old_default_of_20_ids(monkeypatch, tiny_qa, tiny_qg, qa_fields):
    """QuestEval's checkpoints ran with generate's then-default max_length 20 (the start token counted); a row whose
    decoding never ends (these tiny models rarely emit EOS) has exactly 20 ids, in question generation and answering."""
    from capeval.backbones import t5

    lengths = []

    def recording(model, **inputs):
        sequences, answerability = greedy_generate(model, **inputs)
        lengths.append(max(map(len, sequences)))
        return sequences, answerability

    monkeypatch.setattr(t5, "greedy_generate", recording)
    fields = [{"answer": item["question"], **item} for item in qa_fields[:3]]
    for checkpoint, formats in ((tiny_qg, QG_FORMATS), (tiny_qa, QA_FORMATS)):
        T5TextGenerator(checkpoint, formats["questeval"], device="cpu").generate(fields)
    assert lengths == [20, 20]
