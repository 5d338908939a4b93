"""Metrics that name each image by an id (CHAIR with objects= or annotations=, AMBER) from the command line: the rows'
ids are ids, no image folder is needed, and anything wrong is one line with exit 2."""

import json

import pytest

from capeval.cli import main

OBJECTS = {"1": ["dog"], "2": ["person"]}
CHAIR = "chair:variant=original,objects={objects}"


def rows_file(tmp_path, images, key="image"):
    rows = [{"candidate": caption, "references": ["a photo"], key: image}
            for caption, image in zip(["A dog and a cat.", "A man."], images)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the metric's label names objects.json as given


def score(tmp_path, images, *extra, key="image"):
    (tmp_path / "objects.json").write_text(json.dumps(OBJECTS))
    output = tmp_path / "scores.json"
    code = main(["score", "--input", str(rows_file(tmp_path, images, key)), "--metric", CHAIR.format(objects="objects.json"),
                 "--output", str(output), *extra])
    return code, output


@pytest.mark.parametrize("images", [[1, 2], ["1", "2"], ["COCO_val2014_000000000001.jpg", 2]])
@pytest.mark.parametrize("folder", [False, True])
def test_integer_ids_are_ids_with_or_without_an_images_folder(tmp_path, capsys, images, folder):
    empty = tmp_path / "images"
    empty.mkdir()
    code, output = score(tmp_path, images, *(["--images", str(empty)] if folder else []))
    assert code == 0, capsys.readouterr().err
    assert json.loads(output.read_text())["scores"]["chair_s"] == [1.0, 0.0]


def test_coco_results_image_ids_stand_for_the_images(tmp_path, capsys):
    code, output = score(tmp_path, [1, 2], key="image_id")
    assert code == 0, capsys.readouterr().err
    assert json.loads(output.read_text())["scores"]["chair_s"] == [1.0, 0.0]


@pytest.mark.parametrize("images, message", [
    ([1.5, 2], "row 0: 'image' is 1.5, not an image file name or id"),
    ([1, True], "row 1: 'image' is True, not an image file name or id"),
    ([1, [2]], "row 1: 'image' is [2], not an image file name or id"),
    ([1, 7], "images[1]: image 7 is not in objects="),
])
def test_a_wrong_image_is_one_line_and_exit_2(tmp_path, capsys, images, message):
    code, _ = score(tmp_path, images)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_row_without_an_image_is_one_line_and_exit_2(tmp_path, capsys):
    code, _ = score(tmp_path, [1, 2], key="photo")
    err = capsys.readouterr().err
    assert code == 2 and "row 0 has no image: chair(variant=original,objects=objects.json) need(s) each row's image id" in err


def test_beside_a_metric_that_reads_pixels_the_images_are_files(tmp_path):
    """Ids pass as they are only when every image metric takes ids: a pixel metric in the run needs the files."""
    from argparse import Namespace
    from types import SimpleNamespace

    from capeval.cli import UsageError, visual_inputs

    by_id = SimpleNamespace(label="chair", scorer=SimpleNamespace(needs_images=True, image_id_example="391895"))
    pixels = SimpleNamespace(label="clip_score", scorer=SimpleNamespace(needs_images=True, image_id_example=""))
    text = SimpleNamespace(label="bleu", scorer=SimpleNamespace(needs_images=False, image_id_example=""))
    rows = [{"image": 1}, {"image": "2.jpg"}]
    assert visual_inputs(Namespace(images=None, features=None), rows, [by_id, text]) == {"images": [1, "2.jpg"]}
    with pytest.raises(UsageError, match="chair, clip_score need"):
        visual_inputs(Namespace(images=None, features=None), rows, [by_id, pixels])
    for name in ("1", "2.jpg"):
        (tmp_path / name).write_bytes(b"")
    assert visual_inputs(Namespace(images=str(tmp_path), features=None), rows, [by_id, pixels]) == \
        {"images": [str(tmp_path / "1"), str(tmp_path / "2.jpg")]}
