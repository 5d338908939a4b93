"""The CLIP family's image-feature cache is keyed by everything that decides an image's pixels: two palette images
with the same indices and other palettes (or transparency), in-memory images with the same bytes in another mode
or shape, and the same pixels under another EXIF orientation are different images, within one call and across
calls."""

import numpy as np
import pytest
from PIL import Image

from capeval.scoring.clip import ClipScoreScorer
from capeval.vision.images import image_digest, load_image

from fixtures.clip import random_rgb

pytestmark = pytest.mark.models


def palette_images():
    """Two mode-"P" images with the same indices: one through an adaptive palette, one through that palette reversed."""
    first = Image.fromarray(random_rgb(80, 60, 5)).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    second = first.copy()
    palette = first.getpalette()
    second.putpalette([value for entry in reversed(range(256)) for value in palette[3 * entry: 3 * entry + 3]])
    assert first.tobytes() == second.tobytes() and first.getpalette() != second.getpalette()
    return first, second


def transparent_copy(image: Image.Image) -> Image.Image:
    copy = image.copy()
    copy.info["transparency"] = 3
    return copy


def fresh(scorer: ClipScoreScorer, image) -> float:
    """The image's score from an empty image cache."""
    scorer.encoder().clear_caches()
    return scorer.score(["a red car"], images=[image])["clip_s"][0]


@pytest.mark.parametrize("mode", ["code", "hf"])
def test_palette_images_with_the_same_indices_score_apart_in_one_call_and_across_calls(spread_clip, mode):
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu", mode=mode)
    first, second = palette_images()
    expected = [fresh(scorer, first), fresh(scorer, second)]
    assert abs(expected[0] - expected[1]) > 1e-3
    scorer.encoder().clear_caches()
    together = scorer.score(["a red car"] * 2, images=[first, second])["clip_s"]
    np.testing.assert_allclose(together, expected, atol=1e-6)
    scorer.encoder().clear_caches()
    one_then_other = [scorer.score(["a red car"], images=[image])["clip_s"][0] for image in (first, second)]
    np.testing.assert_allclose(one_then_other, expected, atol=1e-6)


def test_transparency_changes_the_key_and_the_hf_pixels(spread_clip):
    """transformers' processor composites a transparent index onto white; the released preprocessing's RGB
    conversion ignores it (the same pixels, rightly the same score)."""
    first, _ = palette_images()
    transparent = transparent_copy(first)
    assert image_digest(first) != image_digest(transparent)
    hf = ClipScoreScorer(model_name=spread_clip, device="cpu", mode="hf")
    expected = [fresh(hf, first), fresh(hf, transparent)]
    assert abs(expected[0] - expected[1]) > 1e-4
    hf.encoder().clear_caches()
    np.testing.assert_allclose(hf.score(["a red car"] * 2, images=[first, transparent])["clip_s"], expected, atol=1e-6)
    hf.encoder().clear_caches()
    np.testing.assert_allclose([hf.score(["a red car"], images=[image])["clip_s"][0] for image in (first, transparent)],
                               expected, atol=1e-6)
    code = ClipScoreScorer(model_name=spread_clip, device="cpu")
    assert fresh(code, first) == pytest.approx(fresh(code, transparent), abs=1e-6)


def test_the_same_bytes_in_another_mode_or_shape_are_another_image(spread_clip):
    data = random_rgb(12, 1, 9).tobytes()  # 36 bytes
    images = [Image.frombytes("L", (4, 9), data), Image.frombytes("L", (9, 4), data), Image.frombytes("RGB", (3, 4), data),
              Image.frombytes("RGB", (4, 3), data)]
    assert len({image_digest(image) for image in images}) == 4
    scorer = ClipScoreScorer(model_name=spread_clip, device="cpu")
    expected = [fresh(scorer, image) for image in images]
    assert len({round(value, 5) for value in expected}) == 4
    scorer.encoder().clear_caches()
    np.testing.assert_allclose(scorer.score(["a red car"] * 4, images=images)["clip_s"], expected, atol=1e-6)


def test_the_exif_orientation_of_an_in_memory_image_is_part_of_its_key():
    """load_image (the region-feature extractors) applies the orientation, so the same pixels rotated are another image."""
    upright = Image.fromarray(random_rgb(30, 20, 4))
    rotated = upright.copy()
    rotated.getexif()[0x0112] = 6
    assert upright.tobytes() == rotated.tobytes()
    assert load_image(upright).size != load_image(rotated).size
    assert image_digest(upright) != image_digest(rotated)


def test_digests_of_in_memory_images_cover_what_decides_their_pixels():
    first, second = palette_images()
    digests = {image_digest(image) for image in (first, second, transparent_copy(first), first.convert("PA"))}
    assert len(digests) == 4
    assert image_digest(first) == image_digest(first.copy())
    opaque = transparent_copy(first)
    opaque.info["transparency"] = 4
    assert image_digest(opaque) != image_digest(transparent_copy(first))
