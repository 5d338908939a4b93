"""Composite's missing references, from the caption files a user has.

The bundled Composite has references only for its Flickr8k third (the Flickr8k captions ship with
capeval). The Flickr30k third (2,973 rows) and the COCO third (6,021 rows) need the Flickr30k captions
(``results_20130124.token``: ``<image>.jpg#<k>\\t<caption>`` lines, or the ``image_name| comment_number|
comment`` CSV) and the COCO captions annotation file (``captions_val2014.json``). With them attached,
reference-based metrics score all 11,985 rows, as the papers did.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

COCO_FILE = "captions_val2014.json"
FLICKR30K_FILES = ("results_20130124.token", "results.csv")


def read_coco_captions(path: str | os.PathLike) -> dict[str, list[str]]:
    """COCO captions annotation file → image file name → its captions (annotation order).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "captions.json"
    >>> _ = path.write_text(json.dumps({"images": [{"id": 7, "file_name": "COCO_val2014_000000000007.jpg"}],
    ...     "annotations": [{"image_id": 7, "id": 1, "caption": "A cat."}, {"image_id": 7, "id": 2, "caption": "A pet."}]}))
    >>> read_coco_captions(path)
    {'COCO_val2014_000000000007.jpg': ['A cat.', 'A pet.']}
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
        raise ValueError(f"{path} is not a COCO captions annotation file (no 'images' and 'annotations')")
    names = {image["id"]: image["file_name"] for image in data["images"]}
    captions: dict[str, list[str]] = {}
    for annotation in data["annotations"]:
        captions.setdefault(names[annotation["image_id"]], []).append(annotation["caption"].strip())
    return captions


def read_flickr30k_captions(path: str | os.PathLike) -> dict[str, list[str]]:
    """Flickr30k captions (``results_20130124.token`` or ``results.csv``) → image file name → its captions.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "results_20130124.token"
    >>> _ = path.write_text("36979.jpg#0\\tA group of friends .\\n36979.jpg#1\\tFriends play .\\n")
    >>> read_flickr30k_captions(path)
    {'36979.jpg': ['A group of friends .', 'Friends play .']}
    """
    captions: dict[str, list[str]] = {}
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip() or (number == 1 and line.startswith("image_name|")):
            continue
        if "\t" in line:
            image, _, caption = line.partition("\t")
            image = image.split("#")[0]
        elif line.count("|") >= 2:
            image, _, caption = (part.strip() for part in line.split("|", 2))
        else:
            raise ValueError(f"{path}:{number}: expected '<image>#<k>\\t<caption>' or '<image>| <k>| <caption>'")
        captions.setdefault(image.strip(), []).append(caption.strip())
    return captions


def normalized(text: str) -> str:
    """Lower case, letters and digits only: how a Composite candidate is found among its references."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def attach_references(dataset, coco: str | os.PathLike | None = None, flickr30k: str | os.PathLike | None = None):
    """Composite (a ``datasets.Dataset``) with the references of its COCO and Flickr30k rows filled from
    the caption files given; ``candidate_reference_index`` marks a human candidate found among them.

    >>> import datasets, tempfile
    >>> token_file = Path(tempfile.mkdtemp()) / "results_20130124.token"
    >>> _ = token_file.write_text("36979.jpg#0\\tA group of friends play a game .\\n36979.jpg#1\\tFriends play .\\n")
    >>> rows = datasets.Dataset.from_dict({"subset": ["flickr30k", "flickr30k"], "image_file": ["36979.jpg"] * 2,
    ...     "candidate": ["a group of friends play a game.", "people outside"], "references": [None, None],
    ...     "candidate_reference_index": [None, None]})
    >>> full = attach_references(rows, flickr30k=token_file)
    >>> full[0]["references"], list(full["candidate_reference_index"])
    (['A group of friends play a game .', 'Friends play .'], [0, None])
    """
    if coco is None and flickr30k is None:
        raise ValueError("attach_references needs coco= (captions_val2014.json) or flickr30k= (results_20130124.token)")
    sources = {}
    if coco is not None:
        sources["coco"] = read_coco_captions(coco)
    if flickr30k is not None:
        sources["flickr30k"] = read_flickr30k_captions(flickr30k)
    missing = {subset: sorted({f for s, f in zip(dataset["subset"], dataset["image_file"]) if s == subset} - set(found))
               for subset, found in sources.items()}
    missing = {subset: files for subset, files in missing.items() if files}
    if missing:
        raise ValueError("; ".join(f"{len(files)} Composite {subset} image(s) have no captions in the file given, "
                                   f"e.g. {files[:2]}" for subset, files in missing.items()))

    def fill(row):
        if row["subset"] in sources:
            references = sources[row["subset"]][row["image_file"]]
            own = [k for k, reference in enumerate(references) if normalized(reference) == normalized(row["candidate"])]
            row["references"], row["candidate_reference_index"] = references, (own[0] if own else None)
        return row

    return dataset.map(fill, desc="attaching references")


def composite_with_references(folder: str | os.PathLike):
    """The bundled Composite with the references found in ``folder`` (``captions_val2014.json`` and/or a
    Flickr30k captions file) attached."""
    from capeval.benchmarks.hub import load_benchmark

    folder = Path(folder)
    coco = folder / COCO_FILE
    flickr30k = next((folder / name for name in FLICKR30K_FILES if (folder / name).is_file()), None)
    if not coco.is_file() and flickr30k is None:
        raise FileNotFoundError(f"{folder} has neither {COCO_FILE} nor a Flickr30k captions file ({' or '.join(FLICKR30K_FILES)})")
    return attach_references(load_benchmark("composite"), coco=coco if coco.is_file() else None, flickr30k=flickr30k)
