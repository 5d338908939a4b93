"""The Visual-T5 port: encoder input layout, equality with a plain restatement on transformers' T5, batching,
and loading the checkpoint from a folder, a torch .bin, a zip or a cached URL (unsafe zips refused)."""

import os
import zipfile

import numpy as np
import pytest
import torch
from safetensors import safe_open
from transformers import T5ForConditionalGeneration

from capeval.backbones.visual_t5 import (DEFAULT_CHECKPOINT, IMAGE_PREFIX_IDS, VisualT5Answerer, extract_zip_safely,
                                         load_visual_t5, visual_t5_folder)
from capeval.checkpoints import cached_path_for
from capeval.models import ModelUnavailableError
from capeval.vision.regions import RegionFeatures, as_region_features

QUESTIONS = ["What do the two men ride on the ground?", "How many men are riding horses on the ground?",
             "Where are the horses?", "What kind of animals are the men on?"]


@pytest.fixture(scope="module")
def answerer(tiny_visual_t5):
    return VisualT5Answerer(tiny_visual_t5, tiny_visual_t5, device="cpu")


@pytest.fixture(scope="module")
def sample(sample_features):
    return as_region_features(sample_features)


def test_encoder_input_layout(answerer, sample, sample_features):
    pieces = answerer.tokenizer("visual answer: where are the horses?", add_special_tokens=False)["input_ids"]
    n = len(pieces)
    input_ids, mask, regions = answerer.encoder_inputs(["where are the horses?"], [sample])
    assert input_ids.shape == (1, 66) and mask.shape == (1, 102) and regions.shape == (1, 36, 2054)
    assert input_ids[0, :n].tolist() == pieces and answerer.tokenizer.eos_token_id not in pieces  # no </s>
    assert input_ids[0, n:64].tolist() == [0] * (64 - n) and input_ids[0, 64:].tolist() == list(IMAGE_PREFIX_IDS) == [1023, 10]
    assert mask[0].tolist() == [1] * n + [0] * (64 - n) + [1] * 38
    # each region slot: the fp16 feature cast to fp32, then the 6-d norm_bb
    stored = np.load(sample_features)
    assert torch.equal(regions[0, :, :2048], torch.from_numpy(stored["features"].astype(np.float32)))
    assert torch.equal(regions[0, :, 2048:], torch.from_numpy(stored["norm_bb"].astype(np.float32)))
    embeddings = answerer.model.encoder_embeddings(input_ids, regions)
    assert embeddings.shape == (1, 102, answerer.model.t5.config.d_model)
    assert torch.equal(embeddings[0, :66], answerer.model.t5.shared(input_ids[0]))


def test_nine_piece_question_layout(answerer, sample):
    # spec test vector: 9 pieces, 55 zeros, [1023, 10]; mask 9 ones, 55 zeros, 2 + 36 ones
    question = "two men are riding horses on"  # "▁visual ▁answer :" and six whole-word pieces
    assert len(answerer.text_ids([question])[0]) == 9
    input_ids, mask, _ = answerer.encoder_inputs([question], [sample])
    assert (input_ids[0, 9:64] == 0).all() and input_ids[0, 64:].tolist() == [1023, 10]
    assert mask[0].tolist() == [1] * 9 + [0] * 55 + [1] * 38


def test_long_questions_are_truncated_to_64_slots(answerer, sample):
    long_question = " ".join(["horses"] * 80)
    with pytest.warns(UserWarning, match="truncated"):
        input_ids, mask, _ = answerer.encoder_inputs([long_question], [sample])
    assert input_ids.shape == (1, 66) and mask[0, :64].all()
    with pytest.warns(UserWarning, match="truncated"):
        assert len(answerer.answer([long_question], [sample])) == 1


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny_visual_t5", "unsure_visual_t5"])
def test_port_equals_a_plain_restatement(model, request, sample):
    """transformers' T5 loaded on its own, img_emb read from the weights by hand, generate(inputs_embeds=...); on the
    wide random model (varied answers, answerability 1) and on one that gives token 73 a visible probability."""
    folder = request.getfixturevalue(model)
    answerer = VisualT5Answerer(folder, folder, device="cpu")
    plain = T5ForConditionalGeneration.from_pretrained(folder).eval()
    answerabilities = []
    with safe_open(os.path.join(folder, "model.safetensors"), framework="pt") as weights:
        weight, bias = weights.get_tensor("encoder.img_emb.weight"), weights.get_tensor("encoder.img_emb.bias")
    tokenizer = answerer.tokenizer
    features = torch.from_numpy(np.concatenate([sample.features.astype(np.float32), sample.norm_bb], axis=1))
    for question in QUESTIONS:
        pieces = tokenizer.encode("visual answer: " + question, add_special_tokens=False)
        ids = torch.tensor([pieces + [0] * (64 - len(pieces)) + [1023, 10]])
        mask = torch.ones(1, 102, dtype=torch.long)
        mask[0, len(pieces):64] = 0
        with torch.inference_mode():
            embeds = torch.cat([plain.shared(ids), features[None] @ weight.T + bias], dim=1)
            out = plain.generate(inputs_embeds=embeds, attention_mask=mask, do_sample=False, num_beams=1, max_length=20,
                                 output_scores=True, return_dict_in_generate=True)
        expected = tokenizer.decode(out.sequences[0]).replace("<pad>", "").replace("</s>", "")[1:]
        [(text, answerability)] = answerer.answer([question], [sample])
        assert text == expected
        assert answerability == pytest.approx(1 - out.scores[0].softmax(-1)[0, 73].item(), abs=1e-6)
        assert out.sequences.shape[1] <= 20
        answerabilities.append(answerability)
    if model == "unsure_visual_t5":
        assert max(answerabilities) < 0.9999


def test_batched_equals_per_item_and_different_images(answerer, sample):
    rng = np.random.default_rng(0)
    other = RegionFeatures.from_butd(rng.random((36, 2048)).astype(np.float16), sample.norm_bb)
    regions = [sample, other, sample, other]
    batched = answerer.answer(QUESTIONS, regions, batch_size=4)
    single = [answerer.answer([q], [r], batch_size=1)[0] for q, r in zip(QUESTIONS, regions)]
    assert [t for t, _ in batched] == [t for t, _ in single]
    assert [a for _, a in batched] == pytest.approx([a for _, a in single], abs=1e-5)


def test_fewer_regions_are_padded_and_masked(answerer, sample):
    ten = sample.first(10)
    input_ids, mask, regions = answerer.encoder_inputs(["where?", "where?"], [sample, ten])
    assert regions.shape == (2, 36, 2054) and mask[1, 66 + 10:].sum() == 0 and mask[1, 66:76].all()
    batched = answerer.answer(["where?", "where?"], [sample, ten])
    assert batched[1][0] == answerer.answer(["where?"], [ten])[0][0]


def test_region_dimension_is_checked(answerer):
    wrong = RegionFeatures.from_butd(np.zeros((36, 1024)), np.zeros((36, 6)))
    with pytest.raises(ValueError, match="2048-d features plus the 6-d box"):
        answerer.answer(["where?"], [wrong])
    with pytest.raises(ValueError, match="must match"):
        answerer.answer(["where?"], [])


def test_released_torch_bin_layout_loads(tmp_path, tiny_visual_t5, answerer, sample):
    """The 2021 checkpoint is a transformers 4.4 folder: config.json and pytorch_model.bin (img_emb inside)."""
    from safetensors.torch import load_file

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_bytes((open(os.path.join(tiny_visual_t5, "config.json"), "rb")).read())
    torch.save(load_file(os.path.join(tiny_visual_t5, "model.safetensors")), folder / "pytorch_model.bin")
    model = load_visual_t5(folder, device="cpu")
    assert torch.equal(model.img_emb.weight, answerer.model.img_emb.weight)
    reloaded = VisualT5Answerer(folder, tiny_visual_t5, device="cpu")
    assert reloaded.answer(QUESTIONS[:2], [sample, sample]) == answerer.answer(QUESTIONS[:2], [sample, sample])


def test_plain_t5_is_not_a_visual_t5(tiny_qa):
    with pytest.raises(ModelUnavailableError, match="without Visual-T5's region projection"):
        load_visual_t5(tiny_qa, device="cpu")


def zip_folder(folder, archive, prefix="ckpt/"):
    with zipfile.ZipFile(archive, "w") as zipped:
        for name in os.listdir(folder):
            zipped.write(os.path.join(folder, name), prefix + name)
    return archive


def test_zip_and_cached_url(tmp_path, monkeypatch, tiny_visual_t5, answerer, sample):
    archive = zip_folder(tiny_visual_t5, tmp_path / "ckpt.zip")
    assert visual_t5_folder(archive) == tmp_path / "ckpt" / "ckpt"
    from_zip = VisualT5Answerer(archive, tiny_visual_t5, device="cpu")
    assert from_zip.answer(QUESTIONS[:1], [sample]) == answerer.answer(QUESTIONS[:1], [sample])

    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="offline mode"):
        visual_t5_folder(DEFAULT_CHECKPOINT)
    cached = cached_path_for(DEFAULT_CHECKPOINT)
    cached.parent.mkdir(parents=True)
    zip_folder(tiny_visual_t5, cached)
    folder = visual_t5_folder(DEFAULT_CHECKPOINT)
    assert folder == cached.with_suffix("") / "ckpt" and (folder / "config.json").is_file()
    assert visual_t5_folder(DEFAULT_CHECKPOINT) == folder  # unzipped once, then reused


@pytest.mark.parametrize("member", ["../evil.txt", "/abs/evil.txt", "ckpt/../../evil.txt", "C:/evil.txt"])
def test_unsafe_zip_members_are_refused(tmp_path, member):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("ckpt/config.json", "{}")
        zipped.writestr(member, "x")
    with pytest.raises(ModelUnavailableError, match="unsafe member paths"):
        extract_zip_safely(archive, tmp_path / "out" / "bad")
    assert not (tmp_path / "out" / "bad").exists() and not (tmp_path / "evil.txt").exists()


def test_symlink_members_are_refused(tmp_path):
    archive = tmp_path / "link.zip"
    link = zipfile.ZipInfo("ckpt/link")
    link.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(link, "/etc/passwd")
    with pytest.raises(ModelUnavailableError, match="unsafe"):
        extract_zip_safely(archive, tmp_path / "out")


def test_not_a_checkpoint(tmp_path):
    with pytest.raises(ModelUnavailableError, match="no config.json"):
        visual_t5_folder(tmp_path)
    with pytest.raises(ModelUnavailableError, match="neither a folder"):
        visual_t5_folder(tmp_path / "missing")
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    with pytest.raises(ModelUnavailableError, match="not a readable zip"):
        visual_t5_folder(tmp_path / "broken.zip")
