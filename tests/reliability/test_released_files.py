"""The released-file readers on damaged, hostile or odd files (reliability round 5): every name read from a data
file stays inside its folder, and every file the readers cannot use is the one ``BenchmarkFileError`` naming the
file (and the row, where there is one) that the other malformed files get, never a raw csv, codec, pyarrow or
OS error."""

import json

import datasets
import pytest

from capeval.benchmarks import load_benchmark
from capeval.benchmarks.released import BenchmarkFileError, extract_images

from fixtures.released import (NEBULA, POLARIS, image_bytes, literal, nebula_features, write_csv, write_foil, write_image,
                                write_hub_parquet, write_nebula, write_polaris)


@pytest.fixture(autouse=True)
def quiet_datasets():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


def refused(name, folder, *messages, config=None):
    with pytest.raises(BenchmarkFileError) as error:
        load_benchmark(name, data_dir=folder, config=config)
    assert all(message in str(error.value) for message in messages), str(error.value)


# --------------------------------------------------------------------------- names that would leave their folder


def nebula_named(folder, names):
    """Nebula's Hub layout whose rows carry the image file ``names``."""
    records = [{"file_name": name, "image": {"bytes": image_bytes(), "path": None}, "refs": refs, "mt": mt,
                "human_score": score} for name, (_, refs, mt, score) in zip(names, NEBULA)]
    write_hub_parquet(folder / "data" / "test-00000-of-00001.parquet", records, nebula_features())
    return folder


@pytest.mark.parametrize("name", ["../../escaped.jpg", "{root}/escaped.jpg", "..\\..\\escaped.jpg"],
                         ids=["parent", "absolute", "windows-parent"])
def test_extract_images_writes_nothing_outside_the_image_folder(tmp_path, name):
    folder = nebula_named(tmp_path / "data" / "nebula", ["n0.jpg", name.format(root=tmp_path)])
    with pytest.raises(BenchmarkFileError, match=r"test-00000-of-00001.parquet row 2: image file name .* is not a file "
                                                 r"name inside .*images"):
        extract_images("nebula", data_dir=folder)
    assert not list(tmp_path.rglob("escaped.jpg"))


def test_extract_images_makes_the_folders_a_file_name_has(tmp_path):
    folder = nebula_named(tmp_path / "nebula", ["sub/deeper/b.png", "sub/a.png", "n2.jpg"])  # two new levels first
    images = extract_images("nebula", data_dir=folder)
    assert (images / "sub" / "a.png").read_bytes() == (images / "sub" / "deeper" / "b.png").read_bytes() == image_bytes()


@pytest.mark.parametrize("images", [True, False], ids=["with-images", "without-images"])
@pytest.mark.parametrize("imgid", ["../secret.jpg", "/etc/passwd", "p0.jpg/../../secret.jpg"])
def test_a_polaris_imgid_outside_the_image_folder_is_refused(tmp_path, imgid, images):
    (tmp_path / "secret.jpg").write_bytes(image_bytes())
    rows = [row if k != 2 else (*row[:3], imgid) for k, row in enumerate(POLARIS)]
    folder = write_polaris(tmp_path / "polaris", rows=rows)
    if images:
        for name in ("p0.jpg", "p1.jpg", "p2.jpg"):
            write_image(folder / "images" / name)
    refused("polaris", folder, "polaris_test.csv row 3 (line 4): image file name", "is not a file name inside")


def test_a_foil_file_name_outside_the_image_folder_is_refused(tmp_path):
    folder = write_foil(tmp_path / "foil")
    foil = json.loads((folder / "foilv1.0_test_2017.json").read_text())
    foil["images"][1]["file_name"] = "../../captions_val2014.json"
    (folder / "foilv1.0_test_2017.json").write_text(json.dumps(foil))
    refused("foil", folder, "foilv1.0_test_2017.json annotation 5: image file name '../../captions_val2014.json'")


# --------------------------------------------------------------------------- files the CSV reader cannot use


def test_a_latin1_polaris_csv_is_refused_at_its_row(tmp_path):
    folder = write_polaris(tmp_path / "polaris")
    lines = (folder / "polaris_test.csv").read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace("horses", "chevaux café")
    (folder / "polaris_test.csv").write_bytes("".join(lines).encode("latin-1"))
    refused("polaris", folder, "polaris_test.csv row 3 (line 4): not UTF-8 text")


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x04\xff\xfe", "polaris_test.csv header: not UTF-8 text"),
    (b"mt,refs,score,imgid\n\x00\xff\x00\xfe,['a'],0.5,p0.jpg\n", "polaris_test.csv row 1 (line 2): not UTF-8 text"),
], ids=["binary", "binary-row"])
def test_a_binary_polaris_csv_is_refused(tmp_path, content, message):
    (tmp_path / "polaris").mkdir()
    (tmp_path / "polaris" / "polaris_test.csv").write_bytes(content)
    refused("polaris", tmp_path / "polaris", message)


def test_a_csv_that_is_a_folder_is_named(tmp_path):
    (tmp_path / "polaris" / "polaris_test.csv").mkdir(parents=True)
    refused("polaris", tmp_path / "polaris", "polaris_test.csv is a folder, not a file")
    foil = write_foil(tmp_path / "foil")
    (foil / "captions_val2014.json").unlink()
    (foil / "captions_val2014.json").mkdir()
    refused("foil", foil, "captions_val2014.json is a folder, not a file")


def test_a_field_longer_than_the_csv_limit_is_named_with_its_row(tmp_path):
    rows = [[mt, literal(refs), score, imgid] for mt, refs, score, imgid in POLARIS]
    rows[4][0] = "a " * 70_000  # 140,000 characters, over the csv module's 131,072
    write_csv(tmp_path / "polaris" / "polaris_test.csv", ["mt", "refs", "score", "imgid"], rows)
    refused("polaris", tmp_path / "polaris", "polaris_test.csv row 5 (after line 5): field larger than field limit")


def test_a_spica_csv_in_latin1_is_refused_at_its_row(tmp_path):
    folder = write_nebula(tmp_path / "nebula")
    (folder / "spica_val.csv").write_bytes("mt,refs,score,imgid\ncaf\xe9,['a'],0.5,n1.jpg\n".encode("latin-1"))
    refused("nebula", folder, "spica_val.csv row 1 (line 2): not UTF-8 text")


def test_a_csv_with_no_rows_is_one_error_naming_the_benchmark(tmp_path):
    write_csv(tmp_path / "polaris" / "polaris_test.csv", ["mt", "refs", "score", "imgid"], [])
    refused("polaris", tmp_path / "polaris", f"Polaris: the released files in {tmp_path / 'polaris'} hold no rows "
                                             "(polaris_test.csv)")


# --------------------------------------------------------------------------- Parquet shards


@pytest.mark.parametrize("damage", ["random", "cut", "cut-footer", "folder"])
def test_a_damaged_nebula_shard_is_named(tmp_path, damage):
    folder = write_nebula(tmp_path / "nebula")
    shard = folder / "data" / "test-00001-of-00002-9b8d7e.parquet"
    data = shard.read_bytes()
    if damage == "folder":
        shard.unlink()
        shard.mkdir()
    else:
        shard.write_bytes({"random": bytes(range(256)) * 8, "cut": data[: len(data) // 2],
                           "cut-footer": data[:-9]}[damage])
    message = "is a folder, not a Parquet file" if damage == "folder" else "is not a readable Parquet file"
    refused("nebula", folder, "test-00001-of-00002-9b8d7e.parquet " + message, config="uncorrected")
    with pytest.raises(BenchmarkFileError, match="test-00001-of-00002-9b8d7e.parquet is"):
        extract_images("nebula", data_dir=folder)


def test_a_shard_damaged_inside_its_data_is_named(tmp_path):
    """The footer and schema read, a column chunk of the rows does not."""
    folder = write_nebula(tmp_path / "nebula")
    shard = folder / "data" / "test-00000-of-00002-3f2a1c.parquet"
    data = bytearray(shard.read_bytes())
    data[4:len(data) // 2] = bytes(len(data) // 2 - 4)  # the column chunks zeroed, the footer kept
    shard.write_bytes(bytes(data))
    refused("nebula", folder, "test-00000-of-00002-3f2a1c.parquet is not a readable Parquet file", config="uncorrected")


# --------------------------------------------------------------------------- FOIL and COCO entries


def foil_edited(tmp_path, edit):
    folder = write_foil(tmp_path / "foil")
    for name in ("foilv1.0_test_2017.json", "captions_val2014.json"):
        content = json.loads((folder / name).read_text())
        edit(name, content)
        (folder / name).write_text(json.dumps(content))
    return folder


def set_entry(file, key, k, field, value):
    def edit(name, content):
        if name == file:
            content[key][k][field] = value
    return edit


@pytest.mark.parametrize("file, key, k, field, value, message", [
    ("foilv1.0_test_2017.json", "annotations", 1, "id", [1], "foilv1.0_test_2017.json annotation 2: id must be an integer, got '[1]'"),
    ("foilv1.0_test_2017.json", "annotations", 0, "id", {"a": 1}, "annotation 1: id must be an integer"),
    ("foilv1.0_test_2017.json", "annotations", 3, "image_id", [11], "annotation 4: image_id must be an integer"),
    ("foilv1.0_test_2017.json", "images", 1, "id", [11], "foilv1.0_test_2017.json image 2: id must be an integer"),
    ("captions_val2014.json", "annotations", 2, "image_id", [10], "captions_val2014.json annotation 3: image_id must be an integer"),
    ("captions_val2014.json", "annotations", 6, "caption", 42, "captions_val2014.json annotation 7: caption must be text, got 42"),
    ("captions_val2014.json", "annotations", 6, "caption", None, "captions_val2014.json annotation 7: caption must be text, got None"),
], ids=["unhashable-id", "dict-id", "unhashable-image-id", "image-entry-id", "coco-image-id", "numeric-caption", "null-caption"])
def test_a_foil_or_coco_entry_of_the_wrong_type_is_named(tmp_path, file, key, k, field, value, message):
    refused("foil", foil_edited(tmp_path, set_entry(file, key, k, field, value)), message)
