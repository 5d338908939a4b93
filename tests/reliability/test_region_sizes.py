"""Pixel-box region features: a bad image size names the item and the field (not a NaN in a norm_bb the user
never gave, not a bare int() error); boxes outside the image or inverted score with one warning naming the item."""

import warnings

import numpy as np
import pytest

from capeval.vision.regions import RegionFeatureError, RegionFeatureWarning, as_region_feature_list


def item(**fields) -> dict:
    return {"features": np.ones((3, 4), np.float32), "bbox": [[0, 0, 10, 10], [5, 5, 20, 30], [0, 0, 40, 30]],
            "image_width": 40, "image_height": 30, **fields}


@pytest.mark.parametrize("field, value", [("image_width", 0), ("image_height", -3), ("image_width", "wide"),
                                          ("image_height", 12.5), ("image_width", None)])
def test_a_bad_image_size_names_the_item_and_the_field(field, value):
    with pytest.raises(RegionFeatureError) as raised:
        as_region_feature_list([item(), item(**{field: value})])
    assert str(raised.value) == f"region_features[1]: {field} must be a positive whole number of pixels, got {value!r}"


def test_numpy_sizes_are_whole_numbers_too():
    regions = as_region_feature_list([item(image_width=np.int64(40), image_height=np.array(30.0))])
    assert regions[0].image_size == (40, 30)
    assert regions[0].norm_bb[1].tolist() == np.float32([0.125, 5 / 30, 0.5, 1.0, 0.375, 25 / 30]).tolist()


@pytest.mark.parametrize("boxes, odd", [([[0, 0, 10, 10], [5, 5, 50, 30], [0, 0, 40, 30]], "box 1, [5.0, 5.0, 50.0, 30.0]"),
                                        ([[0, 0, 10, 10], [5, 5, 20, 30], [30, 0, 20, 30]], "box 2, [30.0, 0.0, 20.0, 30.0]"),
                                        ([[-1, 0, 10, 10], [5, 5, 20, 31], [0, 0, 40, 30]], "box 0, [-1.0, 0.0, 10.0, 10.0]")])
def test_boxes_outside_the_image_or_inverted_warn_once_naming_the_item(boxes, odd):
    with pytest.warns(RegionFeatureWarning) as caught:
        regions = as_region_feature_list([item(), item(bbox=boxes)])
    count = 2 if boxes[0][0] == -1 else 1
    assert [str(w.message) for w in caught] == [
        f"region_features[1]: {count} of 3 pixel boxes lie outside the 40 × 30 image or are inverted (the first: {odd}); "
        "they are scored as given"]
    assert regions[1].boxes.tolist() == np.float32(boxes).tolist()


def test_boxes_inside_the_image_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        as_region_feature_list([item()])
