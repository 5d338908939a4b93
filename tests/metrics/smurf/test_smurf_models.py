"""SPURTS/MIMA mechanics with tiny random DistilBERT and RoBERTa checkpoints."""

import pytest
import torch

from capeval.scoring.smurf import SmurfScorer, fluency_ids, information_flow, information_flows
from capeval.text.encoder import get_text_encoder
from capeval.text.stopwords import stopwords

STOP = stopwords("nltk179")
SENTENCES = ["a man riding a horse", "two dogs play in the snow on a cold day with their owner", "the cat", "a", ""]


@pytest.fixture(scope="module")
def roberta(tiny_roberta_path):
    return get_text_encoder(tiny_roberta_path, attentions=True, device="cpu")


@pytest.fixture(scope="module")
def distilbert(tiny_distilbert_path):
    return get_text_encoder(tiny_distilbert_path, attentions=True, device="cpu")


@pytest.fixture(scope="module")
def scorer(tiny_roberta_path, tiny_distilbert_path):
    return SmurfScorer(["spurts", "mima"], spurts_model=tiny_roberta_path, mima_model=tiny_distilbert_path, device="cpu", preprocess=False)


def test_spurts_ids_replace_stop_words_in_place_and_drop_punctuation(roberta):
    tokenizer = roberta.tokenizer
    pieces = tokenizer.tokenize("a man, riding a dog")
    assert pieces[0] == "a" and pieces[1] == "Ġman"  # no prefix space on the first word
    ids = fluency_ids(tokenizer, "a man, riding a dog", stop_words=STOP)
    pad = tokenizer.pad_token_id
    expected = [tokenizer.cls_token_id, pad, *tokenizer.convert_tokens_to_ids(["Ġman", "Ġriding"]), pad,
                *tokenizer.convert_tokens_to_ids(tokenizer.tokenize(" dog")), tokenizer.sep_token_id]
    assert ids == expected  # "a" kept its slot as <pad>; "," is gone


def test_mima_ids_keep_every_piece(distilbert):
    tokenizer = distilbert.tokenizer
    ids = fluency_ids(tokenizer, "a man, riding a dog")
    assert ids == [tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(tokenizer.tokenize("a man, riding a dog")), tokenizer.sep_token_id]
    assert (tokenizer.cls_token_id, tokenizer.sep_token_id) == (101, 102)


def test_long_captions_are_cut_to_the_model_length(distilbert):
    ids = fluency_ids(distilbert.tokenizer, "dog " * 700)
    assert len(ids) == distilbert.tokenizer.model_max_length


def test_roberta_positions_skip_the_pad_stop_words(roberta):
    """transformers derives RoBERTa position ids from input ids (padding index 1); SPURTS relies on it."""
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    ids = torch.tensor([fluency_ids(roberta.tokenizer, "a man riding a dog", stop_words=STOP)])
    derived = RobertaEmbeddings.create_position_ids_from_input_ids(ids, padding_idx=1)
    pad_slots = ids[0] == 1
    assert (derived[0][pad_slots] == 1).all()
    assert derived[0][~pad_slots].tolist() == list(range(2, 2 + int((~pad_slots).sum())))
    mask = (ids != 1).long()
    model = roberta.model
    with torch.inference_mode():
        implicit = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
        explicit = model(input_ids=ids, attention_mask=mask, position_ids=derived, output_attentions=True).attentions
        contiguous = model(input_ids=ids, attention_mask=mask, position_ids=torch.arange(2, 2 + ids.shape[1])[None],
                           output_attentions=True).attentions
    assert all(torch.equal(a, b) for a, b in zip(implicit, explicit))
    assert not all(torch.allclose(a, b) for a, b in zip(implicit, contiguous))


def test_attentions_are_cropped_to_n_and_pad_keys_masked(roberta):
    ids = [fluency_ids(roberta.tokenizer, s, stop_words=STOP) for s in SENTENCES[:3]]
    masks = [[int(t != 1) for t in seq] for seq in ids]
    encoded = roberta.forward_ids(ids, attention_masks=masks, return_hidden=False)
    for seq, out in zip(ids, encoded):
        n = len(seq)
        assert out.attentions.shape == (6, 4, n, n)
        torch.testing.assert_close(out.attentions.sum(-1), torch.ones(6, 4, n))  # every query row (pads too)
        pads = torch.tensor(seq) == 1
        assert pads.any() and out.attentions[..., pads].abs().max() == 0  # stop-word keys get no attention


def test_padding_does_not_change_the_flow(roberta, distilbert):
    for encoder, stop in ((roberta, STOP), (distilbert, None)):
        short = fluency_ids(encoder.tokenizer, SENTENCES[0], stop_words=stop)
        long = fluency_ids(encoder.tokenizer, SENTENCES[1], stop_words=stop)
        alone = information_flows(encoder, [short])[0]
        padded = information_flows(encoder, [long, short])[1]
        assert alone == pytest.approx(padded, abs=1e-6)


def test_flows_equal_information_flow_of_each_sentence_alone(distilbert):
    ids = [fluency_ids(distilbert.tokenizer, s) for s in SENTENCES[:4]]
    flows = information_flows(distilbert, ids, batch_size=2)
    for seq, flow in zip(ids, flows):
        (alone,) = distilbert.forward_ids([seq], return_hidden=False)
        assert flow == pytest.approx(information_flow(alone.attentions).item(), abs=1e-6)


def test_batch_order_and_size_do_not_change_scores(scorer):
    forward = scorer.score(SENTENCES)
    backward = scorer.score(SENTENCES[::-1])
    single = scorer.score(SENTENCES, batch_size=1)
    for key in ("spurts", "mima"):
        assert forward[key] == pytest.approx(backward[key][::-1], abs=1e-6)
        assert forward[key] == pytest.approx(single[key], abs=1e-6)


def test_empty_string_scores_zero_but_stop_words_only_are_scored(scorer):
    import capeval.scoring.smurf as smurf

    sentences = ["", "the of and", "a man riding a horse"]
    out = scorer.score(sentences)
    assert out["spurts"][0] == 0.0 and out["mima"][0] == 0.0
    assert "smurf" not in out and "sparcs" not in out
    # The others are the information flows of their own ids: SPURTS with stop words as <pad>, MIMA = 1 - flow.
    for model, column, stop_words in ((scorer.spurts_model, "spurts", smurf._STOP_WORDS), (scorer.mima_model, "mima", None)):
        encoder = smurf.get_text_encoder(model, attentions=True, device="cpu")
        flows = smurf.information_flows(encoder, [smurf.fluency_ids(encoder.tokenizer, s, stop_words=stop_words) for s in sentences[1:]],
                                        batch_size=8, show_progress=False)
        expected = flows if column == "spurts" else [1.0 - f for f in flows]
        assert out[column][1:] == pytest.approx(expected, abs=1e-6), column
        assert all(0.0 < value < 1.0 for value in out[column][1:])


def test_duplicates_are_encoded_once(scorer, monkeypatch):
    import capeval.scoring.smurf as smurf

    seen = []
    real = smurf.information_flows
    monkeypatch.setattr(smurf, "information_flows", lambda encoder, ids, **kw: seen.append(len(ids)) or real(encoder, ids, **kw))
    out = scorer.score(["a dog", "a dog", "a cat", "a dog"])
    assert seen == [2, 2] and out["mima"][0] == out["mima"][1] == out["mima"][3]
