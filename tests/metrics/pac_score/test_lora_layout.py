"""PAC-S++'s LoRA layout without a model: which keys the released clip_lora model's state dict holds, their shapes,
and the fold that reproduces its loading path (attention and patch-embedding factors added, MLP weights as stored)."""

import pytest
import torch

from capeval.backbones.clip import (LORA_RANK, check_vit_layout, fold_pac_lora, lora_factor_shapes, lora_layers,
                                    with_random_lora)
from capeval.models import ModelUnavailableError

from fixtures.clip import random_openai_state

WIDTH, VISION_WIDTH, PATCH = 8, 16, 32


@pytest.fixture(scope="module")
def base():
    """A ViT state at tiny widths (2 blocks per tower), in OpenAI CLIP's layout."""
    return random_openai_state(30, width=WIDTH, vision_width=VISION_WIDTH, layers=2, embed=4, patch=PATCH)


def test_the_released_models_lora_layers(base):
    layers = lora_layers(base)
    assert layers[0] == ("visual.conv1.weight", "visual.conv1.lora_A", "visual.conv1.lora_B", True)
    assert len(layers) == 1 + 2 * 2 * 4  # the patch embedding, then 4 per block of each tower
    block = [layer for layer in layers if layer[0].startswith("visual.transformer.resblocks.1.")]
    assert block == [
        ("visual.transformer.resblocks.1.attn.in_proj_weight", "visual.transformer.resblocks.1.attn.in_proj_weight_lora_A",
         "visual.transformer.resblocks.1.attn.in_proj_weight_lora_B", True),
        ("visual.transformer.resblocks.1.attn.out_proj.weight", "visual.transformer.resblocks.1.attn.out_proj.lora_A",
         "visual.transformer.resblocks.1.attn.out_proj.lora_B", True),
        ("visual.transformer.resblocks.1.mlp.c_fc.weight", "visual.transformer.resblocks.1.mlp.c_fc.lora_A",
         "visual.transformer.resblocks.1.mlp.c_fc.lora_B", False),
        ("visual.transformer.resblocks.1.mlp.c_proj.weight", "visual.transformer.resblocks.1.mlp.c_proj.lora_A",
         "visual.transformer.resblocks.1.mlp.c_proj.lora_B", False)]
    assert sum(layer[0].startswith("transformer.resblocks.") for layer in layers) == 8


def test_factor_shapes_follow_the_released_layers():
    # Linear (out, in): A r × in, B out × r; the fused attention input (3d, d) likewise.
    assert lora_factor_shapes((24, 8)) == ((4, 8), (24, 4))
    # Conv2d (out, in, k, k): A r·k × in·k, B out·k × r·k (custom_loralib.Conv2d).
    assert lora_factor_shapes((16, 3, 32, 32)) == ((128, 96), (512, 128))
    assert lora_factor_shapes((5, 7), rank=2) == ((2, 7), (5, 2))


@pytest.mark.parametrize("mlp_merged", [False, True])
def test_random_factors_in_the_released_layout(base, mlp_merged):
    state = with_random_lora(base, mlp_merged=mlp_merged, seed=1)
    for weight, a, b, used in lora_layers(base):
        assert (tuple(state[a].shape), tuple(state[b].shape)) == lora_factor_shapes(base[weight].shape)
        delta = (state[b] @ state[a]).reshape(base[weight].shape) / LORA_RANK
        expected = base[weight] + delta if mlp_merged and not used else base[weight]
        torch.testing.assert_close(state[weight], expected, rtol=0, atol=0)
    for factor in ("visual.conv1.lora_A", "visual.conv1.lora_B"):
        assert with_random_lora(base, seed=1)[factor].std() == pytest.approx(0.2, rel=0.05)
    assert not torch.equal(with_random_lora(base, seed=2)["visual.conv1.lora_A"], state["visual.conv1.lora_A"])
    assert set(state) - set(base) == {key for _, a, b, _ in lora_layers(base) for key in (a, b)}


@pytest.mark.parametrize("mlp_merged", [False, True])
def test_the_fold_applies_attention_and_patch_factors_and_keeps_mlp_weights(base, mlp_merged):
    state = with_random_lora(base, mlp_merged=mlp_merged, seed=1)
    folded = fold_pac_lora(state)
    assert set(folded) == set(base)
    for weight, a, b, used in lora_layers(base):
        delta = (state[b].double() @ state[a].double()).reshape(base[weight].shape) / 4
        expected = (base[weight].double() + delta).float() if used else state[weight]
        torch.testing.assert_close(folded[weight], expected, rtol=0, atol=1e-7)
        assert folded[weight].dtype == torch.float32
    assert torch.equal(folded["ln_final.weight"], base["ln_final.weight"])


def test_a_half_precision_checkpoint_folds_in_float32(base):
    state = {key: value.half() for key, value in with_random_lora(base, seed=1).items()}
    folded = fold_pac_lora(state)
    weight = "transformer.resblocks.0.attn.in_proj_weight"
    expected = state[weight].double() + state[weight + "_lora_B"].double() @ state[weight + "_lora_A"].double() / 4
    assert folded[weight].dtype == torch.float32
    torch.testing.assert_close(folded[weight], expected.float(), rtol=0, atol=1e-6)


def test_layout_errors_name_what_is_wrong(base):
    state = with_random_lora(base, seed=1)
    rank_2 = dict(base)
    for weight, a, b, _ in lora_layers(base):
        rank_2[a], rank_2[b] = (torch.zeros(shape) for shape in lora_factor_shapes(base[weight].shape, rank=2))
    with pytest.raises(ModelUnavailableError, match=r"^The PAC-S\+\+ checkpoint holds LoRA factors of rank 2 "
                                                    r"\(transformer.resblocks.0.attn.in_proj_weight_lora_A: \(2, 8\)\); PAC-S\+\+ uses rank 4\."):
        fold_pac_lora(rank_2)
    with pytest.raises(ModelUnavailableError, match=r"^The my file does not have"):
        fold_pac_lora({k: v for k, v in state.items() if k != "visual.conv1.lora_B"}, what="my file")
    many = {**state, **{f"extra.{i}.lora_A": torch.zeros(1) for i in range(6)}}
    with pytest.raises(ModelUnavailableError, match=r"unexpected: \['extra.0.lora_A', 'extra.1.lora_A', 'extra.2.lora_A', 'extra.3.lora_A'\] …\)"):
        fold_pac_lora(many)
    with pytest.raises(ModelUnavailableError, match=r"wrong shape: \['visual.conv1.lora_B'\]\)"):
        fold_pac_lora({**state, "visual.conv1.lora_B": torch.zeros(3, 3)})
    without_first_a = {k: v for k, v in state.items() if k != "transformer.resblocks.0.attn.in_proj_weight_lora_A"}
    with pytest.raises(ModelUnavailableError, match=r"missing: \['transformer.resblocks.0.attn.in_proj_weight_lora_A'\]\)"):
        fold_pac_lora(without_first_a)
    one_dimensional = {**state, "transformer.resblocks.0.attn.in_proj_weight_lora_A": torch.zeros(4)}
    with pytest.raises(ModelUnavailableError, match=r"wrong shape: \['transformer.resblocks.0.attn.in_proj_weight_lora_A'\]"):
        fold_pac_lora(one_dimensional)


def test_vit_layout_checks(base):
    check_vit_layout(base, what="x", lora=False)
    check_vit_layout(with_random_lora(base), what="x", lora=True)
    with pytest.raises(ModelUnavailableError, match=r"^The x holds LoRA factors"):
        check_vit_layout(with_random_lora(base), what="x", lora=False)
    with pytest.raises(ModelUnavailableError, match=r"^The x is a ResNet CLIP"):
        check_vit_layout({**base, "visual.layer1.0.conv1.weight": torch.zeros(1)}, what="x", lora=True)
    check_vit_layout({**base, "visual.layer10": torch.zeros(1)}, what="x", lora=False)  # only ResNet's first stage
