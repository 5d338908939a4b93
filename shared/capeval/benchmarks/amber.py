"""AMBER's generative set (Wang et al., 2023) as a benchmark dataset, and its evaluation of a results file.

AMBER's annotations cannot ship with capeval (no package index carries them), so the dataset is built from AMBER's
own files: the released ones, downloaded once from the repository (:func:`capeval.scoring.amber.data_files`), or a
``data_dir`` holding them. One row per generative image: ``id``, ``image_file`` (``AMBER_<id>.jpg``), the prompt
``query``, and the ``truth`` and ``hallu`` object lists; the discriminative questions are left out.

A results file is what AMBER's ``inference.py`` reads: a JSON list of ``{"id": ..., "response": ...}``;
:func:`evaluate_results` scores its generative responses with the ``amber`` metric.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

from ..scoring.amber import AmberData, AmberScorer, data_files

#: The prompt of AMBER's generative task (``query_generative.json``).
GENERATIVE_QUERY = "Describe this image."
#: The corpus values ``capeval benchmark --dataset amber`` reports, with the names AMBER prints.
REPORTED = {"amber_chair": "CHAIR", "amber_cover": "Cover", "amber_hal": "Hal", "amber_cog": "Cog"}


def amber_features():
    import datasets

    words = datasets.List(datasets.Value("string"))
    return datasets.Features({"id": datasets.Value("int32"), "image_file": datasets.Value("string"),
                              "query": datasets.Value("string"), "truth": words, "hallu": words})


def amber_rows(data_dir: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """One row per generative image of AMBER's ``annotations.json`` (in ``data_dir``, or the released file)."""
    data = AmberData.load(data_files(data_dir))
    rows = []
    for image_id in data.generative_ids():
        entry = data.entry(image_id)
        rows.append({"id": image_id, "image_file": f"AMBER_{image_id}.jpg", "query": GENERATIVE_QUERY,
                     "truth": list(entry.truth), "hallu": list(entry.hallu)})
    return rows


def build_amber(data_dir: str | os.PathLike | None = None):
    """AMBER's generative set as a ``datasets.Dataset`` (what ``load_benchmark("amber", data_dir=...)`` returns)."""
    import datasets

    return datasets.Dataset.from_list(amber_rows(data_dir), features=amber_features())


def write_amber_folder(folder: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> Path:
    """Fill a copy of the ``hub/amber`` dataset folder (its card, and ``data/test-00000-of-00001.parquet`` built from
    AMBER's files), which ``datasets.load_dataset(folder)`` loads and a user may publish."""
    from .folders import hub_dir

    import yaml

    folder = Path(folder)
    (folder / "data").mkdir(parents=True, exist_ok=True)
    dataset = build_amber(data_dir)
    parquet = folder / "data" / "test-00000-of-00001.parquet"
    dataset.to_parquet(str(parquet))
    # The card states the split's size, which datasets checks: that of the files written (a fixture, a newer release).
    _, header, body = (hub_dir() / "amber" / "README.md").read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(header)
    meta["dataset_info"].update({"splits": [{"name": "test", "num_bytes": dataset.data.nbytes, "num_examples": dataset.num_rows}],
                                 "download_size": parquet.stat().st_size, "dataset_size": dataset.data.nbytes})
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)}---\n{body}", encoding="utf-8")
    return folder


def read_results(path: str | os.PathLike) -> tuple[list[int], list[str]]:
    """The ids and responses of an AMBER results file (a JSON list of ``{"id", "response"}``); ``ValueError`` naming
    the file and the entry for anything else."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such results file") from None
    except OSError as error:  # a folder, a file without read permission
        raise ValueError(f"{path}: not a readable results file ({error.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a JSON file ({error})") from None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path} should hold a non-empty JSON list of {{\"id\": ..., \"response\": ...}}, as AMBER's inference.py reads")
    ids, responses = [], []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), int) or isinstance(entry.get("id"), bool) \
                or not isinstance(entry.get("response"), str):
            raise ValueError(f"{path} entry {index}: expected {{\"id\": <int>, \"response\": <str>}}, got {entry!r:.200}")
        ids.append(entry["id"])
        responses.append(entry["response"])
    return ids, responses


def evaluate_results(path: str | os.PathLike, scorer: AmberScorer | None = None) -> dict[str, Any]:
    """Score the generative responses of an AMBER results file: the corpus values (``amber_chair`` …), the number of
    responses scored and of discriminative answers left out, and the per-response details."""
    scorer = scorer or AmberScorer()
    ids, responses = read_results(path)
    data = scorer.data()
    generative = set(data.generative_ids())
    unknown = sorted({i for i in ids if not 1 <= i <= len(data.annotations)})
    if unknown:
        raise ValueError(f"{path}: ids {unknown[:5]}{' …' if len(unknown) > 5 else ''} are not in AMBER's annotations "
                         f"(ids 1 to {len(data.annotations)})")
    kept = [index for index, i in enumerate(ids) if i in generative]
    if not kept:
        raise ValueError(f"{path} has no response to a generative image (ids {min(generative)} to {max(generative)})")
    scores = scorer.score([responses[k] for k in kept], images=[ids[k] for k in kept])
    return {**scores.corpus, "descriptions": len(kept), "discriminative_left_out": len(ids) - len(kept),
            "per_description": [{"id": ids[k], **{name: scores[name][n] for name in REPORTED},
                                 "objects": scores.details["amber_objects"][n], "hallucinated": scores.details["amber_hallucinated"][n]}
                                for n, k in enumerate(kept)],
            "hashcode": scorer.hashcode(scores)}


def results_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """A Markdown table of :func:`evaluate_results` outputs, one row per (label, result).

    >>> print(results_table([("amber", {"amber_chair": 7.8, "amber_cover": 51.0, "amber_hal": 36.4, "amber_cog": 4.2,
    ...                                 "descriptions": 1004, "discriminative_left_out": 0})]))
    | metric | CHAIR | Cover | Hal | Cog | descriptions |
    |---|---|---|---|---|---|
    | amber | 7.8 | 51.0 | 36.4 | 4.2 | 1004 |
    """
    from ..reports.tables import markdown_table

    return markdown_table(["metric", *REPORTED.values(), "descriptions"],
                          [[label, *(f"{result[key]}" for key in REPORTED), str(result["descriptions"])] for label, result in rows])


def write_results(rows: Sequence[tuple[str, dict[str, Any]]], out_dir: str | os.PathLike, *, overwrite: bool = False) -> list[Path]:
    """``results.md`` (:func:`results_table`) and ``results.json`` (every result, per description) in ``out_dir``,
    which appears whole or not at all."""
    from ..atomic import partial_folder

    names = ["results.md", "results.json"]
    with partial_folder(out_dir, overwrite=overwrite) as out:
        (out / names[0]).write_text(results_table(rows) + "\n", encoding="utf-8")
        (out / names[1]).write_text(json.dumps([{"metric": label, **result} for label, result in rows], indent=1), encoding="utf-8")
    return [Path(out_dir) / name for name in names]
