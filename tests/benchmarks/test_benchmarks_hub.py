"""Every Hub dataset folder loads offline with datasets.load_dataset and matches its card."""

import datasets
import numpy as np
import pytest
import yaml

from capeval.benchmarks import BENCHMARKS
from capeval.benchmarks import attach_images
from capeval.benchmarks import hub_dir
from capeval.benchmarks import load_benchmark
from capeval.benchmarks import prepare

ROWS = {"flickr8k_expert": 5822, "flickr8k_cf": 47830, "composite": 11985, "pascal50s": 4000, "capeval1k": 1000,
        "thumb": 2500}


def card(name):
    return yaml.safe_load((hub_dir() / name / "README.md").read_text(encoding="utf-8").split("---\n")[1])


@pytest.mark.parametrize("name", sorted(name for name, spec in BENCHMARKS.items() if spec.bundled))
def test_folder_loads_offline_and_matches_its_card(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset(str(hub_dir() / name), split="test")
    meta = card(name)
    split = meta["dataset_info"]["splits"][0]
    assert ds.num_rows == ROWS[name] == split["num_examples"]
    assert split["num_bytes"] > 0 and meta["dataset_info"]["download_size"] > 0
    assert list(ds.features) == [f["name"] for f in meta["dataset_info"]["features"]]
    assert isinstance(ds.features["image"], datasets.Image) and ds[0]["image"] is None and ds[0]["image_file"]
    assert meta["configs"][0]["data_files"][0]["path"] == "data/test-*.parquet"
    assert meta["license"] and "## Citation" in (hub_dir() / name / "README.md").read_text(encoding="utf-8")


def test_flickr8k_expert_p1_is_bert_tbr_row_set():
    ds = load_benchmark("flickr8k_expert")
    assert sum(ds["is_self_caption"]) == 158
    p1 = prepare("flickr8k_expert")
    assert len(p1.items) == 5664 and all(len(refs) == 5 for refs in p1.items.references)
    # BERT-TBR's flickr.json item 0 and 1 (verified in full at build time).
    assert p1.items.candidates[1] == "A girl wearing a yellow shirt and sunglasses smiles ."
    assert p1.correlations[0].human[1] == pytest.approx(4 / 3)
    assert p1.items.references[0][0] == "A blond woman in a blue shirt appears to wait for a ride ."
    p2 = p1.correlations[1]
    assert len(p2.human) == 16992 and np.array_equal(p2.item[:6], [0, 0, 0, 1, 1, 1])
    assert len(prepare("flickr8k_expert", include_self_captions=True).items) == 5822


def test_protocol_options():
    cf = prepare("flickr8k_cf")
    # CLIPScore removes every judged own caption from its image's references (no image has more than one).
    assert len(cf.items) == 47830 and sorted({len(r) for r in cf.items.references}) == [3, 4, 5]
    assert len(prepare("flickr8k_cf", include_self_captions=False).items) == 47109
    composite = prepare("composite")
    with_refs = [r for r in composite.items.references if r is not None]
    assert len(with_refs) == 2991 and sum(len(r) == 4 for r in with_refs) == 998
    kept = prepare("composite", candidate_reference="keep")
    assert all(len(r) == 5 for r in kept.items.references if r is not None)
    first5 = prepare("pascal50s")
    random5 = prepare("pascal50s", refs="random5:7")
    assert first5.items.references[0] != random5.items.references[0]
    # The seed draws 5 of the 50 per image, in image order, kept in their original order.
    all50 = prepare("pascal50s", refs="all").items.references[0]
    drawn = sorted(np.random.default_rng(7).choice(50, 5, replace=False))
    assert random5.items.references[0] == [all50[k] for k in drawn]
    assert random5.items.references == prepare("pascal50s", refs="random5:7").items.references
    assert len(prepare("pascal50s", refs="all").items.references[0]) == 50
    with pytest.raises(ValueError, match="random5"):
        prepare("pascal50s", refs="random5")
    assert len(prepare("capeval1k", fully_decoded_only=True).items) == 969
    assert len(prepare("thumb", include_human=False).items) == 2000


def test_attach_images_fills_the_optional_column(tmp_path):
    from PIL import Image

    ds = load_benchmark("capeval1k").select(range(2))
    with pytest.raises(FileNotFoundError, match="2 image"):
        attach_images(ds, tmp_path)
    for name in ds["image_file"]:
        Image.new("RGB", (4, 4), "red").save(tmp_path / name)
    assert attach_images(ds, tmp_path)[0]["image"].size == (4, 4)


def test_unknown_benchmark():
    with pytest.raises(ValueError, match="unknown benchmark"):
        prepare("flickr30k")
