"""Region features of one image, the location encodings each backbone wants, and loaders.

A :class:`RegionFeatures` holds N region vectors (2048-d for every detector the metrics
were trained with), their boxes as the 6-d normalised ``norm_bb``
``[x1/W, y1/H, x2/W, y2/H, w/W, h/H]`` of the BUTD extractor, optionally the boxes in
pixels with the image size (the ViLBERT extractor's format) and the per-box detector
confidence. Values are float32; fp16 files are cast exactly, so the fp16 quantisation
of the released features is kept (UMIC's pipeline depends on it); fp16 features stay fp16
in memory (half the size) and are cast exactly when a model consumes them.

Location encodings, as each model's released code computes them:

* UNITER / UMIC: 7-d ``norm_bb + [w·h]`` (:meth:`RegionFeatures.uniter_pos7`);
* ViLBERT: 5-d ``[x1/W, y1/H, x2/W, y2/H, area/(W·H)]`` (:meth:`RegionFeatures.vilbert_loc5`), with
  the mean-feature global region in front (:meth:`RegionFeatures.vilbert_inputs`);
* Visual-T5: the 6-d ``norm_bb`` appended to the feature (:meth:`RegionFeatures.visual_t5_input`).

Loaders accept BUTD ``.npz`` files (``features``, ``norm_bb``, ``conf``), ViLBERT-style
dicts or ``.npy`` files (``features``, ``bbox``, ``image_width``, ``image_height``), a
folder of per-image files, and Parquet/Arrow tables with one column per field (nested or
flat lists, as a ``datasets`` ``Sequence(float32)`` column gives).
"""

from __future__ import annotations

import pickle
import warnings
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

_WIDTH_KEYS = ("image_width", "image_w", "img_w")
_HEIGHT_KEYS = ("image_height", "image_h", "img_h")
_BOX_KEYS = ("bbox", "boxes")


class RegionFeatureError(ValueError):
    """Region features with a wrong shape, a non-finite value or missing fields."""


class RegionFeatureWarning(UserWarning):
    """Region features that are scored but look wrong (pixel boxes outside the image or inverted)."""


def _float_array(value: Any, field: str, *, keep_half: bool = False) -> np.ndarray:
    """float32 (or float16 kept as is with ``keep_half``: half the memory, cast exactly later)."""
    try:
        array = np.asarray(value)
        if not (keep_half and array.dtype == np.float16):
            array = array.astype(np.float32)
    except (TypeError, ValueError) as error:
        raise RegionFeatureError(f"{field} is not numeric ({error})") from error
    if not np.isfinite(array).all():
        raise RegionFeatureError(f"{field} contains NaN or infinite values")
    return array


@dataclass(frozen=True, eq=False)
class RegionFeatures:
    """The regions of one image. Build it with :meth:`from_butd` or :meth:`from_pixel_boxes`.

    >>> import numpy as np
    >>> regions = RegionFeatures.from_butd(np.ones((2, 2048)), [[0.1, 0.2, 0.5, 0.6, 0.4, 0.4]] * 2, conf=[0.9, 0.1])
    >>> regions.num_boxes, regions.uniter_pos7()[0].astype(float).round(4).tolist()
    (2, [0.1, 0.2, 0.5, 0.6, 0.4, 0.4, 0.16])
    >>> RegionFeatures.from_butd(np.full((2, 2048), np.nan), np.zeros((2, 6)))
    Traceback (most recent call last):
    ...
    capeval.vision.regions.RegionFeatureError: features contains NaN or infinite values
    """

    features: np.ndarray
    norm_bb: np.ndarray
    conf: np.ndarray | None = None
    boxes: np.ndarray | None = None
    image_size: tuple[int, int] | None = None
    #: What produced the features (recorded in metric hashcodes), e.g. "butd" or an extractor's name.
    kind: str = "butd"

    def __post_init__(self) -> None:
        features = _float_array(self.features, "features", keep_half=True)
        if features.ndim != 2 or features.shape[0] == 0:
            raise RegionFeatureError(f"features must be a non-empty N×D array, got shape {features.shape}")
        n = features.shape[0]
        norm_bb = _float_array(self.norm_bb, "norm_bb")
        if norm_bb.shape != (n, 6):
            raise RegionFeatureError(f"norm_bb must be {n}×6 to match {n} feature rows, got shape {norm_bb.shape}")
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "norm_bb", norm_bb)
        if self.conf is not None:
            conf = _float_array(self.conf, "conf")
            if conf.shape not in ((n,), (n, 1)):
                raise RegionFeatureError(f"conf must hold {n} values (N or N×1), got shape {conf.shape}")
            object.__setattr__(self, "conf", conf.reshape(n))
        if self.boxes is not None:
            boxes = _float_array(self.boxes, "boxes")
            if boxes.shape != (n, 4):
                raise RegionFeatureError(f"boxes must be {n}×4 (x1, y1, x2, y2 in pixels), got shape {boxes.shape}")
            object.__setattr__(self, "boxes", boxes)
            if self.image_size is None:
                raise RegionFeatureError("pixel boxes need the image size (width, height)")
        if self.image_size is not None:
            width, height = (int(v) for v in self.image_size)
            if width <= 0 or height <= 0:
                raise RegionFeatureError(f"image size must be positive, got {self.image_size}")
            object.__setattr__(self, "image_size", (width, height))

    @classmethod
    def from_butd(cls, features: Any, norm_bb: Any, conf: Any = None, *, kind: str = "butd") -> "RegionFeatures":
        """BUTD/UNITER-style features: ``norm_bb`` as stored (the 6-d normalised box)."""
        return cls(features=features, norm_bb=norm_bb, conf=conf, kind=kind)

    @classmethod
    def from_pixel_boxes(cls, features: Any, boxes: Any, image_width: int, image_height: int, conf: Any = None,
                         *, kind: str = "vilbert", name: str = "region features") -> "RegionFeatures":
        """ViLBERT-style features: ``boxes`` as x1, y1, x2, y2 in pixels of a W×H image. Boxes outside the
        image or inverted are scored as given, with one warning naming the item (``name``).

        >>> regions = RegionFeatures.from_pixel_boxes(np.ones((1, 2048)), [[0, 0, 50, 100]], 100, 200)
        >>> regions.vilbert_loc5().tolist(), regions.norm_bb.tolist()
        ([[0.0, 0.0, 0.5, 0.5, 0.25]], [[0.0, 0.0, 0.5, 0.5, 0.5, 0.5]])
        >>> RegionFeatures.from_pixel_boxes(np.ones((1, 2048)), [[0, 0, 50, 100]], 0, 200)
        Traceback (most recent call last):
        ...
        capeval.vision.regions.RegionFeatureError: image_width must be a positive whole number of pixels, got 0
        """
        image_width, image_height = _image_side(image_width, "image_width"), _image_side(image_height, "image_height")
        pixels = _float_array(boxes, "boxes")
        if pixels.ndim != 2 or pixels.shape[1:] != (4,):
            raise RegionFeatureError(f"boxes must be N×4 (x1, y1, x2, y2 in pixels), got shape {pixels.shape}")
        rows = np.shape(features)[0] if np.ndim(features) else 0
        if pixels.shape[0] != rows:
            raise RegionFeatureError(f"boxes must be {rows}×4 to match {rows} feature rows, got shape {pixels.shape}")
        width, height = float(image_width), float(image_height)
        _warn_odd_boxes(pixels, width, height, name)
        norm_bb = np.concatenate(
            [pixels / np.array([width, height, width, height], dtype=np.float32),
             (pixels[:, 2:3] - pixels[:, 0:1]) / np.float32(width),
             (pixels[:, 3:4] - pixels[:, 1:2]) / np.float32(height)], axis=1)
        return cls(features=features, norm_bb=norm_bb, conf=conf, boxes=pixels, image_size=(image_width, image_height), kind=kind)

    @property
    def num_boxes(self) -> int:
        return int(self.features.shape[0])

    @property
    def feature_dim(self) -> int:
        return int(self.features.shape[1])

    def first(self, n: int) -> "RegionFeatures":
        """The first ``n`` regions (the stored order is the detector's confidence order)."""
        take = slice(0, n)
        return replace(self, features=self.features[take], norm_bb=self.norm_bb[take],
                       conf=None if self.conf is None else self.conf[take],
                       boxes=None if self.boxes is None else self.boxes[take])

    def uniter_pos7(self) -> np.ndarray:
        """UNITER's position feature: ``norm_bb`` followed by w·h (float32 from the stored values)."""
        return np.concatenate([self.norm_bb, self.norm_bb[:, 4:5] * self.norm_bb[:, 5:6]], axis=1)

    def vilbert_loc5(self) -> np.ndarray:
        """ViLBERT's location: ``[x1/W, y1/H, x2/W, y2/H, area/(W·H)]``, the area taken in pixels
        when pixel boxes are known (else from the normalised w·h)."""
        if self.boxes is None:
            return np.concatenate([self.norm_bb[:, :4], self.norm_bb[:, 4:5] * self.norm_bb[:, 5:6]], axis=1)
        width, height = (np.float32(v) for v in self.image_size)  # type: ignore[misc, union-attr]
        x1, y1, x2, y2 = self.boxes.T
        area = (x2 - x1) * (y2 - y1) / (width * height)
        return np.stack([x1 / width, y1 / height, x2 / width, y2 / height, area], axis=1).astype(np.float32)

    def vilbert_inputs(self, *, mean_in_stored_dtype: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """ViLBERT's image input: a global region (the mean feature, location ``[0, 0, 1, 1, 1]``) then
        every region, as (N+1) × D features and (N+1) × 5 locations (float32).

        ``mean_in_stored_dtype``: round the mean of fp16 features to fp16 as the released ViLBERTScore data code
        does (it averages before casting to float32); float32 features are unaffected. Where the released fp16
        sum would overflow to infinity (valid features: 100 boxes of 60,000), the mean is taken in float32 and
        then rounded to fp16 (the mean of fp16 values always fits fp16).

        >>> regions = RegionFeatures.from_pixel_boxes([[1.0, 2.0], [3.0, 4.0]], [[0, 0, 50, 100], [0, 0, 100, 200]], 100, 200)
        >>> features, locations = regions.vilbert_inputs()
        >>> features.tolist(), locations.tolist()
        ([[2.0, 3.0], [1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5, 0.25], [0.0, 0.0, 1.0, 1.0, 1.0]])
        """
        features = self.features.astype(np.float32)
        summed = features.sum(axis=0, keepdims=True)
        glob = summed / np.float32(self.num_boxes)
        if mean_in_stored_dtype and self.features.dtype == np.float16:
            # torch's fp16 sum accumulates in float32 and rounds once; the division rounds again.
            fits = np.abs(summed) <= np.finfo(np.float16).max
            released = np.where(fits, summed, 0).astype(np.float16).astype(np.float32) / np.float32(self.num_boxes)
            glob = np.where(fits, released, glob).astype(np.float16).astype(np.float32)
        locations = np.concatenate([np.array([[0, 0, 1, 1, 1]], dtype=np.float32), self.vilbert_loc5()], axis=0)
        return np.concatenate([glob, features], axis=0), locations

    def visual_t5_input(self) -> np.ndarray:
        """Visual-T5's per-region input: the feature followed by the 6-d ``norm_bb`` (N × (D+6))."""
        return np.concatenate([self.features.astype(np.float32), self.norm_bb], axis=1)


def _image_side(value: Any, field: str) -> int:
    """An image width or height in pixels: a positive whole number (a NumPy scalar or 0-d array too)."""
    try:
        side = float(np.asarray(value))
    except (TypeError, ValueError):
        side = float("nan")
    if not (side > 0 and side == int(side)):
        raise RegionFeatureError(f"{field} must be a positive whole number of pixels, got {value!r}")
    return int(side)


def _warn_odd_boxes(pixels: np.ndarray, width: float, height: float, name: str) -> None:
    """One warning for the pixel boxes that lie outside the image or are inverted (x2 < x1 or y2 < y1)."""
    x1, y1, x2, y2 = pixels.T
    odd = (x1 < 0) | (y1 < 0) | (x2 > width) | (y2 > height) | (x2 < x1) | (y2 < y1)
    if odd.any():
        warnings.warn(f"{name}: {int(odd.sum())} of {len(pixels)} pixel boxes lie outside the {width:g} × {height:g} image "
                      f"or are inverted (the first: box {int(np.argmax(odd))}, {pixels[np.argmax(odd)].tolist()}); "
                      "they are scored as given", RegionFeatureWarning, stacklevel=3)


def _first_key(mapping: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    return next((key for key in keys if key in mapping), None)


def _flat_to_rows(array: np.ndarray, field: str, *, width: int | None = None, rows: int | None = None) -> np.ndarray:
    """A flat list column (``datasets`` ``Sequence(float32)``) as a matrix with ``width`` columns or ``rows`` rows."""
    if array.ndim != 1:
        return array
    divisor = width or rows
    if not divisor or array.size % divisor:
        raise RegionFeatureError(f"{field} is a flat list of {array.size} values, which does not split into "
                                 + (f"rows of {width}" if width else f"{rows} rows"))
    return array.reshape(-1, width) if width else array.reshape(divisor, -1)


def _from_mapping(fields: Mapping[str, Any], kind: str | None, name: str) -> RegionFeatures:
    if "features" not in fields:
        raise RegionFeatureError(f"no 'features' field (found {sorted(fields)})")
    features = np.asarray(fields["features"])
    conf = fields.get("conf")
    box_key = _first_key(fields, _BOX_KEYS)
    if "norm_bb" in fields:
        norm_bb = _flat_to_rows(np.asarray(fields["norm_bb"]), "norm_bb", width=6)
        features = _flat_to_rows(features, "features", rows=len(norm_bb))
        return RegionFeatures.from_butd(features, norm_bb, conf, kind=kind or "butd")
    width_key, height_key = _first_key(fields, _WIDTH_KEYS), _first_key(fields, _HEIGHT_KEYS)
    if box_key and width_key and height_key:
        boxes = _flat_to_rows(np.asarray(fields[box_key]), box_key, width=4)
        features = _flat_to_rows(features, "features", rows=len(boxes))
        return RegionFeatures.from_pixel_boxes(features, boxes, fields[width_key], fields[height_key], conf,
                                               kind=kind or "vilbert", name=name)
    raise RegionFeatureError(
        "need 'norm_bb' (BUTD/UNITER format) or 'bbox' plus 'image_width'/'image_height' (ViLBERT format) "
        f"next to 'features'; found {sorted(fields)}")


def _load_file(path: Path, allow_pickle: bool) -> Mapping[str, Any]:
    if not path.is_file():
        raise RegionFeatureError(f"the feature file {str(path)!r} does not exist")
    try:
        if path.suffix == ".npz":
            if not zipfile.is_zipfile(path):  # else numpy reads it as a pickle and blames allow_pickle
                raise RegionFeatureError(f"{str(path)!r} is not an .npz archive (not a zip file): a corrupt or truncated file?")
            with np.load(path, allow_pickle=False) as archive:
                return {key: archive[key] for key in archive.files}
        if path.suffix == ".npy":
            array = np.load(path, allow_pickle=allow_pickle)
            if array.dtype == object and array.shape == ():
                return array.item()
            raise RegionFeatureError(f"{str(path)!r} holds a bare {array.shape} array; region features need boxes too (a dict or .npz)")
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise RegionFeatureError(
                f"{str(path)!r} holds a pickled dict (the ViLBERT extractor's np.save format), which is not loaded by "
                "default; if you trust the file, read it with capeval.vision.regions.as_region_features(path, "
                "allow_pickle=True) and pass the result as its region_features") from error
        raise RegionFeatureError(f"cannot read {str(path)!r} ({error})") from error
    except (OSError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as error:
        raise RegionFeatureError(f"cannot read {str(path)!r} ({type(error).__name__}: {error})") from error
    raise RegionFeatureError(f"{str(path)!r}: region feature files must be .npz or .npy")


def as_region_features(item: Any, *, name: str = "region_features", kind: str | None = None,
                       allow_pickle: bool = False) -> RegionFeatures:
    """One image's region features from a :class:`RegionFeatures`, a dict of arrays (or nested
    lists, as a ``datasets`` row gives) or an ``.npz``/``.npy`` path. Errors name the item.

    ``allow_pickle`` is needed for ViLBERT's ``.npy`` files (a pickled dict); only use it on trusted files.
    """
    if isinstance(item, RegionFeatures):
        return item
    try:
        if isinstance(item, (str, Path)):
            return _from_mapping(_load_file(Path(item).expanduser(), allow_pickle), kind, name)
        if isinstance(item, Mapping):
            return _from_mapping(item, kind, name)
    except RegionFeatureError as error:
        raise RegionFeatureError(f"{name}: {error}") from error
    raise RegionFeatureError(
        f"{name}: unsupported region-feature input of type {type(item).__name__}; pass a RegionFeatures, "
        "a dict of arrays or a path to an .npz/.npy file")


def as_region_feature_list(items: Any, *, name: str = "region_features", kind: str | None = None,
                           allow_pickle: bool = False) -> list[RegionFeatures]:
    """:func:`as_region_features` over one entry per caption; errors name ``region_features[i]``."""
    if items is None or isinstance(items, (str, Path, Mapping, RegionFeatures)):
        raise RegionFeatureError(f"{name} must be a list with one entry per caption, got {type(items).__name__}")
    return [as_region_features(item, name=f"{name}[{i}]", kind=kind, allow_pickle=allow_pickle) for i, item in enumerate(items)]


def load_feature_folder(folder: str | Path, image_ids: Sequence[str], *, suffix: str = ".npz",
                        kind: str | None = None, allow_pickle: bool = False) -> list[RegionFeatures]:
    """Per-image files ``<folder>/<image id><suffix>`` (e.g. ``coco_val2014_000000060623.npz``), in ``image_ids`` order."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise RegionFeatureError(f"the feature folder {str(folder)!r} does not exist")
    return [as_region_features(folder / f"{image_id}{suffix}", name=f"image {image_id!r}", kind=kind, allow_pickle=allow_pickle)
            for image_id in image_ids]


def _cell(column: Any, row: int) -> Any:
    """One cell of an Arrow column as numpy (lists of lists are flattened; shapes come from the box count)."""
    import pyarrow as pa

    scalar = column[row]
    if not scalar.is_valid:
        return None
    if isinstance(scalar, (pa.ListScalar, pa.LargeListScalar, pa.FixedSizeListScalar)):
        values = scalar.values
        while pa.types.is_list(values.type) or pa.types.is_large_list(values.type) or pa.types.is_fixed_size_list(values.type):
            values = values.flatten()
        return values.to_numpy(zero_copy_only=False)
    return scalar.as_py()


def load_feature_table(source: Any, *, columns: Mapping[str, str] | None = None, kind: str | None = None) -> list[RegionFeatures]:
    """One :class:`RegionFeatures` per row of a Parquet file, a ``pyarrow.Table`` or a ``datasets.Dataset``.

    Columns are named like the dict fields (``features``, ``norm_bb``, ``conf``, or ``bbox``,
    ``image_width``, ``image_height``); ``columns`` maps field → column name where they differ.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(source, (str, Path)):
        table = pq.read_table(Path(source).expanduser())
    elif isinstance(source, pa.Table):
        table = source
    elif hasattr(source, "data") and hasattr(source.data, "table"):  # datasets.Dataset
        table = source.data.table
    else:
        raise RegionFeatureError(f"unsupported feature table of type {type(source).__name__}; pass a Parquet path, a pyarrow.Table or a datasets.Dataset")
    names = dict(columns or {})
    fields = [f for f in ("features", "norm_bb", "conf", *_BOX_KEYS, *_WIDTH_KEYS, *_HEIGHT_KEYS) if names.get(f, f) in table.column_names]
    arrays = {field: table.column(names.get(field, field)) for field in fields}
    rows = []
    for row in range(table.num_rows):
        cells = {field: _cell(column, row) for field, column in arrays.items()}
        rows.append(as_region_features({k: v for k, v in cells.items() if v is not None}, name=f"row {row}", kind=kind))
    return rows


def require_one_per_caption(regions: Sequence[RegionFeatures], count: int, *, captions: str = "predictions") -> None:
    """``ValueError`` unless there are ``count`` region features, one per caption (named ``captions`` in the message).

    >>> require_one_per_caption([], 2)
    Traceback (most recent call last):
    ValueError: got 2 predictions but 0 region features; they must match
    """
    if len(regions) != count:
        raise ValueError(f"got {count} {captions} but {len(regions)} region features; they must match")


def feature_paths(image_files, features_dir: str | Path) -> list[str]:
    """The region-feature file of each image: ``features_dir/<image stem>.npz`` (or ``.npy``, or the full file
    name plus ``.npz``); ``FileNotFoundError`` naming the missing ones.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()); (folder / "1000268201_693b08cb0e.npz").touch()
    >>> [Path(p).name for p in feature_paths(["1000268201_693b08cb0e.jpg"], folder)]
    ['1000268201_693b08cb0e.npz']
    """
    folder = Path(features_dir)

    def find(image_file: str) -> Path | None:
        stem = Path(image_file).stem
        candidates = (folder / f"{stem}.npz", folder / f"{stem}.npy", folder / f"{image_file}.npz")
        return next((path for path in candidates if path.is_file()), None)

    found = {f: find(f) for f in dict.fromkeys(image_files)}
    missing = sorted(f for f, path in found.items() if path is None)
    if missing:
        raise FileNotFoundError(f"{len(missing)} image(s) have no features in {folder} (<stem>.npz or .npy), e.g. {missing[:3]}")
    return [str(found[f]) for f in image_files]
