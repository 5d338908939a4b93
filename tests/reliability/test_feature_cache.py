"""UMIC's region-feature cache and feature files: a corrupt entry is computed again, an interrupted write leaves
nothing, and a damaged .npz is called damaged (not a pickle needing an option UMIC does not have)."""

import numpy as np
import pytest

import capeval
from capeval.vision.extractors import FeatureCache, extract_regions
from capeval.vision.regions import RegionFeatureError, as_region_features
from fixtures.vision import MeanColourExtractor


def test_a_corrupt_cache_entry_is_computed_again(sample_image, tmp_path):
    extractor = MeanColourExtractor(dim=8)
    first = extract_regions([str(sample_image)], extractor, cache_dir=tmp_path)
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    entry.write_bytes(b"\x00garbage")
    with pytest.warns(UserWarning, match="unreadable .* computing it again"):
        again = extract_regions([str(sample_image)], extractor, cache_dir=tmp_path)
    assert extractor.calls == 2 and np.array_equal(again[0].features, first[0].features)
    assert extract_regions([str(sample_image)], extractor, cache_dir=tmp_path) and extractor.calls == 2, "rewritten whole"


def test_an_interrupted_cache_write_leaves_no_file(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        FeatureCache(tmp_path).put("ab" * 32, as_region_features({"features": np.ones((2, 4)), "norm_bb": np.zeros((2, 6))}))
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_damaged_npz_is_reported_as_damaged(tmp_path, tiny_umic):
    path = tmp_path / "image.npz"
    path.write_bytes(np.random.default_rng(0).bytes(2048))
    with pytest.raises(RegionFeatureError, match="not an .npz archive") as raised:
        as_region_features(str(path))
    assert "allow_pickle" not in str(raised.value)
    umic = capeval.load("umic", **tiny_umic)
    with pytest.raises(RegionFeatureError, match=r"region_features\[0\].*not an .npz archive"):
        umic.compute(predictions=["two men riding horses"], region_features=[str(path)])


def test_a_pickled_npy_says_how_to_load_it_outside_the_module(tmp_path):
    path = tmp_path / "image.npy"
    np.save(path, {"features": np.ones((2, 4)), "bbox": np.zeros((2, 4)), "image_width": 10, "image_height": 10}, allow_pickle=True)
    with pytest.raises(RegionFeatureError, match=r"as_region_features\(path, allow_pickle=True\) and pass the result"):
        as_region_features(str(path))
