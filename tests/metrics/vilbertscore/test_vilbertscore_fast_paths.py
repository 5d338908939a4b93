"""ViLBERTScore's speed-only options give the plain path's scores: batches grouped by image (each image's regions
embedded once per batch), fixed-shape batches (what CUDA graphs replay; eager on CPU), torch.compile, and on CUDA the
captured graphs themselves."""

import pytest
import torch

from capeval.scoring.vilbertscore import TEXT_BUCKET

PREDICTIONS = ["two men riding horses", "A horse in an arena.", "a dog", "men on horses in a dirt arena at a rodeo", "a dog"]
REFERENCES = [["men on horses", "a rodeo", "two riders"], ["a horse", "men on horses"], ["a horse"], ["two men", "a calf"],
              ["a brown dog runs on the grass"]]


@pytest.fixture(scope="module")
def images(sample_vilbert_features, random_vilbert_features):
    # Items 0, 1 and 3 share the sample image; 2 and 4 the random one: five captions, two distinct images.
    return [sample_vilbert_features, sample_vilbert_features, random_vilbert_features, sample_vilbert_features, random_vilbert_features]


def scores_and_calls(scorer, images, **call) -> tuple[dict[str, list[float]], list[dict]]:
    """The scores, and per forward pass the shapes the model received (text rows × length, image rows)."""
    calls = []
    hook = scorer.model.register_forward_pre_hook(
        lambda _, args, kwargs: calls.append({"texts": tuple(args[0].shape), "images": args[2].shape[0], "masked": args[4] is not None,
                                              "index": kwargs.get("image_index")}), with_kwargs=True)
    try:
        scores = scorer.score(PREDICTIONS, REFERENCES, region_features=images, **call)
    finally:
        hook.remove()
    return {name: scores[name] for name in ("precision", "recall", "f1")}, calls


def assert_equal_scores(a, b, tolerance=1e-6):
    for name in a:
        assert b[name] == pytest.approx(a[name], abs=tolerance), name


@pytest.fixture(scope="module")
def plain(tiny_vilbert, images):
    return scores_and_calls(tiny_vilbert(group_by_image=False), images, batch_size=4)


def test_batches_grouped_by_image_embed_each_image_once(tiny_vilbert, images, plain):
    grouped, calls = scores_and_calls(tiny_vilbert(), images, batch_size=4)
    assert_equal_scores(plain[0], grouped)
    # 12 distinct (caption, image) pairs: the random image's 3 first (its longest caption is the shorter), then the
    # sample image's 9; a batch holds one image row per image it reads.
    assert [call["texts"][0] for call in calls] == [4, 4, 4]
    assert [call["images"] for call in calls] == [2, 1, 1]
    assert [call["index"].tolist() for call in calls] == [[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert all(call["index"] is not None and not call["masked"] for call in calls)
    # The plain path: one image row per pair, gathered by nobody.
    assert [call["images"] for call in plain[1]] == [call["texts"][0] for call in plain[1]]
    assert all(call["index"] is None for call in plain[1])


def test_region_padding_is_masked_when_images_differ_in_boxes(tiny_vilbert, images, sample_vilbert_features):
    fewer = {**sample_vilbert_features, "features": sample_vilbert_features["features"][:36],
             "bbox": sample_vilbert_features["bbox"][:36]}
    mixed = [fewer, *images[1:]]
    expected, _ = scores_and_calls(tiny_vilbert(group_by_image=False), mixed, batch_size=32)
    grouped, calls = scores_and_calls(tiny_vilbert(), mixed, batch_size=32)
    assert_equal_scores(expected, grouped)
    assert [(call["images"], call["masked"]) for call in calls] == [(3, True)]


@pytest.mark.parametrize("group_by_image", [True, False])
def test_fixed_shape_batches_keep_the_scores(tiny_vilbert, images, plain, group_by_image):
    """cuda_graphs on CPU: the fixed-shape batches CUDA graphs are captured for, run eagerly."""
    fixed, calls = scores_and_calls(tiny_vilbert(cuda_graphs=True, group_by_image=group_by_image), images, batch_size=4)
    assert_equal_scores(plain[0], fixed)
    assert {call["texts"][0] for call in calls} == {4} and {call["images"] for call in calls} == {4}
    assert all(call["texts"][1] % TEXT_BUCKET == 0 for call in calls)
    assert all(call["index"] is not None for call in calls)


def test_fixed_shape_batches_with_a_token_budget(tiny_vilbert, images, plain):
    fixed, calls = scores_and_calls(tiny_vilbert(cuda_graphs=True, token_budget=400), images)
    assert_equal_scores(plain[0], fixed)
    # 101 regions + at most 16 text positions per pair: three pairs fit 400, so the 12 pairs take four batches.
    assert len(calls) == 4 and {call["texts"][0] for call in calls} == {3} and {call["images"] for call in calls} == {3}


def test_the_speed_options_are_checked_and_leave_the_hashcode(tiny_vilbert):
    assert tiny_vilbert(cuda_graphs=True, torch_compile=True, group_by_image=False).options() == tiny_vilbert().options()
    for option in ("cuda_graphs", "torch_compile", "group_by_image"):
        with pytest.raises(ValueError, match=f"{option} must be True or False"):
            tiny_vilbert(**{option: "yes"})


@pytest.mark.slow
@pytest.mark.models
def test_torch_compile_keeps_the_scores(tiny_vilbert, images, plain):
    scorer = tiny_vilbert(torch_compile=True)
    # One batch, one shape: one compilation (about a minute on two CPU cores).
    compiled, calls = scores_and_calls(scorer, images, batch_size=32)
    assert_equal_scores(plain[0], compiled, tolerance=1e-5)
    assert len(calls) == 1 and calls[0]["texts"][1] % TEXT_BUCKET == 0


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_cuda_graphs_give_the_eager_cuda_scores(tiny_vilbert, images, dtype):
    eager = scores_and_calls(tiny_vilbert(device="cuda", dtype=dtype), images, batch_size=4)[0]
    scorer = tiny_vilbert(device="cuda", dtype=dtype, cuda_graphs=True)
    first = scores_and_calls(scorer, images, batch_size=4)[0]
    graphs = scorer.forward()
    captured = len(graphs)
    again = scorer.score(PREDICTIONS, REFERENCES, region_features=images, batch_size=4)
    assert_equal_scores(eager, first, tolerance=1e-5 if dtype == "float32" else 2e-3)
    # A second call replays the graphs captured by the first, and gives the same scores bit for bit.
    assert 1 <= captured == len(graphs) and all(again[name] == first[name] for name in first)
