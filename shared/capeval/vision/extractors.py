"""Region features from images: the extractor interface, an on-disk cache and two optional backends.

The metrics were trained on features from detectors that cannot be installed as Python
packages (the Caffe BUTD ResNet-101 for UMIC and Visual-T5, vqa-maskrcnn-benchmark for
ViLBERT). Precomputed features are therefore the primary input and
the exact one. The backends here compute **approximations** from a user-supplied checkpoint:

* :class:`Detectron2BUTDExtractor`: a detectron2 C4 Faster R-CNN (e.g. a converted BUTD
  Visual Genome model). detectron2 is an optional dependency that cannot be installed in
  capeval's CI, so this wrapper is deliberately thin and is not exercised by the tests;
  it is the default extractor when detectron2 is importable and ``$CAPEVAL_BUTD_CONFIG``
  and ``$CAPEVAL_BUTD_WEIGHTS`` name its config and weights.
* :class:`TorchvisionC4Extractor`: torchvision's Faster R-CNN with a ResNet-101 C4 backbone
  (RoIAlign 14×14 on ``layer3``, then ``layer4`` and average pooling: 2048-d, like BUTD's
  ``pool5_flat``), behind the ``capeval[torchvision]`` extra, with weights you supply.

Both select boxes the BUTD way (:func:`select_butd_boxes`) and store values in fp16 like the
released ``.npz`` files. :func:`extract_regions` runs any :class:`RegionExtractor` over a list
of images, once per distinct image, with a cache keyed by the image's content hash and the
extractor's configuration.
"""

from __future__ import annotations

import abc
import hashlib
import json
import os
import warnings
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..atomic import partial_file
from ..checkpoints import load_checked, read_state_dict
from ..models import ModelUnavailableError, cached, resolve_device
from ..progress import progress
from .images import DEFAULT_MAX_SIDE, image_digest, load_image
from .regions import RegionFeatureError, RegionFeatures, as_region_feature_list, require_one_per_caption

#: The BUTD pixel means (BGR order), subtracted without std division.
BUTD_PIXEL_MEANS_BGR = (102.9801, 115.9465, 122.7717)


class ExtractorUnavailableError(ModelUnavailableError):
    """No region-feature extractor can run; the message says what to install or pass."""


NO_EXTRACTOR_ADVICE = (
    "Pass precomputed region features instead (region_features=[...]: BUTD .npz files or dicts with "
    "'features', 'norm_bb' and 'conf', one per caption; for published numbers use the authors' features), "
    "or pass an extractor: capeval.vision.extractors.TorchvisionC4Extractor(checkpoint=...) "
    "(pip install 'capeval[torchvision]'), or Detectron2BUTDExtractor(config_file=..., weights=...) "
    "with detectron2 installed (or set $CAPEVAL_BUTD_CONFIG and $CAPEVAL_BUTD_WEIGHTS)."
)


class RegionExtractor(abc.ABC):
    """Computes the regions of one RGB image. Subclasses set ``name`` and describe every
    setting that changes the output in :meth:`config` (it keys the feature cache)."""

    name: str = "extractor"

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """JSON-serialisable settings (checkpoint, thresholds, sizes) that determine the output."""

    @abc.abstractmethod
    def extract(self, image: Any) -> RegionFeatures:
        """The regions of an RGB PIL image from :func:`capeval.vision.images.load_image`."""

    def describe(self) -> str:
        return f"{self.name}({json.dumps(self.config(), sort_keys=True)})"


class FeatureCache:
    """Region features on disk, one ``.npz`` per (image content, extractor configuration)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory).expanduser()

    @staticmethod
    def key(digest: str, extractor: RegionExtractor) -> str:
        return hashlib.sha256(f"{digest}\n{extractor.describe()}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npz"

    def get(self, key: str) -> RegionFeatures | None:
        """The cached regions, or ``None`` when absent; an unreadable entry (a crash mid-write by an older
        version, a damaged disk) is deleted, so it is computed again instead of failing every later call."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                fields = {name: stored[name] for name in stored.files}
            size = fields.pop("image_size", None)
            return RegionFeatures(features=fields["features"], norm_bb=fields["norm_bb"], conf=fields.get("conf"),
                                  boxes=fields.get("boxes"), image_size=None if size is None else (int(size[0]), int(size[1])),
                                  kind=str(fields["kind"]))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, RegionFeatureError) as error:
            warnings.warn(f"region-feature cache entry {path} is unreadable ({type(error).__name__}); computing it again", stacklevel=2)
            path.unlink(missing_ok=True)
            return None

    def put(self, key: str, regions: RegionFeatures) -> None:
        arrays = {"features": regions.features, "norm_bb": regions.norm_bb, "kind": np.array(regions.kind)}
        arrays.update({name: value for name, value in (("conf", regions.conf), ("boxes", regions.boxes)) if value is not None})
        if regions.image_size is not None:
            arrays["image_size"] = np.array(regions.image_size)
        # Written whole or not at all (a hidden partial file renamed into place), so a reader never sees half a file.
        with partial_file(self._path(key)) as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stub misreads **kwds


def extract_regions(images: Sequence[Any], extractor: RegionExtractor, *, cache_dir: str | os.PathLike | None = None,
                    max_side: int | None = DEFAULT_MAX_SIDE, show_progress: bool | None = None) -> list[RegionFeatures]:
    """Regions for each image (paths, bytes, PIL images, ``datasets.Image`` values …), in order.

    Each distinct image (by content hash) is decoded and extracted once; with ``cache_dir``
    results are read from and written to a :class:`FeatureCache` there.
    """
    digests = [image_digest(item, name=f"images[{i}]") for i, item in enumerate(images)]
    cache = FeatureCache(cache_dir) if cache_dir is not None else None
    first_index = {digest: i for i, digest in reversed(list(enumerate(digests)))}
    done: dict[str, RegionFeatures] = {}
    for digest, i in progress(list(first_index.items()), desc=f"extracting regions ({extractor.name})", show=show_progress):
        key = FeatureCache.key(digest, extractor)
        regions = cache.get(key) if cache else None
        if regions is None:
            regions = extractor.extract(load_image(images[i], name=f"images[{i}]", max_side=max_side))
            if cache:
                cache.put(key, regions)
        done[digest] = regions
    return [done[digest] for digest in digests]


def greedy_nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Indices kept by greedy non-maximum suppression, highest score first (reference implementation).

    >>> greedy_nms(np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]]), np.array([0.9, 0.8, 0.7]), 0.5).tolist()
    [0, 2]
    """
    boxes = np.asarray(boxes, dtype=np.float64)
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    order = np.argsort(-np.asarray(scores), kind="stable")
    keep = []
    while order.size:
        best, rest = order[0], order[1:]
        keep.append(best)
        width = np.clip(np.minimum(boxes[best, 2], boxes[rest, 2]) - np.maximum(boxes[best, 0], boxes[rest, 0]), 0, None)
        height = np.clip(np.minimum(boxes[best, 3], boxes[rest, 3]) - np.maximum(boxes[best, 1], boxes[rest, 1]), 0, None)
        overlap = width * height
        iou = overlap / np.maximum(areas[best] + areas[rest] - overlap, 1e-12)
        order = rest[iou <= iou_threshold]
    return np.array(keep, dtype=np.int64)


def select_butd_boxes(boxes: np.ndarray, class_scores: np.ndarray, *, nms: Callable[[np.ndarray, np.ndarray, float], np.ndarray] = greedy_nms,
                      nms_iou: float = 0.3, conf_threshold: float = 0.2, min_boxes: int = 10,
                      max_boxes: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """BUTD's box selection (``generate_npz.py``): returns the kept indices and every box's max_conf.

    ``class_scores`` are the foreground class probabilities (R × C, background removed). For each
    class, NMS at ``nms_iou``; a box's max_conf is its best score among the classes where it
    survives. Boxes with max_conf ≥ ``conf_threshold`` are kept in proposal order, unless fewer
    than ``min_boxes`` or more than ``max_boxes`` pass: then the top ``min_boxes`` (``max_boxes``)
    by max_conf, in descending order.

    >>> boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]])
    >>> keep, conf = select_butd_boxes(boxes, np.array([[0.9, 0.1], [0.8, 0.3], [0.1, 0.25]]), min_boxes=1, max_boxes=3)
    >>> keep.tolist(), conf.round(2).tolist()
    ([0, 1, 2], [0.9, 0.3, 0.25])
    """
    boxes, class_scores = np.asarray(boxes), np.asarray(class_scores)
    max_conf = np.zeros(len(boxes), dtype=np.float64)
    for column in range(class_scores.shape[1]):
        scores = class_scores[:, column]
        kept = np.asarray(nms(boxes, scores, nms_iou), dtype=np.int64)
        max_conf[kept] = np.maximum(max_conf[kept], scores[kept])
    keep = np.flatnonzero(max_conf >= conf_threshold)
    if len(keep) < min_boxes:
        keep = np.argsort(-max_conf, kind="stable")[:min_boxes]
    elif len(keep) > max_boxes:
        keep = np.argsort(-max_conf, kind="stable")[:max_boxes]
    return keep, max_conf


def _stored_like_butd(features: np.ndarray, boxes: np.ndarray, conf: np.ndarray, image: Any, kind: str) -> RegionFeatures:
    """Regions as BUTD's ``generate_npz.py`` stores them (fp16), boxes in the image's original pixels."""
    width, height = image.info.get("original_size", image.size)
    boxes = np.asarray(boxes, dtype=np.float64) * (width / image.size[0])  # undo load_image's downscaling (uniform)
    regions = RegionFeatures.from_pixel_boxes(np.asarray(features, dtype=np.float16), boxes, width, height,
                                              np.asarray(conf, dtype=np.float16), kind=kind)
    return replace(regions, norm_bb=regions.norm_bb.astype(np.float16))


def _selection_config(extractor: Any) -> dict[str, Any]:
    return {"min_boxes": extractor.min_boxes, "max_boxes": extractor.max_boxes,
            "conf_threshold": extractor.conf_threshold, "nms_iou": extractor.nms_iou}


class TorchvisionC4Extractor(RegionExtractor):
    """A Faster R-CNN C4 detector built from torchvision pieces, with weights you supply.

    Architecture: ResNet-101 up to ``layer3`` (stride 16, 1024 channels) → RPN (6000 → 300
    proposals, NMS 0.7) → RoIAlign 14×14 → ``layer4`` → average pool (2048-d) → box
    classifier over ``num_classes`` (background first; 1601 for Visual Genome). The checkpoint
    is a state dict of this ``torchvision.models.detection.FasterRCNN``. Features are those of
    the RPN proposals (not class-regressed), as in BUTD. It approximates the Caffe extractor;
    scores from it differ from those on the released features.

    Needs the ``capeval[torchvision]`` extra (torchvision matching your torch).
    """

    name = "torchvision-c4"

    def __init__(self, checkpoint: str | os.PathLike, *, num_classes: int = 1601, min_boxes: int = 100, max_boxes: int = 100,
                 conf_threshold: float = 0.2, nms_iou: float = 0.3, min_size: int = 600, max_size: int = 1000,
                 device: str | torch.device | None = None):
        self.checkpoint = os.fspath(checkpoint)
        self.num_classes = num_classes
        self.min_boxes, self.max_boxes, self.conf_threshold, self.nms_iou = min_boxes, max_boxes, conf_threshold, nms_iou
        self.min_size, self.max_size = min_size, max_size
        self.device = resolve_device(device)

    def config(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "num_classes": self.num_classes, "min_size": self.min_size,
                "max_size": self.max_size, **_selection_config(self)}

    def _model(self):
        torchvision = import_torchvision()

        def build():
            from torch import nn
            from torchvision.models.detection import FasterRCNN
            from torchvision.models.detection.anchor_utils import AnchorGenerator
            from torchvision.models.detection.faster_rcnn import FastRCNNPredictor

            resnet = torchvision.models.resnet101(weights=None)
            body = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool, resnet.layer1, resnet.layer2, resnet.layer3)
            body.out_channels = 1024
            model = FasterRCNN(
                body, num_classes=self.num_classes, min_size=self.min_size, max_size=self.max_size,
                rpn_anchor_generator=AnchorGenerator(sizes=((32, 64, 128, 256, 512),), aspect_ratios=((0.5, 1.0, 2.0),)),
                rpn_pre_nms_top_n_test=6000, rpn_post_nms_top_n_test=300, rpn_nms_thresh=0.7,
                box_roi_pool=torchvision.ops.MultiScaleRoIAlign(["0"], output_size=14, sampling_ratio=0),
                box_head=nn.Sequential(resnet.layer4, nn.AdaptiveAvgPool2d(1), nn.Flatten()),
                box_predictor=FastRCNNPredictor(2048, self.num_classes))
            load_checked(model, read_state_dict(self.checkpoint, what="torchvision C4 detector checkpoint"), what="torchvision C4 detector checkpoint")
            return model.to(self.device).eval()

        return cached(("torchvision-c4", self.checkpoint, self.num_classes, self.min_size, self.max_size, str(self.device)), build)

    def extract(self, image: Any) -> RegionFeatures:
        torchvision = import_torchvision()
        from torchvision.transforms.functional import to_tensor

        model = self._model()
        with torch.inference_mode():
            images, _ = model.transform([to_tensor(image).to(self.device)])
            features = {"0": model.backbone(images.tensors)}
            proposals, _ = model.rpn(images, features)
            pooled = model.roi_heads.box_head(model.roi_heads.box_roi_pool(features, proposals, images.image_sizes))
            logits, _ = model.roi_heads.box_predictor(pooled)
            scores = torch.softmax(logits, dim=-1)[:, 1:].cpu().numpy()
        # Proposals live in the resized image; scale back to the decoded image's pixels.
        resized_height, _ = images.image_sizes[0]
        boxes = proposals[0].cpu().numpy() * (image.size[1] / resized_height)
        keep, max_conf = select_butd_boxes(
            boxes, scores, nms=lambda b, s, t: torchvision.ops.nms(torch.as_tensor(b, dtype=torch.float32), torch.as_tensor(s), t).numpy(),
            **_selection_config(self))
        return _stored_like_butd(pooled.cpu().numpy()[keep], boxes[keep], max_conf[keep], image, self.name)


class Detectron2BUTDExtractor(RegionExtractor):
    """A detectron2 C4 Faster R-CNN (``Res5ROIHeads``), e.g. the BUTD Visual Genome model converted
    to detectron2. Thin, untested wrapper: detectron2 cannot be installed in capeval's CI.

    ``config_file`` and ``weights`` are the detectron2 config and checkpoint (defaults:
    ``$CAPEVAL_BUTD_CONFIG``, ``$CAPEVAL_BUTD_WEIGHTS``). detectron2's classifier puts the
    background class last; features are the mean-pooled ``res5`` outputs of the proposals.
    """

    name = "detectron2-butd"

    def __init__(self, config_file: str | None = None, weights: str | None = None, *, min_boxes: int = 100, max_boxes: int = 100,
                 conf_threshold: float = 0.2, nms_iou: float = 0.3, device: str | torch.device | None = None):
        import_detectron2()
        self.config_file = config_file or os.environ.get("CAPEVAL_BUTD_CONFIG")
        self.weights = weights or os.environ.get("CAPEVAL_BUTD_WEIGHTS")
        if not self.config_file or not self.weights:
            raise ExtractorUnavailableError("Detectron2BUTDExtractor needs config_file= and weights= (or $CAPEVAL_BUTD_CONFIG and "
                                            "$CAPEVAL_BUTD_WEIGHTS) naming a detectron2 C4 detector. " + NO_EXTRACTOR_ADVICE)
        self.min_boxes, self.max_boxes, self.conf_threshold, self.nms_iou = min_boxes, max_boxes, conf_threshold, nms_iou
        self.device = resolve_device(device)

    def config(self) -> dict[str, Any]:
        return {"config_file": self.config_file, "weights": self.weights, **_selection_config(self)}

    def _model(self):
        def build():
            from detectron2.checkpoint import DetectionCheckpointer
            from detectron2.config import get_cfg
            from detectron2.modeling import build_model

            cfg = get_cfg()
            cfg.merge_from_file(self.config_file)
            cfg.MODEL.DEVICE = str(self.device)
            model = build_model(cfg)
            DetectionCheckpointer(model).load(self.weights)
            return cfg, model.eval()

        return cached(("detectron2-butd", self.config_file, self.weights, str(self.device)), build)

    def extract(self, image: Any) -> RegionFeatures:
        from detectron2.data import transforms
        from detectron2.layers import nms

        cfg, model = self._model()
        bgr = np.asarray(image)[:, :, ::-1]
        resize = transforms.ResizeShortestEdge(cfg.INPUT.MIN_SIZE_TEST, cfg.INPUT.MAX_SIZE_TEST).get_transform(bgr)
        resized = resize.apply_image(bgr)
        with torch.inference_mode():
            inputs = [{"image": torch.as_tensor(resized.transpose(2, 0, 1).copy()), "height": bgr.shape[0], "width": bgr.shape[1]}]
            images = model.preprocess_image(inputs)
            features = model.backbone(images.tensor)
            proposals, _ = model.proposal_generator(images, features, None)
            boxes = proposals[0].proposal_boxes
            pooled = model.roi_heads._shared_roi_transform([features[f] for f in model.roi_heads.in_features], [boxes]).mean(dim=[2, 3])
            logits, _ = model.roi_heads.box_predictor(pooled)
            scores = torch.softmax(logits, dim=-1)[:, :-1].cpu().numpy()
        pixel_boxes = boxes.tensor.cpu().numpy() * (bgr.shape[0] / resized.shape[0])
        keep, max_conf = select_butd_boxes(
            pixel_boxes, scores, nms=lambda b, s, t: nms(torch.as_tensor(b, dtype=torch.float32), torch.as_tensor(s), t).numpy(),
            **_selection_config(self))
        return _stored_like_butd(pooled.cpu().numpy()[keep], pixel_boxes[keep], max_conf[keep], image, self.name)


def import_torchvision():
    """torchvision, or :class:`ExtractorUnavailableError` saying how to get a working one."""
    try:
        import torchvision
    except (ImportError, RuntimeError) as error:  # a torchvision built for another torch fails with RuntimeError
        raise ExtractorUnavailableError(
            f"The torchvision extractor needs torchvision built for torch {torch.__version__} ({type(error).__name__}: {error}). "
            "Install it with pip install 'capeval[torchvision]' (on CPU, torch==2.14.1 with torchvision==0.29.1 work together). "
            + NO_EXTRACTOR_ADVICE) from error
    return torchvision


def import_detectron2():
    try:
        import detectron2
    except ImportError as error:
        raise ExtractorUnavailableError("detectron2 is not installed (it is not on PyPI; build it from its repository). "
                                        + NO_EXTRACTOR_ADVICE) from error
    return detectron2


def default_extractor() -> RegionExtractor:
    """The extractor used when images come without features: detectron2's when it is installed and
    configured; otherwise :class:`ExtractorUnavailableError` explaining what to install or pass."""
    try:
        import_detectron2()
    except ExtractorUnavailableError as error:
        raise ExtractorUnavailableError(f"No region-feature extractor is available. {NO_EXTRACTOR_ADVICE}") from error
    return Detectron2BUTDExtractor()



def regions_for(metric: str, feature_kind: str, count: int, *, images: Sequence[Any] | None, region_features: Sequence[Any] | None,
                extractor: RegionExtractor | None = None, cache_dir: str | os.PathLike | None = None,
                show_progress: bool | None = None) -> tuple[list[RegionFeatures], str]:
    """The region features of one call of an image metric, one for each of its ``count`` predictions, and what they are
    for the hashcode (``"<kinds>:<source>"``, e.g. ``"butd:precomputed"``): the one way the region metrics read their
    image inputs.

    ``feature_kind`` names the features the metric was trained on (for the error message).
    Precomputed ``region_features`` win; otherwise ``images`` go through ``extractor`` (default:
    :func:`default_extractor`). Neither raises ``ValueError`` saying what ``metric`` needs, as does a count other
    than ``count``.
    """
    if region_features is not None:
        regions, source = as_region_feature_list(region_features), "precomputed"
    elif images is None:
        raise ValueError(f"{metric} scores captions against images: pass region_features=[...] ({feature_kind}, one per caption) "
                         "or images=[...] with an extractor")
    else:
        extractor = extractor or default_extractor()
        regions = extract_regions(images, extractor, cache_dir=cache_dir, show_progress=show_progress)
        source = extractor.describe()
    require_one_per_caption(regions, count)
    return regions, f"{','.join(sorted({region.kind for region in regions}))}:{source}"


def check_extractor(extractor: Any) -> RegionExtractor | None:
    """``extractor`` if it is ``None`` or a :class:`RegionExtractor`, else ``TypeError``."""
    if extractor is not None and not isinstance(extractor, RegionExtractor):
        raise TypeError(f"extractor must be a capeval.vision.extractors.RegionExtractor, got {type(extractor).__name__}")
    return extractor
