"""CLIP-S's GPU-path options on CPU: a reduced-precision forward pass against float32, images decoded in a
DataLoader (worker processes, batch sizes, orders) against decoding in this process, and image features remembered
across calls."""

import multiprocessing

import numpy as np
import pytest
import torch

from capeval.backbones import clip as clip_backbone
from capeval.backbones.clip import build_clip_encoder, default_image_workers, load_clip_encoder
from capeval.scoring.clip import ClipScoreScorer, PacScoreScorer
from capeval.vision.images import ImageLoadError

from fixtures.clip import CAPTIONS, image_zoo

REFERENCES = [["a dog on the grass", "the dog runs"], ["a cat sits on the sofa"], ["a man riding a horse"]]


@pytest.fixture(scope="module")
def zoo_images():
    """Every image of the zoo (PIL modes, encoded bytes, EXIF JPEG), with repeats."""
    zoo = image_zoo()
    return [zoo[name] for name in sorted(zoo)] + [zoo["RGB"], zoo["png-bytes"]]


@pytest.fixture
def loaders(monkeypatch) -> list[list[str]]:
    """The images (by name) each DataLoader that an encoder starts decodes, one list per DataLoader."""
    started: list[list[str]] = []
    loader = torch.utils.data.DataLoader
    monkeypatch.setattr(torch.utils.data, "DataLoader", lambda dataset, **kw: started.append(dataset.names) or loader(dataset, **kw))
    return started


def clip_s(model: str, images, **options) -> list[float]:
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(images))]
    return ClipScoreScorer(model_name=model, device="cpu", **options).score(captions, images=images)["clip_s"]


def decoded_by_this_call(scorer: ClipScoreScorer, captions, images, **options) -> list[float]:
    """CLIP-S with the shared encoder's caches emptied first, so that this call decodes every image itself."""
    scorer.encoder().clear_caches()
    return scorer.score(captions, images=images, **options)["clip_s"]


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 3e-2), ("float16", 3e-3)])
def test_reduced_precision_is_within_its_tolerance_of_float32(spread_clip, zoo_images, dtype, tolerance):
    exact = clip_s(spread_clip, zoo_images)
    reduced = clip_s(spread_clip, zoo_images, dtype=dtype)
    differences = np.abs(np.array(exact) - np.array(reduced))
    # bfloat16 keeps 8 significand bits, float16 11 (the card states the differences on ViT-B/32 sizes).
    assert differences.max() < tolerance
    assert differences.max() > 1e-6, "the option changes the arithmetic"
    assert all(isinstance(value, float) for value in reduced)


def test_encoders_of_every_dtype_share_one_float32_model(spread_clip):
    exact = load_clip_encoder(spread_clip, device="cpu")
    reduced = load_clip_encoder(spread_clip, dtype="bfloat16", device="cpu")
    assert reduced.model is exact.model and reduced is not exact and reduced._text_cache is not exact._text_cache
    assert {p.dtype for p in exact.model.parameters()} == {torch.float32}
    features = reduced.text_features(["a dog"], mode="code", batch_size=4)
    assert features.dtype == np.float32


def test_encoders_of_every_dtype_keep_their_own_image_features(spread_clip, loaders):
    exact = load_clip_encoder(spread_clip, device="cpu")
    reduced = load_clip_encoder(spread_clip, dtype="bfloat16", device="cpu")
    image = [image_zoo()["odd-crop"]]
    exact.clear_caches(), reduced.clear_caches()
    float32 = exact.image_features(image, mode="code", batch_size=4)
    bfloat16 = reduced.image_features(image, mode="code", batch_size=4)
    assert loaders == [["images[0]"], ["images[0]"]], "the bfloat16 encoder does not take float32's features"
    assert np.abs(float32 - bfloat16).max() > 1e-4
    assert (exact.image_features(image, mode="code", batch_size=4) == float32).all() and len(loaders) == 2


def test_dtype_is_in_the_hashcode_as_before(spread_clip):
    assert ClipScoreScorer(model_name=spread_clip).options()["dtype"] == "float32", "float32 results keep their hashcodes"
    assert ClipScoreScorer(model_name=spread_clip, dtype="bfloat16").options()["dtype"] == "bfloat16"
    assert "num_workers" not in ClipScoreScorer(model_name=spread_clip, num_workers=2).options()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["code", "hf"])
def test_decoding_workers_batch_sizes_and_order_give_the_same_scores(spread_clip, zoo_images, mode):
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(zoo_images))]
    in_process, in_workers = (ClipScoreScorer(model_name=spread_clip, device="cpu", mode=mode, num_workers=workers)
                              for workers in (0, 2))
    baseline = decoded_by_this_call(in_process, captions, zoo_images, batch_size=64)
    for batch_size in (1, 3, 64):
        # The same pixels, so the same numbers at the same batch size; other batch sizes change only the forward
        # pass's summation order.
        with_workers = decoded_by_this_call(in_workers, captions, zoo_images, batch_size=batch_size)
        assert with_workers == decoded_by_this_call(in_process, captions, zoo_images, batch_size=batch_size)
        np.testing.assert_allclose(with_workers, baseline, rtol=0, atol=1e-6)
    reversed_scores = decoded_by_this_call(in_workers, captions[::-1], zoo_images[::-1], batch_size=64)
    np.testing.assert_allclose(reversed_scores[::-1], baseline, rtol=0, atol=1e-6)


def test_pac_score_takes_the_workers_option(pac_checkpoint, tiny_clip, zoo_images):
    captions = [CAPTIONS[i % len(CAPTIONS)] for i in range(len(zoo_images))]
    scores = []
    for workers in (0, 2):
        scorer = PacScoreScorer(checkpoint=pac_checkpoint, model_name=tiny_clip, device="cpu", num_workers=workers)
        scorer.encoder().clear_caches()  # the two scorers share one encoder
        scores.append(scorer.score(captions, images=zoo_images, batch_size=5)["pac_s"])
    assert scores[0] == scores[1]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_corrupt_image_raises_its_own_error_from_a_worker(spread_clip, workers):
    zoo = image_zoo()
    images = [zoo["RGB"], zoo["L"], b"not an image", zoo["P"]]
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu", num_workers=workers)
    scorer.encoder().clear_caches()  # every image goes through the DataLoader
    with pytest.raises(ImageLoadError) as raised:
        scorer.score(CAPTIONS[:4], images=images, batch_size=2)
    assert str(raised.value).startswith("images[2]: could not decode a bytes as an image (UnidentifiedImageError: ")
    assert "Traceback" not in str(raised.value) and "\n" not in str(raised.value)


def test_default_workers_only_on_cuda_outside_daemons(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert default_image_workers(torch.device("cpu")) == 0
    assert default_image_workers(torch.device("cuda")) == 8
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert default_image_workers(torch.device("cuda")) == 5
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert default_image_workers(torch.device("cuda")) == 1
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    assert default_image_workers(torch.device("cuda")) == 0


@pytest.mark.parametrize("options, message", [
    (dict(num_workers=-1), r"num_workers must be an integer >= 0 or None, got -1"),
    (dict(num_workers=1.5), r"num_workers must be an integer >= 0 or None, got 1.5"),
])
def test_bad_workers_fail_at_construction(spread_clip, options, message):
    with pytest.raises(ValueError, match=message):
        ClipScoreScorer(model_name=spread_clip, **options)


# --------------------------------------------------------------------------- image features remembered across calls


@pytest.fixture
def own_encoder(spread_clip):
    """An encoder of this test's own (not the process-wide one other tests fill) that can run either mode."""
    return build_clip_encoder(spread_clip, mode="hf", device="cpu")


@pytest.mark.slow
@pytest.mark.parametrize("workers, batch_size", [(0, 1), (0, 3), (2, 3)])
def test_remembered_images_are_neither_decoded_again_nor_changed(own_encoder, loaders, workers, batch_size):
    zoo = image_zoo()
    names = sorted(zoo) + ["RGB", "png-bytes"]  # with repeats
    seen = names[:6]

    def features(image_names):
        return own_encoder.image_features([zoo[name] for name in image_names], mode="code", batch_size=batch_size,
                                          num_workers=workers)

    for order in (names, names[::-1], [names[i] for i in np.random.default_rng(0).permutation(len(names))]):
        own_encoder.clear_caches()
        remembered = features(seen)
        loaders.clear()
        mixed = features(order)
        new = list(dict.fromkeys(name for name in order if name not in seen))
        assert loaders == [[f"images[{order.index(name)}]" for name in new]], "only unseen images, each once"
        own_encoder.clear_caches()
        alone = features(new)  # the same batches of the same new images
        for row, name in zip(mixed, order):
            expected = remembered[seen.index(name)] if name in seen else alone[new.index(name)]
            assert (row == expected).all(), name
        own_encoder.clear_caches()
        uncached = features(order)
        if batch_size == 1:  # every image in its own forward pass either way
            np.testing.assert_array_equal(mixed, uncached)
        else:  # other batches may change the summation order
            np.testing.assert_allclose(mixed, uncached, rtol=0, atol=1e-6)


def test_a_call_whose_images_are_all_remembered_starts_no_dataloader(own_encoder, zoo_images, loaders):
    first = own_encoder.image_features(zoo_images, mode="code", batch_size=4, num_workers=2)
    assert len(loaders) == 1
    again = own_encoder.image_features(zoo_images[::-1] + zoo_images[:2], mode="code", batch_size=4, num_workers=2)
    assert len(loaders) == 1
    np.testing.assert_array_equal(again, np.concatenate([first[::-1], first[:2]]))


def test_a_direct_call_decodes_in_this_process_into_unpinned_memory(own_encoder, monkeypatch):
    """``image_features`` starts no workers unless asked (``num_workers=0``), and pins memory only for CUDA."""
    options: list[dict] = []
    loader = torch.utils.data.DataLoader
    monkeypatch.setattr(torch.utils.data, "DataLoader", lambda dataset, **kw: options.append(kw) or loader(dataset, **kw))
    own_encoder.image_features([image_zoo()["RGB"]], mode="code", batch_size=2)
    assert [(kw["num_workers"], kw["pin_memory"]) for kw in options] == [(0, False)]


def test_cached_rows_are_read_only_copies_of_the_rows_put():
    cache = clip_backbone.FeatureRowCache(max_rows=2)
    row = np.arange(3.0)
    cache.put_many({"a": row})
    row[0] = 9.0  # the caller's array changes; the cached copy does not
    cached = cache.get_many(["a"])["a"]
    np.testing.assert_array_equal(cached, [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        cached[0] = 5.0


def test_the_least_recently_used_images_are_forgotten_beyond_the_bound(spread_clip, loaders, monkeypatch):
    monkeypatch.setattr(clip_backbone, "IMAGE_CACHE_SIZE", 3)
    encoder = build_clip_encoder(spread_clip, device="cpu")
    zoo = image_zoo()

    def decoded(*names: str) -> int:
        loaders.clear()
        encoder.image_features([zoo[name] for name in names], mode="code", batch_size=2)
        return sum(map(len, loaders))

    assert decoded("RGB", "L", "P") == 3
    assert decoded("RGB") == 0  # now the most recently used
    assert decoded("wide") == 1 and len(encoder._image_cache) == 3  # L, the least recently used, is dropped
    assert decoded("RGB", "P", "wide") == 0
    assert decoded("L") == 1


def test_clear_caches_forgets_images_and_texts(own_encoder, loaders):
    image = [image_zoo()["RGB"]]
    own_encoder.image_features(image, mode="code", batch_size=2)
    own_encoder.text_features(["a dog"], mode="code", batch_size=2)
    assert len(own_encoder._image_cache) == len(own_encoder._text_cache) == 1
    own_encoder.clear_caches()
    assert len(own_encoder._image_cache) == len(own_encoder._text_cache) == 0
    own_encoder.image_features(image, mode="code", batch_size=2)
    assert len(loaders) == 2


def test_remembered_texts_are_neither_tokenized_nor_encoded_again(own_encoder, monkeypatch):
    tokenized, encoded = [], []
    token_ids, encode_ids = own_encoder.token_ids, own_encoder._encode_ids
    monkeypatch.setattr(own_encoder, "token_ids", lambda texts, mode: tokenized.append((list(texts), mode)) or token_ids(texts, mode))
    monkeypatch.setattr(own_encoder, "_encode_ids", lambda ids: encoded.append(len(ids)) or encode_ids(ids))
    first = own_encoder.text_features(CAPTIONS[:3], mode="code", batch_size=2)
    assert tokenized == [(CAPTIONS[:3], "code")] and encoded == [2, 1]
    again = own_encoder.text_features([CAPTIONS[2], "a new caption", CAPTIONS[0], "a new caption"], mode="code", batch_size=2)
    assert tokenized[1:] == [(["a new caption"], "code")] and encoded[2:] == [1]  # only the new text, once
    assert (again[0] == first[2]).all() and (again[2] == first[0]).all() and (again[1] == again[3]).all()
    own_encoder.text_features(CAPTIONS[:1], mode="hf", batch_size=2)  # the other mode's tokenizer: another key
    assert tokenized[2:] == [(CAPTIONS[:1], "hf")]


def test_mode_and_rgb_first_are_remembered_apart(own_encoder, loaders):
    image = [image_zoo()["RGBA"]]
    variants = [("code", False), ("code", True), ("hf", False), ("hf", True)]
    rows = [own_encoder.image_features(image, mode=mode, batch_size=1, rgb_first=rgb_first) for mode, rgb_first in variants]
    assert len(loaders) == 4
    assert np.abs(rows[0] - rows[1]).max() > 1e-4 and np.abs(rows[0] - rows[2]).max() > 1e-4
    again = [own_encoder.image_features(image, mode=mode, batch_size=1, rgb_first=rgb_first) for mode, rgb_first in variants]
    assert len(loaders) == 4 and all((a == b).all() for a, b in zip(rows, again))


@pytest.mark.parametrize("workers", [0, 2])
def test_an_undecodable_image_is_never_remembered(own_encoder, loaders, workers):
    images = [image_zoo()["RGB"], b"not an image"]
    for _ in range(2):
        with pytest.raises(ImageLoadError, match=r"^images\[1\]: could not decode a bytes as an image \(") as raised:
            own_encoder.image_features(images, mode="code", batch_size=1, num_workers=workers)
        assert "\n" not in str(raised.value)
    # The good image's batch was encoded before the bad one's and is remembered; the bad one is read again.
    assert loaders == [["images[0]", "images[1]"], ["images[1]"]]
    assert len(own_encoder._image_cache) == 1
