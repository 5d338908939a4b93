"""Image inputs: every accepted form, colour modes, huge and corrupt images."""

import io

import numpy as np
import pytest
from PIL import Image

from capeval.vision.images import ImageLoadError, image_digest, load_image, load_images


def encoded(image: Image.Image, fmt: str = "PNG", **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def test_every_input_form_gives_the_same_rgb_pixels(sample_image):
    reference = load_image(sample_image)
    assert reference.mode == "RGB" and reference.size == (500, 375) and reference.info["original_size"] == (500, 375)
    data = sample_image.read_bytes()
    forms = [str(sample_image), data, {"bytes": data, "path": None}, {"bytes": None, "path": str(sample_image)},
             Image.open(sample_image), np.asarray(reference)]
    for form in forms:
        assert np.array_equal(np.asarray(load_image(form)), np.asarray(reference)), type(form)


def test_datasets_image_values_decoded_and_undecoded(sample_image):
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict({"image": [str(sample_image)]}).cast_column("image", datasets.Image())
    decoded = table[0]["image"]
    undecoded = table.cast_column("image", datasets.Image(decode=False))[0]["image"]
    assert isinstance(decoded, Image.Image) and set(undecoded) == {"bytes", "path"}
    assert np.array_equal(np.asarray(load_image(decoded)), np.asarray(load_image(undecoded)))


@pytest.mark.parametrize("mode", ["L", "1", "P", "CMYK", "I;16", "I", "F", "YCbCr", "LA"])
def test_colour_modes_become_rgb(mode):
    image = load_image(Image.new("RGB", (8, 6), (200, 100, 50)).convert(mode) if mode not in ("I;16", "I", "F") else Image.new(mode, (8, 6), 128))
    assert image.mode == "RGB" and image.size == (8, 6)


def test_transparency_is_composited_over_white():
    rgba = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    assert np.asarray(load_image(rgba))[0, 0].tolist() == [255, 255, 255]
    palette = Image.new("P", (4, 4), 0)
    palette.info["transparency"] = 0
    assert np.asarray(load_image(encoded(palette)))[0, 0].tolist() == [255, 255, 255]


def test_sixteen_bit_grayscale_keeps_contrast():
    gradient = Image.fromarray(np.array([[0, 32768, 65535]], dtype=np.uint16))
    assert np.asarray(load_image(gradient))[0, :, 0].tolist() == [0, 128, 255]


def test_exif_orientation_is_applied():
    image = Image.new("RGB", (40, 20), "red")
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90° on display
    loaded = load_image(encoded(image, "JPEG", exif=exif))
    assert loaded.size == (20, 40) and loaded.info["original_size"] == (20, 40)


def test_huge_jpeg_is_decoded_at_reduced_scale():
    data = encoded(Image.new("RGB", (8000, 6000), "blue"), "JPEG", quality=50)
    image = load_image(data, max_side=1000)
    assert max(image.size) == 1000 and image.info["original_size"] == (8000, 6000)


def test_decompression_bombs_are_refused(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.raises(ImageLoadError, match=r"images\[2\]: .*too large"):
        load_image(encoded(Image.new("RGB", (30, 30))), name="images[2]")


def test_a_truncated_file_is_an_error_where_another_library_allows_truncated_images(sample_image, tmp_path, monkeypatch):
    from PIL import ImageFile

    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(sample_image.read_bytes()[:2000])
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)  # as lmms-eval's task module sets it on import
    for item in (str(truncated), truncated.read_bytes()):
        with pytest.raises(ImageLoadError, match=r"images\[1\]: could not decode"):
            load_images([str(sample_image), item])
    assert ImageFile.LOAD_TRUNCATED_IMAGES is True  # the other library's setting is left as it was
    opened = Image.open(truncated)  # a PIL image the caller opened: decoded under the caller's setting
    assert load_image(opened).size == Image.open(sample_image).size


def test_corrupt_missing_and_unsupported_inputs_name_the_item(sample_image, tmp_path):
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(sample_image.read_bytes()[:2000])
    with pytest.raises(ImageLoadError, match=r"images\[1\]: could not decode the file '.*truncated.jpg'"):
        load_images([str(sample_image), str(truncated)])
    with pytest.raises(ImageLoadError, match=r"images\[0\]: the file '.*nope.png' does not exist"):
        load_images([tmp_path / "nope.png"])
    with pytest.raises(ImageLoadError, match="unsupported image input of type int"):
        load_image(3)
    with pytest.raises(ImageLoadError, match="needs 'bytes' or 'path'"):
        load_image({"bytes": None, "path": None})
    with pytest.raises(ImageLoadError, match="uint8"):
        load_image(np.zeros((4, 4, 2), dtype=np.uint8))
    with pytest.raises(ImageLoadError, match="one image per caption"):
        load_images(str(sample_image))


def test_digest_follows_content_not_form(sample_image, tmp_path):
    copy = tmp_path / "copy.jpg"
    copy.write_bytes(sample_image.read_bytes())
    digests = {image_digest(sample_image), image_digest(str(copy)), image_digest(sample_image.read_bytes()), image_digest({"bytes": None, "path": str(copy)})}
    assert len(digests) == 1
    pixels = load_image(sample_image)
    assert image_digest(pixels) == image_digest(pixels.copy()) != image_digest(Image.new("RGB", pixels.size))
    with pytest.raises(ImageLoadError, match="cannot read"):
        image_digest(tmp_path / "missing.jpg")
