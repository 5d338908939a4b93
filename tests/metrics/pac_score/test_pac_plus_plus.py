"""PAC-S++ / RefPAC-S++: pac_score(variant="pac-s++") against what aimagelab/pacscore's released loading path
(compute_correlations_pac++.py: clip_lora.load(..., lora=4), load_state_dict, eval()) computed from the same small
checkpoints, saved in train mode (factors apart) and after eval() (MLP factors merged); its options and errors."""

import re

import numpy as np
import pytest
import torch

import capeval
from capeval.backbones.clip import LORA_RANK, fold_pac_lora, lora_factor_shapes, lora_layers, load_clip_encoder
from capeval.checkpoints import cached_path_for
from capeval.models import ModelUnavailableError
from capeval.scoring.clip import PAC_PLUS_PLUS_CHECKPOINTS, ClipScoreScorer, PacScoreScorer, harmonic_mean

from fixtures.clip import CAPTIONS, image_zoo

from fixtures.clip_variants import GOLDENS, SAVINGS, fingerprint

pytestmark = pytest.mark.models

TEXTS = ["A photo depicts " + caption for caption in CAPTIONS]


def test_the_checkpoints_are_those_the_goldens_were_made_from(lora_clip):
    assert GOLDENS["texts"] == TEXTS and GOLDENS["images"] == list(image_zoo())
    assert fingerprint(lora_clip.base) == lora_clip.golden["base"]
    for saving in SAVINGS:
        assert fingerprint(lora_clip.states[saving]) == lora_clip.golden[saving]
    # The writer saves what the released model's state_dict() held in train mode and after eval() (0 difference).
    assert lora_clip.golden["train_writer_max_diff"] == lora_clip.golden["eval_writer_max_diff"] == 0


def unit_rows(features: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norms, in their own dtype, as the released code normalises them."""
    return features / np.sqrt(np.sum(features ** 2, axis=1, keepdims=True))


@pytest.mark.parametrize("saving", SAVINGS)
def test_features_equal_the_released_loading_path(lora_clip, saving):
    encoder = load_clip_encoder(lora_clip.folder, checkpoint=lora_clip.checkpoints[saving], lora=True, device="cpu")
    text = encoder.text_features(TEXTS, mode="code", batch_size=4)
    image = encoder.image_features(list(image_zoo().values()), mode="code", batch_size=4)
    expected_text, expected_image = (np.array(lora_clip.golden[f"{saving}_{tower}"]) for tower in ("text", "image"))
    np.testing.assert_allclose(unit_rows(text), unit_rows(expected_text), atol=1e-5)
    np.testing.assert_allclose(unit_rows(image), unit_rows(expected_image), atol=1e-5)
    np.testing.assert_allclose(text, expected_text, rtol=0, atol=1e-5 * np.abs(expected_text).max())
    np.testing.assert_allclose(image, expected_image, rtol=0, atol=1e-5 * np.abs(expected_image).max())


def released_scores(golden: dict, saving: str, captions: list[int], references: list[list[int]]):
    """pac_score.py's PAC-S and RefPAC-S (w = 2) from the released features: caption and reference indices into
    the golden texts, one golden image per caption (in order)."""
    text, image = unit_rows(np.array(golden[f"{saving}_text"])), unit_rows(np.array(golden[f"{saving}_image"]))
    pac = 2.0 * np.clip(np.sum(image[: len(captions)] * text[captions], axis=1), 0, None)
    best = np.array([np.max(text[c] @ text[refs].T) for c, refs in zip(captions, references)])
    return pac, harmonic_mean(pac, best)


@pytest.mark.parametrize("saving", SAVINGS)
def test_pac_s_plus_plus_and_refpac_s_plus_plus_equal_the_released_code(lora_clip, saving):
    zoo = list(image_zoo().values())
    captions = list(range(len(zoo)))
    references = [[(i + 2) % len(CAPTIONS), (i + 5) % len(CAPTIONS)] for i in captions]
    expected_pac, expected_ref = released_scores(lora_clip.golden, saving, captions, references)
    scorer = PacScoreScorer(variant="pac-s++", checkpoint=lora_clip.checkpoints[saving], model_name=lora_clip.folder, device="cpu")
    scores = scorer.score([CAPTIONS[i] for i in captions], [[CAPTIONS[j] for j in refs] for refs in references], images=zoo)
    np.testing.assert_allclose(scores["pac_s"], expected_pac, atol=1e-5)
    np.testing.assert_allclose(scores["refpac_s"], expected_ref, atol=1e-5)
    assert 0 < (expected_pac == 0).sum() < len(captions)  # scores on both sides of PAC-S's clip at 0


def test_the_two_savings_give_other_weights_and_the_same_released_rule(lora_clip):
    """The eval()-saved MLP weights hold their factors; the fold keeps every MLP weight as stored and adds the
    attention and patch-embedding factors (W + B A / 4) to both savings alike."""
    folded = {saving: fold_pac_lora(lora_clip.states[saving]) for saving in SAVINGS}
    for weight, a, b, used in lora_layers(lora_clip.base):
        train = lora_clip.states["train"]
        delta = (train[b] @ train[a]).reshape(train[weight].shape) / LORA_RANK
        if used:
            for saving in SAVINGS:
                torch.testing.assert_close(folded[saving][weight], lora_clip.base[weight] + delta, rtol=0, atol=1e-6)
        else:
            assert torch.equal(folded["train"][weight], lora_clip.base[weight])
            torch.testing.assert_close(folded["eval"][weight], lora_clip.base[weight] + delta, rtol=0, atol=1e-6)
    assert not any("lora_" in key for key in folded["train"])
    # Reading the checkpoints otherwise (factors ignored; every factor merged) moves the released features far
    # (measured by the goldens' script on the train-mode saving: text, image).
    assert min(lora_clip.golden["factors_ignored_max_diff"] + lora_clip.golden["all_merged_max_diff"]) > 0.1


def test_the_released_resnet_path_cannot_run_and_capeval_refuses_resnets(tmp_path, lora_clip):
    assert GOLDENS["released_resnet_forward"] == "AttributeError: 'ModifiedResNet' object has no attribute 'relu1'"
    state = {key: value for key, value in lora_clip.states["train"].items() if not key.startswith("visual.")}
    state["visual.layer1.0.conv1.weight"] = torch.zeros(4, 4, 1, 1)
    torch.save({"state_dict": state}, tmp_path / "resnet.pth")
    for variant in ("pac-s", "pac-s++"):
        scorer = PacScoreScorer(variant=variant, checkpoint=str(tmp_path / "resnet.pth"), model_name=lora_clip.folder, device="cpu")
        with pytest.raises(ModelUnavailableError, match=r"is a ResNet CLIP .*ViT image towers only: use a ViT checkpoint"):
            scorer.encoder


def saved(tmp_path, name, state) -> str:
    torch.save({"state_dict": state}, tmp_path / name)
    return str(tmp_path / name)


def test_checkpoints_of_another_rank_or_layout_give_one_clear_error(tmp_path, lora_clip):
    train = lora_clip.states["train"]
    rank_8 = dict(lora_clip.base)
    for weight, a, b, _ in lora_layers(rank_8):
        shape_a, shape_b = lora_factor_shapes(rank_8[weight].shape, rank=8)
        rank_8[a], rank_8[b] = torch.zeros(shape_a), torch.zeros(shape_b)
    missing = {key: value for key, value in train.items() if key != "visual.transformer.resblocks.1.mlp.c_proj.lora_B"}
    extra = {**train, "token_embedding.lora_A": torch.zeros(4, 8)}
    misshapen = {**train, "visual.conv1.lora_A": torch.zeros(4, 3)}
    advice = r"Pass a checkpoint saved from the released PAC-S\+\+ model .*, or variant='pac-s' for a plain CLIP state dict"
    cases = [(rank_8, r"holds LoRA factors of rank 8 \(transformer.resblocks.0.attn.in_proj_weight_lora_A: \(8, 64\)\); "
                      r"PAC-S\+\+ uses rank 4\. " + advice),
             (missing, r"does not have PAC-S\+\+'s LoRA layout .*missing: \['visual.transformer.resblocks.1.mlp.c_proj.lora_B'\]\)\. " + advice),
             (extra, r"LoRA layout .*unexpected: \['token_embedding.lora_A'\]"),
             (misshapen, r"LoRA layout .*wrong shape: \['visual.conv1.lora_A'\]"),
             (lora_clip.base, r"LoRA layout .*missing: \[.*\]")]
    for i, (state, message) in enumerate(cases):
        scorer = PacScoreScorer(variant="pac-s++", checkpoint=saved(tmp_path, f"{i}.pth", state), model_name=lora_clip.folder,
                                device="cpu")
        with pytest.raises(ModelUnavailableError, match=message):
            scorer.encoder


def test_a_pac_s_plus_plus_checkpoint_loaded_as_a_plain_clip_says_which_variant(lora_clip):
    message = r"holds LoRA factors \(lora_A / lora_B keys\): it is a PAC-S\+\+ checkpoint\. Score it with pac_score and variant='pac-s\+\+'"
    checkpoint = lora_clip.checkpoints["train"]
    with pytest.raises(ModelUnavailableError, match=message):
        PacScoreScorer(checkpoint=checkpoint, model_name=lora_clip.folder, device="cpu").encoder
    with pytest.raises(ModelUnavailableError, match=message):
        ClipScoreScorer(checkpoint=checkpoint, model_name=lora_clip.folder, device="cpu").encoder


def test_the_published_checkpoints_are_the_defaults_and_load_only_when_scoring(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    for model_name, file_name in (("openai/clip-vit-base-patch32", "PAC++_clip_ViT-B-32.pth"),
                                  ("openai/clip-vit-large-patch14", "PAC++_clip_ViT-L-14.pth")):
        scorer = PacScoreScorer(variant="pac-s++", model_name=model_name, device="cpu")  # nothing downloaded yet
        assert scorer.checkpoint == PAC_PLUS_PLUS_CHECKPOINTS[model_name] and scorer.checkpoint.endswith("/pac++/" + file_name)
        with pytest.raises(ModelUnavailableError, match=r"not cached and offline mode .* forbids downloading it\. Download "
                                                        + scorer.checkpoint.replace("+", r"\+")):
            scorer.encoder
    assert PacScoreScorer().checkpoint is None  # PAC-S's own checkpoint has no plain URL: required to score
    with pytest.raises(ValueError, match=r"PAC-S\+\+ checkpoints are published for 'openai/clip-vit-base-patch32' \(https://.*"
                                         r"pass one of these model_name values, or checkpoint= the path or URL"):
        PacScoreScorer(variant="pac-s++", model_name="openai/clip-vit-base-patch16")


def test_a_url_checkpoint_comes_from_the_download_cache(monkeypatch, tmp_path, lora_clip):
    url = "https://example.org/pac++/PAC++_tiny.pth"
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    target = cached_path_for(url)
    target.parent.mkdir(parents=True)
    target.write_bytes(open(lora_clip.checkpoints["eval"], "rb").read())
    zoo = image_zoo()
    by_url = PacScoreScorer(variant="pac-s++", checkpoint=url, model_name=lora_clip.folder, device="cpu")
    by_path = PacScoreScorer(variant="pac-s++", checkpoint=lora_clip.checkpoints["eval"], model_name=lora_clip.folder, device="cpu")
    call = dict(predictions=CAPTIONS[:2], references=None, images=[zoo["RGB"], zoo["L"]])
    # (other tests encoded these images in other batches: float rounding only)
    np.testing.assert_allclose(by_url.score(**call)["pac_s"], by_path.score(**call)["pac_s"], atol=1e-6)
    assert by_url.options()["checkpoint"] == url


def test_module_options_variant_and_hashcode(lora_clip):
    zoo = image_zoo()
    pac = capeval.load("pac_score", variant="pac-s++", checkpoint=lora_clip.checkpoints["train"], model_name=lora_clip.folder,
                       device="cpu")
    result = pac.compute(predictions=CAPTIONS[:2], references=[[CAPTIONS[3]], [CAPTIONS[4]]], images=[zoo["RGB"], zoo["P"]])
    assert set(result) >= {"pac_score", "pac_s", "refpac_s", "truncated_texts", "hashcode"}
    assert result["hashcode"].startswith("pac_score(checkpoint=PAC++_train.pth@") and "variant=pac-s++" in result["hashcode"]
    with pytest.raises(ValueError, match=r"variant must be one of \('pac-s', 'pac-s\+\+'\)"):
        capeval.load("pac_score", variant="pac-s+")


def test_a_nan_checkpoint_is_named_in_the_error(tmp_path, lora_clip):
    from capeval.finite import NonFiniteError

    state = dict(lora_clip.states["train"])
    state["text_projection"] = torch.full_like(state["text_projection"], float("nan"))
    path = str(tmp_path / "PAC++_nan.pth")
    torch.save({"state_dict": state}, path)
    scorer = PacScoreScorer(variant="pac-s++", checkpoint=path, model_name=lora_clip.folder, device="cpu")
    with pytest.raises(NonFiniteError, match=f"^the CLIP features of 'a dog' from {re.escape(path)} hold NaN"):
        scorer.score(["a dog"], images=[image_zoo()["RGB"]])
