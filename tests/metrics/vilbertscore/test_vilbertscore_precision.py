"""ViLBERTScore's GPU-path options on CPU: a bfloat16 forward pass against float32 and token-budget batches against
fixed-count ones, on the real sample features (and seeded random ones) with the tiny random ViLBERT."""

import pytest

PREDICTIONS = ["two men riding horses", "A horse in an arena.", "a dog", "men on horses in a dirt arena at a rodeo"]
REFERENCES = [["men on horses", "a rodeo", "two riders"], ["a horse", "men on horses"], ["a horse"], ["two men", "a calf"]]


@pytest.fixture(scope="module")
def images(sample_vilbert_features, random_vilbert_features):
    return [sample_vilbert_features, sample_vilbert_features, random_vilbert_features, random_vilbert_features]


def vilbertscore(scorer, images) -> dict[str, list[float]]:
    scores = scorer.score(PREDICTIONS, REFERENCES, region_features=images)
    return {name: scores[name] for name in ("precision", "recall", "f1")}


def test_bfloat16_is_within_its_tolerance_of_float32(tiny_vilbert, images):
    exact = vilbertscore(tiny_vilbert(), images)
    reduced = vilbertscore(tiny_vilbert(dtype="bfloat16"), images)
    differences = [abs(a - b) for name in exact for a, b in zip(exact[name], reduced[name])]
    # bfloat16 keeps 8 significand bits: measured 1.4e-4 here, 2.8e-5 in float16 (stated in the README card).
    assert max(differences) < 5e-4
    assert max(differences) > 1e-6, "the option changes the arithmetic"


def test_dtype_enters_the_options_and_is_checked(tiny_vilbert):
    assert tiny_vilbert(dtype="float16").options()["dtype"] == "float16"
    assert "dtype" not in tiny_vilbert().options(), "float32 results keep their hashcodes"
    with pytest.raises(ValueError, match="dtype must be one of"):
        tiny_vilbert(dtype="half")


def test_token_budget_batches_respect_the_budget_and_keep_the_scores(tiny_vilbert, images):
    fixed = vilbertscore(tiny_vilbert(), images)
    scorer = tiny_vilbert(token_budget=400)
    padded_sizes = []
    hook = scorer.model().register_forward_pre_hook(lambda _, args: padded_sizes.append(len(args[0]) * (args[0].shape[1] + args[2].shape[1])))
    try:
        packed = vilbertscore(scorer, images)
    finally:
        hook.remove()
    for name in fixed:
        assert packed[name] == pytest.approx(fixed[name], abs=1e-6)
    # 100 boxes + 3..12 ids per pair: three pairs fit in 400 positions; the 12 distinct pairs take four batches.
    assert max(padded_sizes) <= 400 and len(padded_sizes) == 4
