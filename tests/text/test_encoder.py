"""TextEncoder and the model cache, through the same from_pretrained path users take."""

import math

import pytest
import torch
from transformers import AutoModel

from capeval import models
from capeval.models import ModelUnavailableError, load_hf_model
from capeval.text.encoder import TextEncoder, get_text_encoder

SENTENCES = ["a man rides a bicycle on the street", "two dogs", "a cat sleeping on top of a wooden chair", "two dogs"]


def test_layer_truncation_equals_the_full_models_hidden_state(tiny_bert_path):
    full = AutoModel.from_pretrained(tiny_bert_path).eval()
    encoder = TextEncoder(tiny_bert_path, layer=5)
    assert len(encoder.model.encoder.layer) == 5 and len(full.encoder.layer) == 8  # shared cached model untouched
    (out,) = encoder.encode([SENTENCES[0]])
    with torch.no_grad():
        expected = full(torch.tensor([out.ids]), output_hidden_states=True).hidden_states[5][0]
    assert torch.allclose(out.hidden, expected, atol=1e-5)
    assert out.special == [True] + [False] * (len(out.ids) - 2) + [True]


def test_padding_and_batch_order_do_not_change_embeddings(tiny_bert_path):
    encoder = TextEncoder(tiny_bert_path, layer=8)
    together = encoder.encode(SENTENCES, batch_size=4)
    alone = [encoder.encode([s], batch_size=1)[0] for s in SENTENCES]
    reversed_order = encoder.encode(SENTENCES[::-1], batch_size=2)[::-1]
    for a, b, c in zip(together, alone, reversed_order):
        assert a.ids == b.ids == c.ids
        assert torch.allclose(a.hidden, b.hidden, atol=1e-5) and torch.allclose(a.hidden, c.hidden, atol=1e-5)


def test_attentions_are_cropped_per_sequence(tiny_roberta_path):
    encoder = TextEncoder(tiny_roberta_path, attentions=True)
    short, long_ = encoder.encode(["two dogs", "a group of people standing on a beach"])
    assert short.attentions.shape == (6, 4, len(short.ids), len(short.ids))
    assert torch.allclose(short.attentions.sum(-1), torch.ones(6, 4, len(short.ids)), atol=1e-5)
    assert long_.hidden.shape == (len(long_.ids), 32)


def test_forward_ids_respects_custom_attention_masks(tiny_roberta_path):
    encoder = TextEncoder(tiny_roberta_path, attentions=True)
    ids = [0, 50, 1, 60, 2]
    (masked,) = encoder.forward_ids([ids], attention_masks=[[1, 1, 0, 1, 1]])
    assert torch.all(masked.attentions[..., 2] < 1e-6)  # the masked key receives no attention


def test_cache_shares_one_model_between_encoders(tiny_bert_path):
    first = get_text_encoder(tiny_bert_path, layer=3)
    assert get_text_encoder(tiny_bert_path, layer=3) is first
    second = get_text_encoder(tiny_bert_path, layer=6)
    # Different layers are views over one cached model: the weights are the same tensors.
    assert first.model.embeddings.word_embeddings.weight is second.model.embeddings.word_embeddings.weight
    assert load_hf_model(tiny_bert_path) is load_hf_model(tiny_bert_path)


def test_tokenizer_gets_a_real_model_max_length(tiny_bert_path):
    encoder = get_text_encoder(tiny_bert_path)
    assert encoder.tokenizer.model_max_length == 512
    (long_,) = encoder.encode(["dog " * 600])
    assert len(long_.ids) == 512


def test_missing_model_raises_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="capeval-test/no-such-model.*HF_HUB_OFFLINE=1"):
        load_hf_model("capeval-test/no-such-model")
    with pytest.raises(ModelUnavailableError, match="not a valid checkpoint"):
        load_hf_model(str(tmp_path))


def test_bad_layer_is_rejected(tiny_bert_path):
    with pytest.raises(ValueError, match="layer=12 is out of range"):
        TextEncoder(tiny_bert_path, layer=12)


def test_clear_cache_empties_it(tiny_bert_path):
    get_text_encoder(tiny_bert_path)
    assert models.cache_size() > 0
    models.clear_cache()
    assert models.cache_size() == 0


@pytest.mark.models
def test_models_load_in_fp32_whatever_the_checkpoint_stores(tmp_path):
    from tiny_models import save_tiny_bert

    folder = save_tiny_bert(tmp_path / "half")
    AutoModel.from_pretrained(folder).half().save_pretrained(folder)
    assert next(load_hf_model(str(folder)).parameters()).dtype == torch.float32


def test_idf_weights_from_a_corpus(tiny_bert_path):
    encoder = get_text_encoder(tiny_bert_path)
    idf = encoder.idf_weights(["a dog", "a cat", "two cats"])
    (dog,) = encoder.tokenize(["dog"])
    assert idf[dog[1]] == pytest.approx(math.log(4 / 2))  # "dog" in 1 of 3 documents
    assert idf[encoder.tokenizer.cls_token_id] == 0.0


def test_clear_feature_caches_empties_the_encoders_and_keeps_the_models(tiny_bert_path):
    encoder = get_text_encoder(tiny_bert_path)
    encoder.encode(SENTENCES)
    cleared = []

    class Holder:  # any cached object with clear_caches (ClipEncoder has one) is emptied too
        def clear_caches(self):
            cleared.append(self)

    holder = models.cached(("test-holder",), Holder)
    models.cached(("test-plain",), lambda: "a cached object without caches")
    held = models.cache_size()
    assert len(encoder.cache) == 3
    models.clear_feature_caches()
    assert len(encoder.cache) == 0 and encoder.cache.size == 0 and cleared == [holder]
    assert models.cache_size() == held and get_text_encoder(tiny_bert_path) is encoder
