"""lmms-eval's logged samples (``lmms-eval --log_samples``) as the caption rows ``capeval score`` scores, so a run a
lab already has gets PAC-S, CHAIR or a judge without generating its captions again.

lmms-eval writes one ``<date>_samples_<task>.jsonl`` per task, one JSON object a line (read from its
``EvaluationTracker.save_results_samples`` and ``evaluator``; versions 0.2.4 to 0.7.x): ``doc_id``, ``target`` (the
task's target, as ``str()``), ``filtered_resps`` (the model's answer after the task's filters: a string in 0.7.x, a
list of one string before), ``input`` (the prompt), ``doc_hash``, ``resps`` only where it differs, ``doc`` (the
document's text fields) up to 0.3.x only, and, under each metric's name, what the task's ``process_results`` returned
for the sample. The caption tasks (``coco_cap`` and its ``coco2014_cap_*``/``coco2017_cap_*`` splits, ``nocaps``,
``flickr30k``, ``textcaps``, ``detailcaps``) log ``{"answer": [references], "pred": caption, "image_id": id}`` under
each of their metrics; ``coco_cap_chair`` logs the image's COCO objects as ``answer`` (no reference captions), the
test splits ``{"pred", "image_id"}`` alone, and ``amber_g`` AMBER's counts (its image's id only where ``doc`` is
logged). The caption scored is ``filtered_resps``, what lmms-eval's own metrics scored.

Every problem is one :class:`~capeval.caption_files.CaptionFileError` line naming the file and the line.

>>> import json, tempfile, pathlib
>>> entry = {"answer": ["A dog on grass.", "A brown dog."], "pred": "a dog runs", "image_id": 42}
>>> line = {"doc_id": 0, "target": str(entry["answer"]), "filtered_resps": "a dog runs", "input": "Caption it.",
...         "doc_hash": "0f1e", "coco_Bleu_4": entry, "coco_CIDEr": entry}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "20250101_000000_samples_coco2017_cap_val.jsonl"
>>> _ = path.write_text(json.dumps(line) + "\\n")
>>> logged = read_lmms_samples(path)
>>> logged.task, logged.rows
('coco2017_cap_val', [{'doc_id': 0, 'candidate': 'a dog runs', 'references': ['A dog on grass.', 'A brown dog.'], 'image_id': 42}])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...caption_files import CaptionFileError, caption_text, read_json
from ...vision.images import coco_image_id

#: The fields lmms-eval writes for every sample; the others are the task's per-sample metric entries.
SAMPLE_FIELDS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "input", "doc_hash",
                           "prompt_hash", "target_hash", "token_counts", "input_media"})
#: Those a sample cannot be scored without.
REQUIRED_FIELDS = ("doc_id", "filtered_resps")
#: The caption tasks whose samples are read (and their splits), for messages.
CAPTION_TASKS = "coco_cap, nocaps, flickr30k, textcaps, detailcaps, coco_cap_chair, amber_g"
#: AMBER's generative entries: counts, no caption or id.
AMBER_ENTRY = "amber_chair"


@dataclass
class LoggedSamples:
    """One task's logged samples: ``rows`` as ``capeval score`` takes them (``doc_id``, ``candidate``,
    ``references`` — empty where the task logs none — and ``image_id`` where it is logged)."""

    task: str
    rows: list[dict]


def task_of(path: Path) -> str:
    """The task lmms-eval named the file after (``<date>_samples_<task>.jsonl``), else the file's name.

    >>> task_of(Path("logs/llava/20250101_120000_samples_nocaps_val.jsonl")), task_of(Path("mine.jsonl"))
    ('nocaps_val', "'mine.jsonl' (not named *_samples_<task>.jsonl)")
    """
    found = re.search(r"_samples_(.+)\.jsonl$", path.name)
    return found.group(1) if found else f"{path.name!r} (not named *_samples_<task>.jsonl)"


def sample_lines(path: Path) -> list[dict]:
    """The file's JSON objects, one a line; a line that is not one is a CaptionFileError naming it."""
    if path.is_file() and not path.read_bytes().strip():
        raise CaptionFileError(f"{path}: empty: no logged samples")
    values = read_json(path)
    if isinstance(values, dict) and {"results", "configs"} <= set(values):
        raise CaptionFileError(f"{path}: lmms-eval's aggregated results, not its logged samples: pass the "
                               "<date>_samples_<task>.jsonl that --log_samples wrote beside it")
    values = values if isinstance(values, list) else [values]
    for number, value in enumerate(values, 1):
        if not isinstance(value, dict):
            raise CaptionFileError(f"{path}:{number}: {type(value).__name__}, not a logged sample (a JSON object a line)")
        missing = [field for field in REQUIRED_FIELDS if field not in value]
        if missing:
            raise CaptionFileError(f"{path}:{number}: no {' or '.join(repr(field) for field in missing)}: not a sample "
                                   "lmms-eval's --log_samples writes (doc_id, target, filtered_resps, ...)")
    return values


def caption_entry(entries: dict) -> dict | None:
    """The entry a caption task logs (``pred`` with ``image_id`` or ``answer``), or AMBER's; ``None`` for other tasks."""
    for value in entries.values():
        if isinstance(value, dict) and "pred" in value and ("image_id" in value or "answer" in value):
            return value
    amber = entries.get(AMBER_ENTRY)
    return amber if isinstance(amber, dict) else None


def response(value: Any, where: str) -> str:
    """The caption in ``filtered_resps``: a string (0.7.x) or a list of one (earlier versions)."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list):
        raise CaptionFileError(f"{where}: {len(value)} responses in 'filtered_resps' (lmms-eval's repeats): capeval "
                               "scores one caption per sample")
    return caption_text(value, f"{where} 'filtered_resps'")


def references_of(entry: dict, where: str) -> list[str]:
    """The reference captions a caption entry logs: ``answer`` beside a caption ``pred`` (coco_cap_chair's ``answer``
    is the image's objects, its ``pred`` the caption's: no references), ``[]`` where there is none."""
    answer = entry.get("answer")
    if answer is None or not isinstance(entry.get("pred"), str):
        return []
    answer = [answer] if isinstance(answer, str) else answer
    if not isinstance(answer, list):
        raise CaptionFileError(f"{where}: 'answer' is {type(answer).__name__}, expected the reference captions (a list)")
    return [caption_text(reference, f"{where} reference {j}") for j, reference in enumerate(answer, 1)]


def image_id_of(entry: dict, sample: dict, where: str) -> Any:
    """The image's id: the entry's ``image_id``, else (AMBER) the logged document's ``question_id``; ``None`` when the
    sample names no image."""
    doc = sample.get("doc")
    image_id = entry["image_id"] if "image_id" in entry else doc.get("question_id") if isinstance(doc, dict) else None
    if image_id is not None and (isinstance(image_id, bool) or not isinstance(image_id, (str, int))):
        raise CaptionFileError(f"{where}: image id {image_id!r}, expected a number or a file name")
    return image_id


def read_lmms_samples(path: str | Path) -> LoggedSamples:
    """A ``--log_samples`` file of one lmms-eval caption task as caption rows, in the file's order.

    A file of another task (VQA, MME, ...), of several tasks or runs, or with a line lmms-eval would not write is a
    :class:`~capeval.caption_files.CaptionFileError` (one line).
    """
    path = Path(path)
    task = task_of(path)
    samples = sample_lines(path)
    first_entries = sorted(set(samples[0]) - SAMPLE_FIELDS)
    if caption_entry({key: samples[0][key] for key in first_entries}) is None:
        logged = ", ".join(first_entries[:4]) or "no metric entries"
        raise CaptionFileError(f"{path}: the samples of {task} are no caption task's: they log {logged}, none with the "
                               f"'pred' and 'image_id' or 'answer' that lmms-eval's caption tasks log ({CAPTION_TASKS})")
    rows: list[dict] = []
    first_line: dict[int | str, int] = {}
    for number, sample in enumerate(samples, 1):
        where = f"{path}:{number}"
        entries = sorted(set(sample) - SAMPLE_FIELDS)
        if entries != first_entries:
            raise CaptionFileError(f"{where}: another task's sample (it logs {', '.join(entries) or 'no metric entries'}, "
                                   f"line 1 {', '.join(first_entries)}): one task's samples per file, as lmms-eval writes them")
        doc_id = sample["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
            raise CaptionFileError(f"{where}: doc_id {doc_id!r}, expected the document's index")
        if doc_id in first_line:
            raise CaptionFileError(f"{where}: doc_id {doc_id!r} again (first on line {first_line[doc_id]}): one run's "
                                   "samples per file, as lmms-eval writes them")
        first_line[doc_id] = number
        entry = caption_entry({key: sample[key] for key in entries})
        if entry is None:  # the same keys as line 1, whose entry was a caption task's: this line's is not a dict
            raise CaptionFileError(f"{where}: its metric entries are not the {{'pred', 'image_id'}} objects line 1 logs")
        row = {"doc_id": doc_id, "candidate": response(sample["filtered_resps"], where), "references": references_of(entry, where)}
        image_id = image_id_of(entry, sample, where)
        rows.append(row if image_id is None else {**row, "image_id": image_id})
    return LoggedSamples(task, rows)


def image_files(ids: list, folder: str | Path) -> list[str]:
    """The file in ``folder`` of each image id: the id itself as a file name, ``<id>.<ext>``, or (an integer id) the
    COCO file of that id (``COCO_val2014_000000391895.jpg``, ``000000391895.jpg``); a CaptionFileError
    naming the ids with no file, or with more than one."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CaptionFileError(f"--images {folder}: no such folder")
    by_key: dict[str, list[str]] = {}
    for file in sorted(folder.iterdir()):
        keys = {file.name, file.stem}
        if (coco_id := coco_image_id(file.name)) is not None:
            keys.add(str(coco_id))
        for key in keys:
            by_key.setdefault(key, []).append(file.name)
    found = {image_id: sorted(set(by_key.get(str(image_id), []))) for image_id in ids}
    missing = [image_id for image_id, names in found.items() if not names]
    if missing:
        raise CaptionFileError(f"--images {folder}: no file for {len(missing)} image id(s), e.g. {missing[:3]} (looked for "
                               "<id>, <id>.<ext> and the id's COCO file name)")
    several = next(((image_id, names) for image_id, names in found.items() if len(names) > 1), None)
    if several:
        raise CaptionFileError(f"--images {folder}: image id {several[0]!r} names {len(several[1])} files {several[1][:3]}: "
                               "keep one")
    return [found[image_id][0] for image_id in ids]
