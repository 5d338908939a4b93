"""The extractor interface, the feature cache, BUTD box selection and the optional backends' errors."""

import numpy as np
import pytest
from PIL import Image

from capeval.vision import extractors
from capeval.vision.extractors import (
    ExtractorUnavailableError,
    FeatureCache,
    TorchvisionC4Extractor,
    default_extractor,
    extract_regions,
    greedy_nms,
    select_butd_boxes,
)
from capeval.vision.regions import RegionFeatures
from fixtures.vision import MeanColourExtractor


def test_each_distinct_image_is_extracted_once_and_cached(sample_image, tmp_path):
    extractor = MeanColourExtractor()
    images = [str(sample_image), sample_image.read_bytes(), Image.new("RGB", (64, 48), "red"), str(sample_image)]
    first = extract_regions(images, extractor, cache_dir=tmp_path)
    assert extractor.calls == 2 and first[0] is first[1] is first[3]
    again = extract_regions(images, extractor, cache_dir=tmp_path)
    assert extractor.calls == 2, "the second run reads the cache"
    for a, b in zip(first, again):
        assert np.array_equal(a.features, b.features) and np.array_equal(a.norm_bb, b.norm_bb)
        assert np.array_equal(a.conf, b.conf) and a.image_size == b.image_size and b.kind == "mean-colour"
    assert np.array_equal(again[0].boxes, first[0].boxes)
    other = MeanColourExtractor(offset=1.0)
    shifted = extract_regions(images[:1], other, cache_dir=tmp_path)
    assert other.calls == 1 and np.allclose(shifted[0].features, first[0].features + 1), "the config is part of the key"


def test_cache_keys_and_files(tmp_path):
    extractor = MeanColourExtractor()
    key = FeatureCache.key("abc", extractor)
    assert key != FeatureCache.key("abd", extractor) != FeatureCache.key("abc", MeanColourExtractor(dim=4))
    cache = FeatureCache(tmp_path)
    assert cache.get(key) is None
    cache.put(key, RegionFeatures.from_butd(np.ones((3, 4), np.float16), np.zeros((3, 6))))
    restored = cache.get(key)
    assert restored.features.dtype == np.float16 and restored.conf is None and restored.image_size is None
    assert [p.suffix for p in tmp_path.rglob("*") if p.is_file()] == [".npz"]


def test_bad_images_are_named_before_any_extraction(sample_image):
    extractor = MeanColourExtractor()
    with pytest.raises(ValueError, match=r"images\[1\]"):
        extract_regions([str(sample_image), b"garbage"], extractor)


def test_greedy_nms_and_butd_selection_rules():
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 9], [50, 50, 60, 60], [100, 100, 120, 120]], dtype=float)
    assert greedy_nms(boxes, np.array([0.5, 0.9, 0.3, 0.1]), 0.3).tolist() == [1, 2, 3]
    scores = np.array([[0.5, 0.1], [0.9, 0.05], [0.3, 0.25], [0.1, 0.15]])
    # Class 0 keeps boxes 1, 2, 3 (box 0 is suppressed by box 1); class 1 keeps 2, 3, 0 (box 1 is suppressed by box 0).
    keep, conf = select_butd_boxes(boxes, scores, min_boxes=1, max_boxes=4)
    assert conf.tolist() == [0.1, 0.9, 0.3, 0.15]
    assert keep.tolist() == [1, 2], "boxes with max_conf >= 0.2, in proposal order"
    keep, _ = select_butd_boxes(boxes, scores, min_boxes=3, max_boxes=4)
    assert keep.tolist() == [1, 2, 3], "too few pass: the top min_boxes by confidence, descending"
    keep, _ = select_butd_boxes(boxes, scores, conf_threshold=0.0, min_boxes=1, max_boxes=2)
    assert keep.tolist() == [1, 2], "too many pass: the top max_boxes"


def test_torchvision_backend_reports_how_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "torchvision", None)  # as if not installed
    extractor = TorchvisionC4Extractor("weights.pt", num_classes=1601)
    assert extractor.config()["min_boxes"] == 100 and "weights.pt" in extractor.describe()
    with pytest.raises(ExtractorUnavailableError, match=r"capeval\[torchvision\]"):
        extractor.extract(Image.new("RGB", (8, 8)))


def test_without_detectron2_there_is_no_default_extractor(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "detectron2", None)
    with pytest.raises(ExtractorUnavailableError, match="No region-feature extractor is available.*region_features=.*TorchvisionC4Extractor"):
        default_extractor()
    with pytest.raises(ExtractorUnavailableError, match="detectron2 is not installed"):
        extractors.Detectron2BUTDExtractor("config.yaml", "weights.pkl")
