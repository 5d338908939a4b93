"""Region features: the container, the per-model location encodings and the loaders."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from capeval.vision.regions import (
    RegionFeatureError,
    RegionFeatures,
    as_region_feature_list,
    as_region_features,
    load_feature_folder,
    load_feature_table,
)


def butd_fields(n=12, dim=2048, seed=0):
    rng = np.random.default_rng(seed)
    x1, y1 = rng.random(n) * 0.5, rng.random(n) * 0.5
    w, h = rng.random(n) * 0.4 + 0.05, rng.random(n) * 0.4 + 0.05
    norm_bb = np.stack([x1, y1, x1 + w, y1 + h, w, h], axis=1)
    return {"features": rng.random((n, dim)).astype(np.float16), "norm_bb": norm_bb.astype(np.float16),
            "conf": np.sort(rng.random((n, 1)))[::-1].astype(np.float16)}


def test_the_real_butd_sample_loads_as_stored(sample_features):
    regions = as_region_features(sample_features)
    stored = np.load(sample_features)
    assert regions.num_boxes == 36 and regions.feature_dim == 2048 and regions.kind == "butd"
    assert regions.features.dtype == np.float16 and np.array_equal(regions.features, stored["features"])
    assert regions.norm_bb.dtype == np.float32 and np.array_equal(regions.norm_bb, stored["norm_bb"].astype(np.float32))
    assert regions.conf.shape == (36,) and regions.conf[0] == np.float16(0.939)
    assert regions.visual_t5_input().shape == (36, 2054) and regions.visual_t5_input().dtype == np.float32
    assert regions.uniter_pos7().shape == (36, 7)


def test_uniter_position_is_norm_bb_plus_area():
    # w ≠ h, so the area w·h cannot be confused with w·w or h·h.
    regions = RegionFeatures.from_butd(np.zeros((1, 2048)), np.float16([[0.1, 0.2, 0.5, 0.8, 0.4, 0.6]]))
    pos7 = regions.uniter_pos7()
    assert pos7.dtype == np.float32
    assert np.allclose(pos7, [[0.1, 0.2, 0.5, 0.8, 0.4, 0.6, 0.24]], atol=1e-3)  # up to fp16 rounding of the inputs
    assert pos7[0, 6] == np.float32(np.float16(0.4)) * np.float32(np.float16(0.6))


def test_vilbert_location_uses_pixel_area():
    regions = RegionFeatures.from_pixel_boxes(np.ones((2, 2048)), [[0, 0, 50, 100], [10, 20, 30, 60]], 100, 200)
    assert np.allclose(regions.vilbert_loc5(), [[0, 0, 0.5, 0.5, 0.25], [0.1, 0.1, 0.3, 0.3, 800 / 20000]])
    assert regions.image_size == (100, 200) and regions.kind == "vilbert"


def test_first_keeps_fields_aligned():
    regions = as_region_features(butd_fields(12)).first(10)
    assert regions.num_boxes == 10 and regions.norm_bb.shape == (10, 6) and regions.conf.shape == (10,)


@pytest.mark.parametrize("change, message", [
    ({"features": np.zeros((12, 2048, 1))}, "N×D"),
    ({"features": np.zeros((0, 2048))}, "non-empty"),
    ({"norm_bb": np.zeros((11, 6))}, "norm_bb must be 12×6"),
    ({"norm_bb": np.full((12, 6), np.nan)}, "norm_bb contains NaN"),
    ({"features": np.full((12, 2048), np.inf, dtype=np.float16)}, "features contains NaN or infinite"),
    ({"conf": np.zeros(5)}, "conf must hold 12 values"),
    ({"features": [["x"] * 4] * 12}, "not numeric"),
])
def test_bad_fields_raise_naming_the_item(change, message):
    fields = {**butd_fields(12), **change}
    with pytest.raises(RegionFeatureError, match=rf"region_features\[1\]: .*{message}"):
        as_region_feature_list([butd_fields(12), fields])


def test_unusable_inputs_say_what_is_expected(tmp_path):
    with pytest.raises(RegionFeatureError, match="need 'norm_bb'"):
        as_region_features({"features": np.zeros((3, 2048)), "bbox": np.zeros((3, 4))})
    with pytest.raises(RegionFeatureError, match="no 'features' field"):
        as_region_features({"norm_bb": np.zeros((3, 6))})
    with pytest.raises(RegionFeatureError, match="does not exist"):
        as_region_features(tmp_path / "missing.npz")
    with pytest.raises(RegionFeatureError, match="unsupported region-feature input of type int"):
        as_region_features(7)
    with pytest.raises(RegionFeatureError, match="one entry per caption"):
        as_region_feature_list({"features": 1})
    bare = tmp_path / "bare.npy"
    np.save(bare, np.zeros((3, 2048)))
    with pytest.raises(RegionFeatureError, match="bare"):
        as_region_features(bare)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(RegionFeatureError, match="cannot read"):
        as_region_features(corrupt)


def test_vilbert_npy_needs_allow_pickle(tmp_path):
    path = tmp_path / "vilbert.npy"
    np.save(path, {"features": np.ones((100, 2048), np.float32), "bbox": np.tile([0, 0, 50, 100], (100, 1)),
                   "image_width": 100, "image_height": 200, "num_boxes": 100}, allow_pickle=True)
    with pytest.raises(RegionFeatureError, match="allow_pickle=True"):
        as_region_features(path)
    regions = as_region_features(path, allow_pickle=True)
    assert regions.kind == "vilbert" and regions.vilbert_loc5()[0].tolist() == [0, 0, 0.5, 0.5, 0.25]


def test_folder_of_per_image_files(tmp_path):
    for i in range(2):
        np.savez(tmp_path / f"coco_val2014_{i:012d}.npz", **butd_fields(12, seed=i))
    regions = load_feature_folder(tmp_path, ["coco_val2014_000000000001", "coco_val2014_000000000000"])
    assert np.array_equal(regions[0].features, butd_fields(12, seed=1)["features"])
    with pytest.raises(RegionFeatureError, match="image 'nope'"):
        load_feature_folder(tmp_path, ["nope"])
    with pytest.raises(RegionFeatureError, match="folder"):
        load_feature_folder(tmp_path / "absent", ["x"])


def test_parquet_nested_and_flat_columns_and_datasets(tmp_path):
    rows = [butd_fields(12, seed=0), butd_fields(15, seed=1)]
    nested = pa.table({"features": [r["features"].astype(np.float32).tolist() for r in rows],
                       "norm_bb": [r["norm_bb"].astype(np.float32).tolist() for r in rows],
                       "conf": [r["conf"].ravel().astype(np.float32).tolist() for r in rows]})
    flat = pa.table({"feats": [r["features"].astype(np.float32).ravel() for r in rows],
                     "norm_bb": [r["norm_bb"].astype(np.float32).ravel() for r in rows]})
    pq.write_table(nested, tmp_path / "features.parquet")
    for regions in (load_feature_table(tmp_path / "features.parquet"), load_feature_table(flat, columns={"features": "feats"})):
        assert [r.num_boxes for r in regions] == [12, 15]
        assert np.array_equal(regions[1].features, rows[1]["features"].astype(np.float32))
        assert np.array_equal(regions[1].norm_bb, rows[1]["norm_bb"].astype(np.float32))
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict(nested.to_pydict())
    assert np.array_equal(load_feature_table(table)[0].conf, rows[0]["conf"].ravel().astype(np.float32))
    assert np.array_equal(as_region_features(table[1]).features, rows[1]["features"].astype(np.float32))
    with pytest.raises(RegionFeatureError, match="row 1: norm_bb is a flat list of 5 values"):
        load_feature_table(pa.table({"features": nested["features"], "norm_bb": [[0.0] * 6, [0.0] * 5]}))
    with pytest.raises(RegionFeatureError, match="unsupported feature table"):
        load_feature_table(42)


def test_vilbert_inputs_prepend_the_global_region(sample_features):
    regions = as_region_features(sample_features)
    features, locations = regions.vilbert_inputs()
    assert features.shape == (37, 2048) and locations.shape == (37, 5) and features.dtype == locations.dtype == np.float32
    assert np.allclose(features[0], regions.features.astype(np.float32).mean(axis=0), atol=1e-6)
    assert locations[0].tolist() == [0, 0, 1, 1, 1] and np.array_equal(locations[1:, :4], regions.norm_bb[:, :4])
