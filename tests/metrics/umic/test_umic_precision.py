"""UMIC's GPU-path options on CPU: a bfloat16 forward pass against float32, fused (SDPA) against eager attention,
and token-budget batches against fixed-count ones, on the real sample BUTD features with the tiny random UNITER."""

import pytest
import torch

from capeval.backbones.common import token_budget_batches
from capeval.backbones.uniter import load_uniter_scorer
from capeval.scoring.umic import UmicScorer
from capeval.vision.regions import as_region_features

CAPTIONS = ["Two men riding horses on the ground.", "a horse in a field", "a calf", "two men", "", "the arena",
            "a man riding a horse in a dirt arena", "horses"]


@pytest.fixture(scope="module")
def regions(sample_features):
    return [as_region_features(sample_features)] * len(CAPTIONS)


def umic(tiny_umic, regions, **options) -> list[float]:
    return UmicScorer(**{**tiny_umic, **options}).score(CAPTIONS, region_features=regions)["umic"]


def test_bfloat16_is_within_its_tolerance_of_float32(tiny_umic, regions):
    exact = umic(tiny_umic, regions)
    reduced = umic(tiny_umic, regions, dtype="bfloat16")
    differences = [abs(a - b) for a, b in zip(exact, reduced)]
    # bfloat16 keeps 8 significand bits: measured 6.4e-4 here, 1.4e-4 in float16 (stated in the README card).
    assert max(differences) < 2e-3
    assert max(differences) > 1e-6, "the option changes the arithmetic"
    assert all(isinstance(value, float) for value in reduced)


def test_dtype_enters_the_options_and_is_checked(tiny_umic):
    assert UmicScorer(**tiny_umic, dtype="bfloat16").options()["dtype"] == "bfloat16"
    assert "dtype" not in UmicScorer(**tiny_umic).options(), "float32 results keep their hashcodes"
    with pytest.raises(ValueError, match="dtype must be one of"):
        UmicScorer(**tiny_umic, dtype="float64")


def test_sdpa_attention_equals_eager(tiny_umic_checkpoint):
    scorer = UmicScorer(checkpoint=tiny_umic_checkpoint, num_attention_heads=4, device="cpu")
    assert scorer.model.uniter.config._attn_implementation == "sdpa", "UMIC needs no attention weights"
    eager = load_uniter_scorer(tiny_umic_checkpoint, num_attention_heads=4, device="cpu", attention="eager")
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 40, (3, 9), generator=generator)
    text_mask = torch.tensor([[1] * 9, [1] * 6 + [0] * 3, [1] * 3 + [0] * 6])
    feat, pos = torch.rand(3, 12, 2048, generator=generator), torch.rand(3, 12, 7, generator=generator)
    img_mask = torch.tensor([[1] * 12, [1] * 10 + [0] * 2, [1] * 11 + [0]])
    with torch.inference_mode():
        fused, explicit = scorer.model(ids, text_mask, feat, pos, img_mask), eager(ids, text_mask, feat, pos, img_mask)
    assert torch.allclose(fused, explicit, atol=1e-5, rtol=0)


def test_token_budget_batches_respect_the_budget_and_keep_the_scores(tiny_umic, regions):
    fixed = umic(tiny_umic, regions, token_budget=None)
    scorer = UmicScorer(**tiny_umic, token_budget=150)
    padded_sizes = []
    hook = scorer.model.register_forward_pre_hook(lambda _, args: padded_sizes.append(len(args[0]) * (args[0].shape[1] + args[2].shape[1])))
    try:
        packed = scorer.score(CAPTIONS, region_features=regions)["umic"]
    finally:
        hook.remove()
    assert packed == pytest.approx(fixed, abs=1e-6)
    # 36 regions + 2..11 ids per caption: three or four pairs fit in 150 positions, a fixed count of 16 would take all 8.
    assert max(padded_sizes) <= 150 and len(padded_sizes) == 3


def test_token_budget_batches():
    lengths = {"long": (40, 36), "mid": (20, 36), "short": (3, 36), "tiny": (2, 10)}
    assert token_budget_batches(list(lengths), 120, lengths.__getitem__) == [["long"], ["mid", "short"], ["tiny"]]
    assert token_budget_batches(list(lengths), 60, lengths.__getitem__) == [["long"], ["mid"], ["short"], ["tiny"]], \
        "an item over the budget still gets a batch"
    with pytest.raises(ValueError, match="token_budget must be an integer >= 1"):
        UmicScorer(token_budget=0)
