"""The Trainer hook: a tiny random T5 trained for 2 steps with an evaluation after each, its metrics equal to
a direct compute on the decoded strings; references encoded once across evaluations."""

import numpy as np

import capeval
import pytest

from capeval.integrations.trainer import CaptionEvaluator, compute_metrics_fn, decode
from capeval.registry import load

transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate", reason="transformers' Trainer needs accelerate (the test extra installs it)")

REFERENCES = [["a dog runs on the grass", "a brown dog running"], ["two men ride horses", "riders on horses in an arena"],
              ["a cat sleeps on a bed", "a cat is sleeping"], ["a child plays in the water", "a kid swims in a pool"],
              ["a man rides a bike", "a cyclist on a road"]]


@pytest.fixture
def tiny_t5(tiny_bert_path):
    """A random 1-layer T5 speaking the tiny BERT's WordPiece vocabulary, and that tokenizer."""
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_path)
    config = T5Config(vocab_size=len(tokenizer), d_model=16, d_ff=32, d_kv=8, num_layers=1, num_heads=2,
                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    return T5ForConditionalGeneration(config), tokenizer


def test_seq2seq_trainer_metrics_equal_a_direct_compute(tiny_t5, tiny_bert_path, tmp_path):
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    model, tokenizer = tiny_t5
    examples = Dataset.from_dict({"source": [f"describe image {i}" for i in range(len(REFERENCES))],
                                  "target": [refs[0] for refs in REFERENCES]})
    encoded = examples.map(lambda row: {**tokenizer(row["source"]), "labels": tokenizer(row["target"])["input_ids"]},
                           remove_columns=["source", "target"])
    bert_tbr = ("bert_tbr", {"model_name": tiny_bert_path, "layer": 2, "beta": 0.4})
    compute_metrics = compute_metrics_fn(["bleu", "cider", bert_tbr], tokenizer, references=REFERENCES)
    seen = []

    def recording(eval_pred):
        seen.append(decode(eval_pred.predictions, tokenizer))
        return compute_metrics(eval_pred)

    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), max_steps=2, eval_strategy="steps", eval_steps=1,
                                    per_device_train_batch_size=2, per_device_eval_batch_size=2, predict_with_generate=True,
                                    generation_max_length=8, report_to=[], save_strategy="no", use_cpu=True,
                                    learning_rate=1e-2, logging_steps=1, disable_tqdm=True)
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=encoded, eval_dataset=encoded,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model), compute_metrics=recording)
    trainer.train()
    metrics = trainer.evaluate()
    assert len(seen) == 3  # after steps 1 and 2, then the explicit evaluate()

    expected_bleu = load("bleu").compute(predictions=seen[-1], references=REFERENCES)
    expected_cider = load("cider").compute(predictions=seen[-1], references=REFERENCES)
    expected_tbr = load("bert_tbr", **bert_tbr[1]).compute(predictions=seen[-1], references=REFERENCES)
    for k in range(1, 5):
        assert metrics[f"eval_bleu_{k}"] == pytest.approx(expected_bleu[f"bleu_{k}"], abs=1e-12)
    assert metrics["eval_cider"] == pytest.approx(expected_cider["cider"], abs=1e-12)
    assert metrics["eval_bert_tbr"] == pytest.approx(expected_tbr["bert_tbr"], abs=1e-6)
    # Flat floats only: the usual rounding idiom works on the whole dict.
    assert {k: round(v * 100, 4) for k, v in metrics.items()}
    assert not any(isinstance(v, (list, str)) for v in metrics.values())


def test_references_are_encoded_once_across_evaluations(tiny_bert_path, monkeypatch):
    from capeval.text.encoder import get_text_encoder

    evaluator = CaptionEvaluator([("bert_tbr", {"model_name": tiny_bert_path, "layer": 2, "beta": 0.4})], references=REFERENCES)
    predictions = ["a zebra", "two ponies", "a kitten", "a toddler", "a tricycle"]  # not encoded by other tests
    first = evaluator.evaluate_texts(predictions)
    encoder = get_text_encoder(tiny_bert_path, layer=2)
    encoded_batches = []
    original = encoder.forward_ids
    monkeypatch.setattr(encoder, "forward_ids", lambda ids, **kw: encoded_batches.append(len(ids)) or original(ids, **kw))
    assert evaluator.evaluate_texts(predictions) == first
    evaluator.evaluate_texts(["a zebra grazes", "ponies trot", *predictions[2:]])
    assert encoded_batches == [2]  # nothing the second time; only the two new predictions the third


def test_labels_as_references_and_clear_errors(tiny_bert_path):
    from transformers import AutoTokenizer
    from transformers.trainer_utils import EvalPrediction

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_path)
    ids = tokenizer(["a dog runs", "a cat"], padding=True)["input_ids"]
    labels = np.where(np.asarray(ids) == tokenizer.pad_token_id, -100, ids)
    compute = compute_metrics_fn(["rouge"], tokenizer)
    assert compute(EvalPrediction(predictions=labels, label_ids=labels)) == {"rouge_l": 1.0}
    with pytest.raises(ValueError, match="predict_with_generate=True"):
        compute(EvalPrediction(predictions=np.zeros((2, 3, 7)), label_ids=labels))
    with pytest.raises(ValueError, match="3 predictions for an eval set of 5 examples"):
        CaptionEvaluator(["bleu"], references=REFERENCES).evaluate_texts(["a", "b", "c"])
    # The same metric twice: its values are told apart by each configuration's label.
    both = CaptionEvaluator(["bleu", ("bleu", {"order": 2})], references=REFERENCES[:1]).evaluate_texts(["a dog"])
    assert both["bleu_order_2"] == both["bleu_order_2_bleu_2"] != both["bleu"] == both["bleu_bleu_4"]
    with pytest.raises(TypeError):
        CaptionEvaluator([("bleu", {"max_order": 2})])


def test_labels_that_differ_from_the_predictions_are_the_references(tiny_bert_path):
    from transformers import AutoTokenizer
    from transformers.trainer_utils import EvalPrediction

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_path)

    def ids(texts):
        rows = tokenizer(texts, padding=True)["input_ids"]
        return np.where(np.asarray(rows) == tokenizer.pad_token_id, -100, rows)

    compute = compute_metrics_fn(["rouge", "bleu"], tokenizer)
    got = compute(EvalPrediction(predictions=ids(["a dog runs", "a cat"]), label_ids=ids(["a dog", "a cat sleeps"])))
    expected = capeval.evaluate(["a dog runs", "a cat"], [["a dog"], ["a cat sleeps"]], metrics=["rouge", "bleu"]).corpus
    assert got == expected and got["rouge_l"] < 1.0


def test_one_reference_string_per_example_is_one_reference_not_characters():
    flat = CaptionEvaluator(["bleu", "cider"], references=["a dog runs on the grass", "a cat sleeps on a bed"])
    listed = CaptionEvaluator(["bleu", "cider"], references=[["a dog runs on the grass"], ["a cat sleeps on a bed"]])
    predictions = ["a dog runs on grass", "a cat sleeps"]
    assert flat.evaluate_texts(predictions) == listed.evaluate_texts(predictions)
    assert flat.evaluate_texts(predictions)["bleu_1"] > 0.6


def test_indices_pick_the_references_of_those_examples():
    evaluator = CaptionEvaluator(["rouge"], references=[["a dog"], ["a cat"], ["a bird"]])
    assert evaluator.evaluate_texts(["a cat"], indices=[1]) == {"rouge_l": 1.0}
    assert evaluator.evaluate_texts(["a bird", "a dog"], indices=[2, 0]) == {"rouge_l": 1.0}
    with pytest.raises(ValueError, match=r"indices \[3\] are not eval-set positions \(0 to 2\)"):
        evaluator.evaluate_texts(["a cat"], indices=[3])


@pytest.mark.parametrize("metrics, message", [
    (["blue"], "no capeval metric 'blue'"),
    ([("bleu",)], "a metric spec is a name"),
    ([{"name": "bleu"}], "a metric spec is a name"),
    ([], "metrics is empty"),
])
def test_bad_metric_specs_are_one_clear_error(metrics, message):
    with pytest.raises(ValueError, match=message):
        CaptionEvaluator(metrics, references=REFERENCES)


def test_bad_references_and_token_ids_are_one_clear_error():
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        CaptionEvaluator(["bleu"], references=[["a dog"], None])

    class Tokenizer:
        pad_token_id = 0

        def batch_decode(self, rows, skip_special_tokens):
            return ["x" for _ in rows]

    with pytest.raises(ValueError, match="token ids must be integers, got float64"):
        decode(np.array([[1.5, 2.0]]), Tokenizer())
    with pytest.raises(ValueError, match="negative token id -3: only -100"):
        decode(np.array([[1, -3]]), Tokenizer())
