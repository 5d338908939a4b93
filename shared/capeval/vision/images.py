"""Any image input → an RGB PIL image, with errors that name the offending item.

Accepted inputs: a file path (``str`` or ``Path``), encoded ``bytes``, a PIL image, a
``{"bytes": ..., "path": ...}`` dict (what a ``datasets.Image(decode=False)`` column
holds; a decoded ``datasets.Image`` value is a PIL image) and an ``H×W[×C]`` uint8 array.

* Grayscale, palette, CMYK and 16-bit images become RGB; transparent images are
  composited over white (dropping alpha would expose arbitrary colours under it).
* The EXIF orientation is applied, as OpenCV's ``imread`` (used by the original
  feature extractors) does.
* Huge images never get decoded at full size when avoidable: JPEGs are decoded at a
  reduced scale (``draft``) and everything is downscaled to ``max_side``. Images above
  PIL's decompression-bomb limit are refused with a clear error. The size before
  downscaling is kept in ``image.info["original_size"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from PIL import Image, ImageFile, ImageOps

#: Longest side an image is decoded at by default. Larger than any detector's input
#: (BUTD resizes to at most 1000, ViLBERT's detector to 1333), so normal images are untouched.
DEFAULT_MAX_SIDE = 4096

_TRANSPOSED_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that swap width and height


class ImageLoadError(ValueError):
    """An image input could not be read or decoded; the message names the item."""


def _describe(item: Any) -> str:
    if isinstance(item, (str, Path)):
        return f"the file {str(item)!r}"
    if isinstance(item, dict) and item.get("path"):
        return f"the image {item['path']!r}"
    return f"a {type(item).__name__}"


def _open(item: Any, name: str) -> Image.Image:
    """Open (header only, no pixel decoding yet) whatever ``item`` is."""
    if isinstance(item, Image.Image):
        return item
    if isinstance(item, np.ndarray):
        if item.dtype != np.uint8 or item.ndim not in (2, 3) or (item.ndim == 3 and item.shape[2] not in (1, 3, 4)):
            raise ImageLoadError(f"{name}: an image array must be uint8 of shape H×W, H×W×1, H×W×3 or H×W×4, got {item.dtype} {item.shape}")
        return Image.fromarray(item[:, :, 0] if item.ndim == 3 and item.shape[2] == 1 else item)
    if isinstance(item, dict):
        if item.get("bytes") is not None:
            return _open(bytes(item["bytes"]), name)
        if item.get("path"):
            return _open(item["path"], name)
        raise ImageLoadError(f"{name}: an image dict needs 'bytes' or 'path' (as datasets.Image(decode=False) gives), got keys {sorted(item)}")
    if isinstance(item, (bytes, bytearray, memoryview)):
        return Image.open(io.BytesIO(bytes(item)))
    if isinstance(item, (str, Path)):
        path = Path(item).expanduser()
        if not path.is_file():
            raise ImageLoadError(f"{name}: {_describe(item)} does not exist or is not a file")
        return Image.open(path)
    raise ImageLoadError(
        f"{name}: unsupported image input of type {type(item).__name__}; pass a file path, bytes, a PIL image, "
        "a {'bytes', 'path'} dict (datasets.Image) or a uint8 array"
    )


def _open_nonempty(item: Any, name: str) -> Image.Image:
    """:func:`_open`, refusing an image without pixels (a 0×N image would divide by zero in every resize)."""
    image = _open(item, name)
    if 0 in image.size:
        raise ImageLoadError(f"{name}: {_describe(item)} is empty ({image.size[0]}×{image.size[1]} pixels)")
    return image


_STRICT_DECODING = threading.Lock()


@contextlib.contextmanager
def _strict_decoding(item: Any) -> Iterator[None]:
    """A file or bytes capeval decodes itself is decoded whole, even where another library has set Pillow's global
    ``ImageFile.LOAD_TRUNCATED_IMAGES`` (lmms-eval's task module does, on import): a truncated file is an error, never
    an image grey below the cut. A PIL image the caller opened is decoded under the caller's settings."""
    if isinstance(item, Image.Image) or not ImageFile.LOAD_TRUNCATED_IMAGES:
        yield
        return
    with _STRICT_DECODING:
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        try:
            yield
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = True


@contextlib.contextmanager
def _decoding_errors(item: Any, name: str) -> Iterator[None]:
    """Decoding failures as one :class:`ImageLoadError` naming the item (a file or bytes decoded strictly)."""
    try:
        with _strict_decoding(item):
            yield
    except ImageLoadError:
        raise
    except Image.DecompressionBombError as error:
        raise ImageLoadError(f"{name}: {_describe(item)} is too large to decode safely ({error}); downscale it first") from error
    except (OSError, SyntaxError, ValueError, TypeError, Image.UnidentifiedImageError) as error:
        raise ImageLoadError(f"{name}: could not decode {_describe(item)} as an image ({type(error).__name__}: {error})") from error


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if image.mode.startswith("I;16"):
        # 16-bit grayscale: keep the high byte (a plain convert would clip almost everything to white).
        high = (np.asarray(image, dtype=np.uint16) >> 8).astype(np.uint8)
        return Image.fromarray(high).convert("RGB")
    if image.mode in ("I", "F"):
        clipped = np.clip(np.asarray(image, dtype=np.float64), 0, 255).astype(np.uint8)
        return Image.fromarray(clipped).convert("RGB")
    return image.convert("RGB")


def load_image(item: Any, *, name: str = "image", max_side: int | None = DEFAULT_MAX_SIDE) -> Image.Image:
    """Decode ``item`` into an RGB PIL image no larger than ``max_side`` on its longest side.

    >>> from PIL import Image
    >>> image = load_image(Image.new("CMYK", (6000, 30)), max_side=3000)
    >>> image.mode, image.size, image.info["original_size"]
    ('RGB', (3000, 15), (6000, 30))
    >>> load_image(b"not an image", name="images[3]")
    Traceback (most recent call last):
    ...
    capeval.vision.images.ImageLoadError: images[3]: could not decode a bytes as an image (UnidentifiedImageError: ...)
    """
    with _decoding_errors(item, name):
        image = _open_nonempty(item, name)
        width, height = image.size
        orientation = image.getexif().get(0x0112, 1) if hasattr(image, "getexif") else 1
        original_size = (height, width) if orientation in _TRANSPOSED_ORIENTATIONS else (width, height)
        if max_side is not None and max(width, height) > max_side and image is not item and image.format == "JPEG":
            # Decode at 1/2, 1/4 or 1/8 scale straight from the DCT: a huge JPEG never exists at full size.
            image.draft("RGB", (max_side, max_side))
        image = ImageOps.exif_transpose(image)  # always a new image, so the caller's object is never modified
        image = _to_rgb(image)
        if max_side is not None and max(image.size) > max_side:
            image.thumbnail((max_side, max_side), Image.Resampling.BICUBIC)
        image.load()
    image.info["original_size"] = original_size
    return image


def open_image(item: Any, *, name: str = "image") -> Image.Image:
    """``item`` decoded as stored: its own mode and size, no EXIF rotation (what ``PIL.Image.open`` gives the released
    code of metrics whose preprocessing depends on it, such as CLIPScore's resize before the RGB conversion).

    >>> open_image(Image.new("CMYK", (5, 3))).mode
    'CMYK'
    >>> open_image(Image.new("RGB", (0, 0)), name="images[2]")
    Traceback (most recent call last):
    capeval.vision.images.ImageLoadError: images[2]: a Image is empty (0×0 pixels)
    """
    with _decoding_errors(item, name):
        image = _open_nonempty(item, name)
        image.load()
    return image


def load_images(items: Sequence[Any], *, name: str = "images", max_side: int | None = DEFAULT_MAX_SIDE) -> list[Image.Image]:
    """:func:`load_image` over a list; errors name the item as ``images[i]``."""
    if items is None or isinstance(items, (str, bytes, dict, Image.Image)):
        raise ImageLoadError(f"{name} must be a list with one image per caption, got {type(items).__name__}")
    return [load_image(item, name=f"{name}[{i}]", max_side=max_side) for i, item in enumerate(items)]


def _pixel_state(image: Image.Image) -> bytes:
    """What, besides its mode, size and raw bands, decides the pixels a PIL image decodes to: the palette of a
    palette image (its mode and entries), a transparency index, colour or table (``info["transparency"]``, which
    an RGBA conversion reads), and the EXIF orientation (which :func:`load_image` applies).

    >>> _pixel_state(Image.new("RGB", (1, 1)))
    b'palette=None;transparency=None;orientation=None'
    """
    palette = image.getpalette(None) if image.mode in ("P", "PA") else None
    palette_bytes = None if palette is None else (image.palette.mode if image.palette else "", bytes(palette))
    orientation = image.getexif().get(0x0112)
    return f"palette={palette_bytes!r};transparency={image.info.get('transparency')!r};orientation={orientation!r}".encode()


def image_digest(item: Any, *, name: str = "image") -> str:
    """A SHA-256 identifying an image input, for caches.

    Files, bytes and ``{"bytes", "path"}`` dicts are hashed as their encoded bytes (no decoding,
    so a cache hit is cheap); in-memory arrays as their values, dtype and shape; in-memory PIL images as their
    raw bands, mode and size and everything else that decides their decoded pixels (:func:`_pixel_state`).

    >>> indices = Image.new("P", (2, 2))
    >>> recoloured = indices.copy()
    >>> recoloured.putpalette([255, 0, 0] * 256)
    >>> image_digest(indices) != image_digest(recoloured)  # the same indices through another palette
    True
    """
    digest = hashlib.sha256()
    if isinstance(item, dict):
        item = item.get("bytes") if item.get("bytes") is not None else item.get("path")
    if isinstance(item, (bytes, bytearray, memoryview)):
        digest.update(bytes(item))
    elif isinstance(item, (str, Path)):
        path = Path(item).expanduser()
        try:
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as error:
            raise ImageLoadError(f"{name}: cannot read {_describe(item)} ({error})") from error
    elif isinstance(item, Image.Image):
        digest.update(f"{item.mode}{item.size}".encode())
        digest.update(item.tobytes())
        digest.update(_pixel_state(item))
    elif isinstance(item, np.ndarray):
        digest.update(f"{item.dtype}{item.shape}".encode())
        digest.update(np.ascontiguousarray(item).tobytes())
    else:
        raise ImageLoadError(f"{name}: unsupported image input of type {type(item).__name__}")
    return digest.hexdigest()


#: A COCO image's file name: ``COCO_val2014_000000391895.jpg`` (2014) or ``000000391895.jpg`` (2017).
_COCO_FILE = re.compile(r"(?:COCO_[a-z]+\d{4}_)?0*(\d+)\.(?:jpe?g|png)", re.IGNORECASE)


def coco_image_id(name: str) -> int | None:
    """The COCO image id a file name (or a string of digits) carries; None for any other name.

    >>> [coco_image_id(name) for name in ("COCO_val2014_000000391895.jpg", "000000391895.jpg", "17", "cat.jpg")]
    [391895, 391895, 17, None]
    """
    if name.isdigit():
        return int(name)
    match = _COCO_FILE.fullmatch(name)
    return int(match.group(1)) if match else None


def image_paths(image_files, image_dir: str | os.PathLike) -> list[str]:
    """``image_dir/<file>`` for each image file name; ``FileNotFoundError`` naming the missing ones."""
    folder = Path(image_dir)
    missing = sorted({f for f in image_files if not (folder / f).is_file()})
    if missing:
        raise FileNotFoundError(f"{len(missing)} image(s) missing from {folder}, e.g. {missing[:3]}")
    return [str(folder / f) for f in image_files]
