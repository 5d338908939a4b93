"""Small stand-ins for the released benchmark files, written in the released layouts:

- Polaris: ``polaris_test.csv`` with the columns the Polos ``validate/dataset.py`` loader reads (``mt``, ``refs``
  as a Python-literal list, ``score``, ``imgid`` naming a file of ``images/``);
- Nebula: the Hub's ``data/test-*.parquet`` shards (``file_name``, ``image`` embedded, ``refs``, ``mt``,
  ``human_score``, as the ``Ka2ukiMatsuda/Nebula`` card declares) or DENEB's ``nebula_test.csv``, and Spica's
  ``spica_{train,val,test}.csv`` (``mt``, ``refs``, ``score``, ``imgid``, as Pearl's loader reads);
- FOIL: ``foilv1.0_test_2017.json`` (COCO layout: ``images``, ``annotations`` with ``id``, ``image_id``,
  ``caption``, ``foil``, ``target_word``, ``foil_word``, the fields the Polos ``compute_foil.py`` and other FOIL
  loaders read) and COCO's ``captions_val2014.json``;
- LongCap-Arena: ``data/<split>-*.parquet`` for the ``dci_val`` and ``dci_test`` splits (``file_name``,
  ``image``, ``refs`` a list, ``cand``, ``score``, as the ``Ka2ukiMatsuda/LongCap-Arena`` card declares).

The captions are made up; the human scores are chosen so that hand-computed statistics are easy.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

POLARIS = [  # (mt, refs, score, imgid)
    ("a dog runs on the grass", ["a dog running on grass", "a brown dog in a park"], 1.0, "p0.jpg"),
    ("a dog", ["a dog running on grass", "a brown dog in a park"], 0.25, "p0.jpg"),
    ("two men ride horses on a beach by the sea", ["two people riding horses by the sea", "men on horseback"], 0.75,
     "p1.jpg"),
    ("horses", ["two people riding horses by the sea", "men on horseback"], 0.5, "p1.jpg"),
    ("a red bus on a city street", ["a red double decker bus", "a bus drives down a street"], 0.75, "p2.jpg"),
    ("it's a bus", ["a red double decker bus", "a bus drives down a street"], 0.0, "p2.jpg"),
]


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def literal(refs: list[str]) -> str:
    """A list as the released CSVs store it: its Python literal (``str(list)``, as pandas writes a list cell)."""
    return str(refs)


def write_polaris(folder: Path, rows=POLARIS, images: bool = False) -> Path:
    write_csv(folder / "polaris_test.csv", ["mt", "refs", "score", "imgid"],
              [[mt, literal(refs), score, imgid] for mt, refs, score, imgid in rows])
    if images:
        for imgid in {row[3] for row in rows}:
            write_image(folder / "images" / imgid)
    return folder


def image_bytes() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 30)).save(out, format="JPEG")
    return out.getvalue()


def write_image(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image_bytes())


def write_hub_parquet(path: Path, records: list[dict], features: dict) -> Path:
    """Parquet as ``push_to_hub`` writes it: the dataset's features (embedded images) in the schema."""
    import datasets

    path.parent.mkdir(parents=True, exist_ok=True)
    dataset = datasets.Dataset.from_list(records, features=datasets.Features(features))
    dataset.to_parquet(str(path))
    return path


def nebula_features() -> dict:
    import datasets

    return {"file_name": datasets.Value("string"), "image": datasets.Image(), "refs": datasets.List(datasets.Value("string")),
            "mt": datasets.Value("string"), "human_score": datasets.Value("float64")}


NEBULA = [  # (file_name, refs, mt, human_score)
    ("n0.jpg", ["a cat on a sofa", "a cat sleeping"], "a cat sleeps on a sofa", 0.5),
    ("n0.jpg", ["a cat on a sofa", "a cat sleeping"], "a dog on a sofa", 0.75),
    ("n1.jpg", ["a plate of food", "pasta on a plate"], "a plate of pasta", 0.25),
    ("n1.jpg", ["a plate of food", "pasta on a plate"], "a  plate of rice", 1.0),
    ("n2.jpg", ["a man surfing a wave"], "a man surfing", 0.0),
]
#: Spica rows (split file, imgid, mt, score): n0's dog caption is corrected to 0.0 (mean of two splits' 0.0 and
#: 0.0), n1's rice caption (whitespace differs) to 0.0, the other rows have no Spica match.
SPICA = [
    ("spica_train.csv", "n0.jpg", "a dog on a sofa", 0.0),
    ("spica_test.csv", "n0", "a dog on a sofa", 0.0),
    ("spica_val.csv", "n1.jpg", "a plate of rice", 0.0),
    ("spica_val.csv", "other.jpg", "a cat sleeps on a sofa", 0.9),
]


def write_nebula(folder: Path, rows=NEBULA, spica=SPICA, layout: str = "hub") -> Path:
    """Nebula's test split in the Hub layout (two Parquet shards, named as ``push_to_hub`` names them) or
    DENEB's ``nebula_test.csv``, plus Spica's three CSVs."""
    if layout == "hub":
        records = [{"file_name": f, "image": {"bytes": image_bytes(), "path": f}, "refs": refs, "mt": mt,
                    "human_score": score} for f, refs, mt, score in rows]
        write_hub_parquet(folder / "data" / "test-00000-of-00002-3f2a1c.parquet", records[:3], nebula_features())
        write_hub_parquet(folder / "data" / "test-00001-of-00002-9b8d7e.parquet", records[3:], nebula_features())
    else:
        write_csv(folder / "nebula_test.csv", ["mt", "refs", "score", "imgid"],
                  [[mt, literal(refs), score, f] for f, refs, mt, score in rows])
    for name in ("spica_train.csv", "spica_val.csv", "spica_test.csv"):
        write_csv(folder / name, ["mt", "refs", "score", "imgid"],
                  [[mt, literal(["a reference"]), score, imgid] for file, imgid, mt, score in spica if file == name])
    return folder


#: FOIL test annotations: id 1 (image 10) has two foils, id 2 (image 11) one; COCO has 5 captions per image,
#: the original caption among them.
COCO_CAPTIONS = {10: ["a man rides a horse on a beach", "a person riding a horse", "a horse on the sand",
                      "a rider and his horse", "a man on a horse near the ocean"],
                 11: ["two cats sleep on a bed", "cats on a bed", "a pair of cats resting",
                      "two cats lying on a blanket", "kittens asleep on a bed"]}
FOIL_ANNOTATIONS = [
    {"id": 1, "image_id": 10, "caption": "a man rides a horse on a beach", "foil": False, "target_word": "ORIG",
     "foil_word": "ORIG", "foil_id": 100},
    {"id": 1, "image_id": 10, "caption": "a man rides a cow on a beach", "foil": True, "target_word": "horse",
     "foil_word": "cow", "foil_id": 101},
    {"id": 1, "image_id": 10, "caption": "a man rides a horse on a boat", "foil": True, "target_word": "beach",
     "foil_word": "boat", "foil_id": 102},
    {"id": 2, "image_id": 11, "caption": "two cats sleep on a bed", "foil": False, "target_word": "ORIG",
     "foil_word": "ORIG", "foil_id": 200},
    {"id": 2, "image_id": 11, "caption": "two dogs sleep on a bed", "foil": True, "target_word": "cats",
     "foil_word": "dogs", "foil_id": 201},
]
FOIL_IMAGES = [{"id": 10, "file_name": "COCO_val2014_000000000010.jpg"},
               {"id": 11, "file_name": "COCO_val2014_000000000011.jpg"}]


def write_foil(folder: Path, annotations=FOIL_ANNOTATIONS, images: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "foilv1.0_test_2017.json").write_text(json.dumps({"info": {}, "licenses": [], "images": FOIL_IMAGES,
                                                                "annotations": annotations}))
    coco = {"images": [{"id": i, "file_name": f"COCO_val2014_{i:012d}.jpg"} for i in COCO_CAPTIONS],
            "annotations": [{"image_id": i, "id": 1000 * i + k, "caption": c}
                            for i, captions in COCO_CAPTIONS.items() for k, c in enumerate(captions)]}
    (folder / "captions_val2014.json").write_text(json.dumps(coco))
    if images:
        for image in FOIL_IMAGES:
            write_image(folder / "images" / image["file_name"])
    return folder


def longcap_features() -> dict:
    import datasets

    return {"file_name": datasets.Value("string"), "image": datasets.Image(), "refs": datasets.List(datasets.Value("string")),
            "cand": datasets.Value("string"), "score": datasets.Value("float64")}


#: Per LongCap-Arena split, (file_name, cand, score); every split holds the same three captions of two images.
LONGCAP_CAPTIONS = [("sa_1.jpg", "A wide kitchen with white cabinets, a steel fridge and a window over the sink."),
                    ("sa_1.jpg", "A kitchen."),
                    ("sa_2.jpg", "A street at night with wet asphalt reflecting red and green lights of the shops.")]
LONGCAP_SCORES = {"dci_val.desc": [1.0, 0.25, 0.75], "dci_val.rel": [0.75, 1.0, 0.5], "dci_val.flu": [1.0, 0.5, 0.75],
                  "dci_test.desc": [0.5, 0.0, 1.0], "dci_test.rel": [1.0, 0.75, 0.25], "dci_test.flu": [0.25, 0.5, 1.0]}
LONGCAP_REFS = {"sa_1.jpg": ["A bright kitchen with white cabinets, a stainless steel refrigerator and a window."],
                "sa_2.jpg": ["A city street at night, the wet road reflecting the lights of shops."]}


def write_longcap_arena(folder: Path) -> Path:
    for split, scores in LONGCAP_SCORES.items():
        records = [{"file_name": f, "image": {"bytes": image_bytes(), "path": f}, "refs": LONGCAP_REFS[f], "cand": cand,
                    "score": score} for (f, cand), score in zip(LONGCAP_CAPTIONS, scores)]
        write_hub_parquet(folder / "data" / f"{split}-00000-of-00001.parquet", records, longcap_features())
    return folder
