"""The benchmarks read from their released files (Polaris, Nebula, FOIL, LongCap-Arena): each builder on a
fixture in the released layout, the same rows through ``load_benchmark`` and through ``datasets.load_dataset``
of the Hub folder, where the data is looked for and fetched, and one clear error per malformed file."""

import json
import shutil

import datasets
import pytest

from capeval.benchmarks import hub_dir, load_benchmark
from capeval.benchmarks.released import (RELEASED, BenchmarkDataMissing, BenchmarkFileError, card_features,
                                         card_metadata, extract_images, write_hub_folder)

from fixtures.released import (COCO_CAPTIONS, image_bytes, FOIL_ANNOTATIONS, LONGCAP_CAPTIONS, LONGCAP_REFS, LONGCAP_SCORES,
                                NEBULA, POLARIS, literal, write_csv, write_foil, write_longcap_arena, write_nebula,
                                write_polaris)

WRITERS = {"polaris": write_polaris, "nebula": write_nebula, "foil": write_foil, "longcap_arena": write_longcap_arena}


@pytest.fixture(autouse=True)
def quiet_datasets():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    """An empty capeval data folder ($CAPEVAL_DATA), offline."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("CAPEVAL_DATA", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return root


def test_polaris_rows_are_the_csv_rows_with_parsed_references(tmp_path, data_root):
    folder = write_polaris(tmp_path / "polaris")
    rows = load_benchmark("polaris", data_dir=folder).to_list()
    assert rows == [{"row_id": k, "image_file": imgid, "candidate": mt, "references": refs, "score": score}
                    for k, (mt, refs, score, imgid) in enumerate(POLARIS)]
    # Without data_dir the files are read from $CAPEVAL_DATA/polaris; a folder given as source works too.
    shutil.copytree(folder, data_root / "polaris")
    assert load_benchmark("polaris").to_list() == rows == load_benchmark("polaris", folder).to_list()


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_hub_folder_loads_with_datasets_to_the_same_rows(name, tmp_path):
    folder = WRITERS[name](tmp_path / name)
    out = write_hub_folder(name, tmp_path / "hub" / name, data_dir=folder)
    assert (out / "README.md").read_text() == (hub_dir() / name / "README.md").read_text()
    configs = [entry["config_name"] for entry in card_metadata(name)["configs"]]
    assert configs == list(RELEASED[name].needs)
    for config in configs:
        built = load_benchmark(name, data_dir=folder, config=config)
        loaded = datasets.load_dataset(str(out), config, split="test")
        assert loaded.features == built.features == card_features(name, config)
        assert loaded.to_list() == built.to_list() and built.num_rows > 0


def test_nebula_test_scores_are_corrected_from_spica_by_image_and_caption(tmp_path):
    folder = write_nebula(tmp_path / "nebula")
    corrected = load_benchmark("nebula", data_dir=folder).to_dict()
    released = [score for *_, score in NEBULA]
    # n0's dog caption: Spica train and test both give 0.0 (the test one names the image without its extension);
    # n1's rice caption matches with its doubled space collapsed; the cat caption's Spica row is another image's.
    assert corrected["score"] == [0.5, 0.0, 0.25, 0.0, 0.0]
    assert corrected["released_score"] == released
    assert corrected["corrected"] == [False, True, False, True, False]
    uncorrected = load_benchmark("nebula", data_dir=folder, config="uncorrected").to_dict()
    assert uncorrected["score"] == released and not any(uncorrected["corrected"])
    assert corrected["candidate"] == [mt for _, _, mt, _ in NEBULA]  # shard order: test-00000 then test-00001
    # DENEB's nebula_test.csv layout gives the same rows.
    csv_folder = write_nebula(tmp_path / "deneb", layout="csv")
    assert load_benchmark("nebula", data_dir=csv_folder).to_dict() == corrected


def test_nebula_spica_scores_of_one_caption_are_averaged(tmp_path):
    spica = [("spica_train.csv", "n0.jpg", "a dog on a sofa", 0.2), ("spica_val.csv", "n0.jpg", "a dog on a sofa", 0.6)]
    folder = write_nebula(tmp_path / "nebula", spica=spica)
    assert load_benchmark("nebula", data_dir=folder)["score"][1] == pytest.approx(0.4)


def test_foil_pairs_follow_the_compute_foil_script(tmp_path):
    rows = load_benchmark("foil", data_dir=write_foil(tmp_path / "foil")).to_list()
    assert [(r["annotation_id"], r["original"], r["foil"]) for r in rows] == [
        (1, "a man rides a horse on a beach", "a man rides a cow on a beach"),
        (1, "a man rides a horse on a beach", "a man rides a horse on a boat"),
        (2, "two cats sleep on a bed", "two dogs sleep on a bed")]
    # The image's COCO captions but the original, in file order; 1-ref takes the first of them.
    assert rows[0]["references"] == COCO_CAPTIONS[10][1:] and rows[2]["references"] == COCO_CAPTIONS[11][1:]
    assert [(r["target_word"], r["foil_word"]) for r in rows] == [("horse", "cow"), ("beach", "boat"), ("cats", "dogs")]
    assert rows[0]["image_file"] == "COCO_val2014_000000000010.jpg" and rows[2]["image_id"] == 11
    assert [r["pair_id"] for r in rows] == [0, 1, 2]


def test_longcap_arena_stacks_testa_then_testb_perspective_by_perspective(tmp_path):
    rows = load_benchmark("longcap_arena", data_dir=write_longcap_arena(tmp_path / "arena")).to_list()
    assert [r["hub_split"] for r in rows[::3]] == list(LONGCAP_SCORES)
    assert [(r["test_set"], r["perspective"]) for r in rows[::3]] == [
        ("TestA", "desc"), ("TestA", "rel"), ("TestA", "flu"), ("TestB", "desc"), ("TestB", "rel"), ("TestB", "flu")]
    assert [r["score"] for r in rows] == [s for scores in LONGCAP_SCORES.values() for s in scores]
    assert [r["candidate"] for r in rows[:3]] == [c for _, c in LONGCAP_CAPTIONS]
    assert rows[2]["references"] == LONGCAP_REFS["sa_2.jpg"] and [r["row_id"] for r in rows] == list(range(18))


# --------------------------------------------------------------------------- where the data is looked for


@pytest.mark.parametrize("name, command", [
    ("polaris", "hf download yuwd/Polaris polaris_test.csv --repo-type dataset --local-dir {folder}"),
    ("nebula", 'hf download Ka2ukiMatsuda/Nebula --repo-type dataset --include "data/test-*" --local-dir {folder}'),
    ("foil", "foilv1.0_test_2017.json from the FOIL-COCO page (foilunitn.github.io), into {folder}"),
    ("longcap_arena", 'hf download Ka2ukiMatsuda/LongCap-Arena --repo-type dataset --include "data/dci_val.desc-*" '
                      '--local-dir {folder}'),
])
def test_offline_without_the_files_one_error_says_what_to_download_and_where(name, command, data_root):
    folder = data_root / name
    with pytest.raises(BenchmarkDataMissing) as error:
        load_benchmark(name)
    message = str(error.value)
    assert command.format(folder=folder) in message and f"in {folder}" in message and "--data" in message


def test_each_missing_file_is_named_and_present_ones_are_not(tmp_path):
    folder = write_nebula(tmp_path / "nebula")
    (folder / "spica_test.csv").unlink()
    with pytest.raises(BenchmarkDataMissing, match="1 is missing") as error:
        load_benchmark("nebula", data_dir=folder)
    assert "hiranohachiman/Spica spica_train.csv spica_val.csv spica_test.csv" in str(error.value)
    assert "Ka2ukiMatsuda/Nebula" not in str(error.value)
    assert load_benchmark("nebula", data_dir=folder, config="uncorrected").num_rows == 5  # needs no Spica
    with pytest.raises(BenchmarkDataMissing, match="2 are missing"):
        load_benchmark("foil", data_dir=tmp_path / "nowhere")


def test_online_the_hub_files_are_fetched_into_the_data_folder(tmp_path, data_root, monkeypatch):
    import huggingface_hub

    for variable in ("HF_HUB_OFFLINE", "CAPEVAL_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    source = write_nebula(tmp_path / "hub-copy")
    calls = []

    def download(repo_id, *, repo_type, allow_patterns, local_dir):
        calls.append((repo_id, repo_type, allow_patterns, local_dir))
        for pattern in allow_patterns:
            for path in source.glob(pattern):
                target = local_dir / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    assert load_benchmark("nebula").num_rows == 5
    assert calls == [("Ka2ukiMatsuda/Nebula", "dataset", ["data/test-*"], data_root / "nebula"),
                     ("hiranohachiman/Spica", "dataset", ["spica_train.csv", "spica_val.csv", "spica_test.csv"],
                      data_root / "nebula")]
    load_benchmark("nebula")
    assert len(calls) == 2  # the second load reads the folder

    def unreachable(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(BenchmarkDataMissing, match="downloading Polaris's test CSV from yuwd/Polaris failed "
                                                   r"\(OSError: no network\); hf download yuwd/Polaris"):
        load_benchmark("polaris")
    # FOIL is not on the Hub: nothing to fetch, the error says where its files come from.
    with pytest.raises(BenchmarkDataMissing, match="FOIL-COCO page"):
        load_benchmark("foil")


def test_data_dir_and_config_are_checked(tmp_path):
    with pytest.raises(ValueError, match="data_dir: benchmark 'thumb' ships with capeval; only amber, foil, longcap_arena, "
                                         "nebula, polaris are built"):
        load_benchmark("thumb", data_dir=tmp_path)
    with pytest.raises(ValueError, match="config 'raw': benchmark 'amber' has one config, 'default'"):
        load_benchmark("amber", data_dir=tmp_path, config="raw")
    with pytest.raises(ValueError, match="nebula has no config 'raw'; choose from \\['default', 'uncorrected'\\]"):
        load_benchmark("nebula", data_dir=tmp_path, config="raw")
    with pytest.raises(ValueError, match="not also as source"):
        load_benchmark("polaris", tmp_path, data_dir=tmp_path)


# --------------------------------------------------------------------------- bad input: one error naming file and row


def polaris_csv(folder, header, rows):
    write_csv(folder / "polaris_test.csv", header, rows)
    return folder


@pytest.mark.parametrize("header, rows, message", [
    (["mt", "score", "imgid"], [["a dog", 0.5, "p0.jpg"]],
     "polaris_test.csv: no column refs (it has mt, score, imgid; the released file has mt, refs, score, imgid)"),
    (["mt", "refs", "score", "imgid"], [["a dog", literal(["a"]), 0.5, "p0.jpg"], ["a cat", "a cat on a mat", 0.5, "p0.jpg"]],
     "polaris_test.csv row 2 (line 3): refs must be a non-empty list of reference captions (a Python list literal in "
     "the CSV), got 'a cat on a mat'"),
    (["mt", "refs", "score", "imgid"], [["a dog", "[1, 2]", 0.5, "p0.jpg"]], "row 1 (line 2): refs must be"),
    (["mt", "refs", "score", "imgid"], [["a dog", "[]", 0.5, "p0.jpg"]], "row 1 (line 2): refs must be"),
    (["mt", "refs", "score", "imgid"], [["a dog", literal(["a"]), "high", "p0.jpg"]],
     "row 1 (line 2): score must be a number, got 'high'"),
    (["mt", "refs", "score", "imgid"], [["", literal(["a"]), 0.5, "p0.jpg"]],
     "row 1 (line 2): mt is empty; every row needs its caption"),
    (["mt", "refs", "score", "imgid"], [["a dog", literal(["a"]), 0.5, ""]], "row 1 (line 2): the image file name is empty"),
], ids=["missing-column", "refs-not-a-list", "refs-not-captions", "refs-empty", "score", "empty-caption", "no-image"])
def test_a_malformed_polaris_csv_is_one_error_naming_file_and_row(tmp_path, header, rows, message):
    folder = polaris_csv(tmp_path / "polaris", header, rows)
    with pytest.raises(BenchmarkFileError) as error:
        load_benchmark("polaris", data_dir=folder)
    assert message in str(error.value) and str(folder / "polaris_test.csv") in str(error.value)


def test_an_image_missing_from_the_image_folder_is_named_with_its_row(tmp_path):
    folder = write_polaris(tmp_path / "polaris", images=True)
    assert load_benchmark("polaris", data_dir=folder).num_rows == 6
    (folder / "images" / "p1.jpg").unlink()
    with pytest.raises(BenchmarkFileError, match=r"polaris_test.csv row 3 \(line 4\): image p1.jpg is not in .*images"):
        load_benchmark("polaris", data_dir=folder)
    foil = write_foil(tmp_path / "foil", images=True)
    (foil / "images" / "COCO_val2014_000000000011.jpg").unlink()
    with pytest.raises(BenchmarkFileError, match="foilv1.0_test_2017.json annotation 5: image COCO_val2014_000000000011.jpg"):
        load_benchmark("foil", data_dir=foil)


def foil_with(tmp_path, annotations):
    return write_foil(tmp_path / "foil", annotations=annotations)


@pytest.mark.parametrize("annotations, message", [
    (FOIL_ANNOTATIONS[:4], "foilv1.0_test_2017.json annotation 4: FOIL pair id 2 has no foil caption; each id has one "
                           "original caption and its foils"),
    (FOIL_ANNOTATIONS[1:], "annotation 1: FOIL pair id 1 has no original caption"),
    (FOIL_ANNOTATIONS + [dict(FOIL_ANNOTATIONS[3])], "annotation 4: FOIL pair id 2 has 2 original captions"),
    ([{k: v for k, v in FOIL_ANNOTATIONS[0].items() if k != "foil"}], "annotation 1: no foil (a FOIL annotation has id"),
    ([dict(a, image_id=99) for a in FOIL_ANNOTATIONS[3:]], "annotation 1: image_id 99 is not among the file's images"),
], ids=["pair-without-foil", "pair-without-original", "two-originals", "annotation-field", "unknown-image"])
def test_a_malformed_foil_file_is_one_error_naming_the_annotation(tmp_path, annotations, message):
    with pytest.raises(BenchmarkFileError) as error:
        load_benchmark("foil", data_dir=foil_with(tmp_path, annotations))
    assert message in str(error.value)


def test_foil_needs_other_coco_references_and_coco_and_json_forms(tmp_path):
    folder = write_foil(tmp_path / "foil")
    coco = json.loads((folder / "captions_val2014.json").read_text())
    coco["annotations"] = [a for a in coco["annotations"] if a["image_id"] != 11 or a["caption"] == "two cats sleep on a bed"]
    (folder / "captions_val2014.json").write_text(json.dumps(coco))
    with pytest.raises(BenchmarkFileError, match="annotation 4: captions_val2014.json has no reference of image 11 besides"):
        load_benchmark("foil", data_dir=folder)
    (folder / "captions_val2014.json").write_text("[]")
    with pytest.raises(BenchmarkFileError, match="captions_val2014.json is not a COCO captions file"):
        load_benchmark("foil", data_dir=folder)
    (folder / "captions_val2014.json").write_text("{not json")
    with pytest.raises(BenchmarkFileError, match="captions_val2014.json is not JSON"):
        load_benchmark("foil", data_dir=folder)


def test_a_parquet_shard_without_a_released_column_is_named(tmp_path):
    from fixtures.released import write_hub_parquet

    folder = write_longcap_arena(tmp_path / "arena")
    shard = folder / "data" / "dci_test.rel-00000-of-00001.parquet"
    write_hub_parquet(shard, [{"file_name": "sa_1.jpg", "refs": ["r"], "caption": "c", "score": 0.5}],
                      {"file_name": datasets.Value("string"), "refs": datasets.List(datasets.Value("string")),
                       "caption": datasets.Value("string"), "score": datasets.Value("float64")})
    with pytest.raises(BenchmarkFileError, match=r"dci_test.rel-00000-of-00001.parquet: no column cand \(it has file_name, "
                                                 r"refs, caption, score; the released file has file_name, refs, cand, score\)"):
        load_benchmark("longcap_arena", data_dir=folder)


def test_embedded_images_are_extracted_where_image_metrics_read_them(tmp_path):
    from capeval.benchmarks.rowsets import prepare

    folder = write_nebula(tmp_path / "nebula")
    (folder / "spica_test.csv").unlink()  # the images need only the test shards
    assert prepare("nebula", folder, scores="uncorrected").images_dir is None
    images = extract_images("nebula", data_dir=folder)
    assert sorted(p.name for p in images.iterdir()) == ["n0.jpg", "n1.jpg", "n2.jpg"]
    assert (images / "n0.jpg").read_bytes() == image_bytes()
    (images / "n1.jpg").write_bytes(b"kept")
    extract_images("nebula", data_dir=folder)
    assert (images / "n1.jpg").read_bytes() == b"kept"
    assert prepare("nebula", folder, scores="uncorrected").images_dir == str(images)
    arena = extract_images("longcap_arena", data_dir=write_longcap_arena(tmp_path / "arena"))
    assert sorted(p.name for p in arena.iterdir()) == ["sa_1.jpg", "sa_2.jpg"]
    with pytest.raises(ValueError, match="polaris's released files do not embed its images; image metrics need images.tar.gz"):
        extract_images("polaris", data_dir=tmp_path)
    with pytest.raises(ValueError, match="without its Parquet shards"):
        extract_images("nebula", data_dir=write_nebula(tmp_path / "deneb", layout="csv"))


def test_present_looks_for_the_files_without_downloading(tmp_path):
    from capeval.benchmarks.released import present

    assert present("polaris", tmp_path / "polaris") is False
    assert present("polaris", write_polaris(tmp_path / "polaris")) is True


def test_the_hub_folder_is_written_again_over_itself(tmp_path):
    folder = write_nebula(tmp_path / "nebula")
    out = write_hub_folder("nebula", tmp_path / "hub" / "nebula", data_dir=folder)
    assert write_hub_folder("nebula", out, data_dir=folder) == out
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet")) == [
        "data/test-00000-of-00001.parquet", "uncorrected/test-00000-of-00001.parquet"]


def test_a_parquet_row_is_named_by_its_shard_and_row(tmp_path):
    rows = [row if k != 4 else (row[0], [], row[2], row[3]) for k, row in enumerate(NEBULA)]
    folder = write_nebula(tmp_path / "nebula", rows=rows)
    with pytest.raises(BenchmarkFileError, match=r"test-00001-of-00002-9b8d7e.parquet row 2: refs must be a non-empty list"):
        load_benchmark("nebula", data_dir=folder, config="uncorrected")


@pytest.mark.parametrize("drop, message", [
    ("caption", "captions_val2014.json annotation 2: needs image_id and caption"),
    ("image_id", "captions_val2014.json annotation 2: needs image_id and caption"),
])
def test_a_coco_annotation_without_its_fields_is_named(tmp_path, drop, message):
    folder = write_foil(tmp_path / "foil")
    coco = json.loads((folder / "captions_val2014.json").read_text())
    del coco["annotations"][1][drop]
    (folder / "captions_val2014.json").write_text(json.dumps(coco))
    with pytest.raises(BenchmarkFileError, match=message):
        load_benchmark("foil", data_dir=folder)


@pytest.mark.parametrize("content", [[], {"annotations": []}, {"images": [], "annotations": {}}],
                         ids=["a-list", "no-images", "annotations-not-a-list"])
def test_a_foil_file_without_images_and_annotations_lists_is_refused(tmp_path, content):
    folder = write_foil(tmp_path / "foil")
    (folder / "foilv1.0_test_2017.json").write_text(json.dumps(content))
    with pytest.raises(BenchmarkFileError, match="foilv1.0_test_2017.json is not the FOIL test file"):
        load_benchmark("foil", data_dir=folder)
