"""CHAIR's ground truth as it is on disk now, and ground truth that is ambiguous or malformed refused by entry."""

import json
import os

import pytest

import capeval
from capeval.scoring.chair import ChairScorer

CATEGORIES = [{"id": 17, "name": "cat"}, {"id": 18, "name": "dog"}]


def write_folder(folder, category_id, caption="a picture"):
    """A COCO annotation folder with image 1, whose one instance is of ``category_id``; the same size whichever."""
    (folder / "instances_val2014.json").write_text(json.dumps(
        {"images": [{"id": 1}], "categories": CATEGORIES, "annotations": [{"image_id": 1, "category_id": category_id}]}))
    (folder / "captions_val2014.json").write_text(json.dumps(
        {"images": [{"id": 1}], "annotations": [{"image_id": 1, "caption": caption}]}))


def keep_times(path, stat):
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_annotations_rewritten_on_disk_are_read_again(tmp_path):
    write_folder(tmp_path, 17)
    metric = capeval.load("chair", variant="original", annotations=str(tmp_path))
    assert metric.compute(predictions=["A dog."], images=[1])["hallucinated_objects"] == [["dog"]]
    stat = (tmp_path / "instances_val2014.json").stat()
    write_folder(tmp_path, 18)  # same size, and the old modification time put back
    keep_times(tmp_path / "instances_val2014.json", stat)
    again = metric.compute(predictions=["A dog."], images=[1])
    assert again["hallucinated_objects"] == [[]] and again["ground_truth_objects"] == [["dog"]]


def test_an_objects_file_rewritten_on_disk_is_read_again(tmp_path):
    path = tmp_path / "objects.json"
    path.write_text(json.dumps({"1": ["cat"]}))
    scorer = ChairScorer(variant="original", objects=str(path))
    assert scorer.score(["A dog."], images=[1]).details["hallucinated_objects"] == [["dog"]]
    before = scorer.options()["objects"]
    stat = path.stat()
    path.write_text(json.dumps({"1": ["dog"]}))
    keep_times(path, stat)
    assert scorer.score(["A dog."], images=[1]).details["hallucinated_objects"] == [[]]
    assert scorer.options()["objects"] != before  # the hashcode names the ground truth scored


@pytest.mark.parametrize("objects, message", [
    ({"1": ["dog"], "01": ["cat"]}, r"objects: keys '1' and '01' both name image 1; give each image once"),
    ({1: ["dog"], "COCO_val2014_000000000001.jpg": ["cat"]},
     r"objects: keys 1 and 'COCO_val2014_000000000001.jpg' both name image 1"),
    ({1: [["dog"]]}, r"objects\[1\] holds \['dog'\]: each object is a COCO category name \(a string\)"),
    ({1: [None]}, r"objects\[1\] holds None: each object is a COCO category name"),
])
def test_ambiguous_or_malformed_objects_are_one_error_naming_the_entry(objects, message):
    with pytest.raises(ValueError, match=message):
        ChairScorer(variant="original", objects=objects)


def test_duplicate_keys_in_an_objects_file_name_the_file(tmp_path):
    path = tmp_path / "objects.json"
    path.write_text('{"1": ["dog"], "000001": ["cat"]}')
    with pytest.raises(ValueError, match=r"objects='.*objects.json': keys '1' and '000001' both name image 1"):
        ChairScorer(variant="original", objects=str(path))


@pytest.mark.parametrize("value", [123, ["a"], 1.5])
def test_annotations_that_are_not_a_path_name_the_option(value):
    with pytest.raises(ValueError, match=f"annotations= must be a folder path, got {type(value).__name__}"):
        ChairScorer(annotations=value)


@pytest.mark.parametrize("caption, shown", [(None, "None"), (7, "7"), (["a dog"], r"\['a dog'\]")])
def test_a_caption_that_is_not_text_names_the_file_and_the_annotation(tmp_path, caption, shown):
    write_folder(tmp_path, 18, caption)
    with pytest.raises(ValueError, match=rf"captions_val2014.json: annotation 0 \(image 1\) has caption {shown}, not a string"):
        ChairScorer(variant="original", annotations=str(tmp_path)).score(["a dog"], images=[1])


def test_rewritten_reference_captions_are_read_again(tmp_path):
    """An image's ground truth is its instances plus the objects its captions mention: both files count."""
    write_folder(tmp_path, 17, "a picture")
    scorer = ChairScorer(variant="original", annotations=str(tmp_path))
    assert scorer.score(["A dog."], images=[1]).details["ground_truth_objects"] == [["cat"]]
    write_folder(tmp_path, 17, "a dog and")  # the same size
    assert scorer.score(["A dog."], images=[1]).details["ground_truth_objects"] == [["cat", "dog"]]
