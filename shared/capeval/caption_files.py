"""Caption files that ``capeval score`` reads: JSON lines of candidates with references, or the COCO caption
format (a results file of ``{image_id, caption}`` and the dataset's annotations, several captions per image).

Every problem raises :class:`CaptionFileError` with a one-line message naming the file and the place.

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "res.json").write_text(json.dumps([{"image_id": 7, "caption": "a dog runs"}]))
>>> _ = (folder / "ann.json").write_text(json.dumps({"annotations": [{"image_id": 7, "caption": "A dog running."},
...                                                                   {"image_id": 7, "caption": "a brown dog"}]}))
>>> read_coco(folder / "res.json", folder / "ann.json")
[{'image_id': 7, 'candidate': 'a dog runs', 'references': ['A dog running.', 'a brown dog']}]
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


class CaptionFileError(ValueError):
    """A caption file that cannot be read as asked (missing, not JSON, wrong keys, unknown ids, empty captions)."""


def read_json(path: str | Path) -> Any:
    """A JSON document, or JSON lines (one value per non-blank line) when the file is not one document."""
    path = Path(path)
    if path.is_dir():
        raise CaptionFileError(f"{path}: a folder, not a JSON file")
    if not path.is_file():
        raise CaptionFileError(f"{path}: no such file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CaptionFileError(f"{path}: not UTF-8 text (byte {error.start}): is it a JSON file?") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as whole:
        lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not lines or (len(lines) == 1 and whole.lineno > 1):
            raise CaptionFileError(f"{path}: not JSON ({whole.msg} at line {whole.lineno}, column {whole.colno})") from None
        values = []
        for number, line in lines:
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise CaptionFileError(f"{path}:{number}: not JSON ({error.msg} at column {error.colno})") from None
        return values


def caption_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CaptionFileError(f"{where}: caption is {type(value).__name__}, expected a string")
    if not value.strip():
        raise CaptionFileError(f"{where}: empty caption")
    return value


def read_rows(path: str | Path) -> list[dict]:
    """JSON lines (or a JSON list) of ``{"candidate": str, "references": [str, ...]}``, other keys kept."""
    rows = read_json(path)
    rows = rows if isinstance(rows, list) else [rows]
    if not all(isinstance(row, dict) for row in rows):
        raise CaptionFileError(f"{path}: expected JSON objects with 'candidate' and 'references'")
    if not rows:
        raise CaptionFileError(f"{path}: no rows")
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict) or "candidate" not in row or "references" not in row:
            raise CaptionFileError(f"{path}:{i}: each row needs 'candidate' and 'references' "
                                   "(for COCO-format results use --results with --annotations)")
        caption_text(row["candidate"], f"{path}:{i}")
        references = [row["references"]] if isinstance(row["references"], str) else row["references"]
        if not isinstance(references, list) or not references:
            raise CaptionFileError(f"{path}:{i}: 'references' must be a non-empty list of strings")
        row["references"] = [caption_text(r, f"{path}:{i} reference {j}") for j, r in enumerate(references, 1)]
        human = row.get("human_score")
        if human is not None and (isinstance(human, bool) or not isinstance(human, (int, float)) or not math.isfinite(human)):
            raise CaptionFileError(f"{path}:{i}: 'human_score' must be a number, got {human!r}")
    return rows


def read_coco(results_path: str | Path, annotations_path: str | Path) -> list[dict]:
    """Rows ``{image_id, candidate, references}`` in results order: each result's caption against every
    annotation caption of its image, as the COCO caption evaluation pairs them."""
    results = read_json(results_path)
    if isinstance(results, dict) and "caption" in results:  # JSON lines with one result read as one document
        results = [results]
    if not isinstance(results, list) or not results:
        raise CaptionFileError(f"{results_path}: expected a non-empty list of {{'image_id', 'caption'}} (COCO results format)")
    document = read_json(annotations_path)
    annotations = document.get("annotations") if isinstance(document, dict) else document
    if not isinstance(annotations, list) or not annotations:
        raise CaptionFileError(f"{annotations_path}: no 'annotations' list (COCO captions format)")
    # COCO's "images" table names each image's file, for metrics that read the images.
    file_names = {image.get("id"): image.get("file_name") for image in document.get("images") or []
                  if isinstance(image, dict)} if isinstance(document, dict) else {}
    references: dict[Any, list[str]] = {}
    for i, annotation in enumerate(annotations, 1):
        if not isinstance(annotation, dict) or "image_id" not in annotation or "caption" not in annotation:
            raise CaptionFileError(f"{annotations_path}: annotation {i} needs 'image_id' and 'caption'")
        references.setdefault(annotation["image_id"], []).append(
            caption_text(annotation["caption"], f"{annotations_path}: annotation {i} (image {annotation['image_id']})"))
    rows, seen = [], set()
    for i, result in enumerate(results, 1):
        if not isinstance(result, dict) or "image_id" not in result or "caption" not in result:
            raise CaptionFileError(f"{results_path}: result {i} needs 'image_id' and 'caption'")
        image_id = result["image_id"]
        if image_id in seen:
            raise CaptionFileError(f"{results_path}: result {i}: image {image_id} has more than one caption")
        seen.add(image_id)
        if image_id not in references:
            unknown = [r.get("image_id") for r in results if isinstance(r, dict) and r.get("image_id") not in references]
            raise CaptionFileError(f"{results_path}: {len(unknown)} image id(s) not in {annotations_path}, e.g. {unknown[:5]}")
        rows.append({"image_id": image_id, "candidate": caption_text(result["caption"], f"{results_path}: result {i} (image {image_id})"),
                     "references": references[image_id], **({"image": file_names[image_id]} if file_names.get(image_id) else {})})
    return rows
