"""The benchmarks capeval does not ship, built from the files their authors released.

Polaris (``yuwd/Polaris``), Nebula (``Ka2ukiMatsuda/Nebula``, its test scores corrected from
``hiranohachiman/Spica``), FOIL-COCO (the FOIL test annotations with the COCO val2014 captions) and
LongCap-Arena (``Ka2ukiMatsuda/LongCap-Arena``) are read from one folder per benchmark that holds the released
files in their released layout: ``data_dir`` when given, else ``<CAPEVAL_DATA>/<name>``
(:func:`capeval.settings.benchmark_data_dir`). When that default folder lacks them and downloads are allowed,
the Hub files are fetched into it; otherwise one :class:`BenchmarkDataMissing` names what to download and where
to put it. A builder turns the released rows into the dataset its card (``hub/<name>/README.md``) declares;
:func:`write_hub_folder` writes that dataset as a Hub folder, which ``datasets.load_dataset`` reads back row for
row. A malformed file is one :class:`BenchmarkFileError` naming the file and the row.

>>> sorted(RELEASED)
['foil', 'longcap_arena', 'nebula', 'polaris']
>>> print(RELEASED["polaris"].needs["default"][0].how(Path("/data/polaris")))
hf download yuwd/Polaris polaris_test.csv --repo-type dataset --local-dir /data/polaris
"""

from __future__ import annotations

import ast
import contextlib
import csv
import functools
import io
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from capeval.benchmarks.folders import hub_dir


class BenchmarkDataMissing(FileNotFoundError):
    """A benchmark's released files are not here (and cannot be downloaded now)."""


class BenchmarkFileError(ValueError):
    """A released file does not have the released form; the message names the file and the row."""


@dataclass(frozen=True)
class Need:
    """Released files a builder reads: present when any of ``patterns`` matches a file in the folder."""

    what: str
    patterns: tuple[str, ...]
    #: The Hub dataset repository holding them, and what to fetch from it; empty when they are not on the Hub.
    repo: str = ""
    hub_files: tuple[str, ...] = ()
    #: How to get them when they are not on the Hub (``{folder}`` is the benchmark's folder).
    elsewhere: str = ""

    def present(self, folder: Path) -> bool:
        return any(next(folder.glob(pattern), None) is not None for pattern in self.patterns)

    def how(self, folder: Path) -> str:
        """The download that provides the files, as one command line (or the words of the page that has them)."""
        if not self.repo:
            return self.elsewhere.format(folder=folder)
        files = [f for f in self.hub_files if "*" not in f]
        includes = [f'--include "{f}"' for f in self.hub_files if "*" in f]
        return " ".join(["hf download", self.repo, *files, "--repo-type dataset", *includes, f"--local-dir {folder}"])


@dataclass(frozen=True)
class ReleasedBenchmark:
    """A benchmark read from its released files: what each config needs and how its rows are built."""

    name: str
    title: str
    #: Per config of the card: the released files it reads.
    needs: dict[str, tuple[Need, ...]]
    build: Callable[[Path, str], list[dict]]
    #: Where image metrics find the images: the words for the card and the error when they are asked for.
    images: str = ""

    def folder(self, data_dir=None) -> Path:
        from capeval.settings import benchmark_data_dir

        return Path(data_dir).expanduser() if data_dir is not None else benchmark_data_dir() / self.name

    def config(self, config: str | None) -> str:
        chosen = config or next(iter(self.needs))
        if chosen not in self.needs:
            raise ValueError(f"{self.name} has no config {chosen!r}; choose from {list(self.needs)}")
        return chosen

    def missing(self, folder: Path, config: str | None = None) -> list[Need]:
        return [need for need in self.needs[self.config(config)] if not need.present(folder)]

    def missing_message(self, folder: Path, missing: list[Need]) -> str:
        wanted = "; ".join(f"{need.what} ({' or '.join(need.patterns)}): {need.how(folder)}" for need in missing)
        return (f"{self.title} needs its released files in {folder}, and {len(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} missing. Download {wanted}. Or pass data_dir (--data) "
                f"naming a folder that holds them.")


def locate(name: str, data_dir=None, config: str | None = None) -> Path:
    """The folder holding benchmark ``name``'s released files for ``config``: ``data_dir``, else the default
    folder, filled from the Hub first when it lacks them and downloads are allowed."""
    from capeval.settings import offline

    spec = RELEASED[name]
    folder = spec.folder(data_dir)
    missing = spec.missing(folder, config)
    if missing and data_dir is None and not offline() and all(need.repo for need in missing):
        fetch(missing, folder)
        missing = spec.missing(folder, config)
    if missing:
        raise BenchmarkDataMissing(spec.missing_message(folder, missing))
    return folder


def fetch(needs: list[Need], folder: Path) -> None:
    """Download the Hub files of ``needs`` into ``folder`` (the released layout is the repository's)."""
    from huggingface_hub import snapshot_download

    for need in needs:
        try:
            snapshot_download(need.repo, repo_type="dataset", allow_patterns=list(need.hub_files), local_dir=folder)
        except Exception as error:  # no network, no such repository: say what to download by hand
            raise BenchmarkDataMissing(f"downloading {need.what} from {need.repo} failed ({type(error).__name__}: "
                                       f"{error}); {need.how(folder)} provides it") from error


def present(name: str, data_dir=None) -> bool:
    """Whether benchmark ``name``'s released files (default config) are in its folder (nothing is downloaded)."""
    spec = RELEASED[name]
    return not spec.missing(spec.folder(data_dir))


def images_dir(name: str, data_dir=None) -> str | None:
    """``<folder>/images`` when the benchmark's folder has it (the images of its rows, by file name)."""
    folder = RELEASED[name].folder(data_dir) / "images"
    return str(folder) if folder.is_dir() else None


def build(name: str, data_dir=None, config: str | None = None):
    """Benchmark ``name`` (config ``config``, default the card's first) as the ``datasets.Dataset`` its card
    declares, built from the released files."""
    import datasets

    spec = RELEASED[name]
    config = spec.config(config)
    folder = locate(name, data_dir, config)
    rows = spec.build(folder, config)
    if not rows:
        raise BenchmarkFileError(f"{spec.title}: the released files in {folder} hold no rows "
                                 f"({', '.join(p for need in spec.needs[config] for p in need.patterns)})")
    return datasets.Dataset.from_list(rows, features=card_features(name, config))


# --------------------------------------------------------------------------- the card


@functools.cache
def card_metadata(name: str) -> dict:
    """The YAML header of ``hub/<name>/README.md``."""
    import yaml

    text = (hub_dir() / name / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def card_features(name: str, config: str):
    """The ``datasets.Features`` the card declares for ``config``."""
    import datasets

    info = card_metadata(name)["dataset_info"]
    infos = info if isinstance(info, list) else [dict(info, config_name="default")]
    chosen = next(entry for entry in infos if entry.get("config_name", "default") == config)
    return datasets.Features._from_yaml_list(chosen["features"])


def write_hub_folder(name: str, out_dir, data_dir=None) -> Path:
    """Benchmark ``name`` as a Hub dataset folder in ``out_dir``: its card and one Parquet file per config where
    the card's ``data_files`` point, so ``datasets.load_dataset(out_dir, config, split="test")`` reads the rows
    :func:`capeval.benchmarks.load_benchmark` builds. (Publish it only where the card's licence allows.)"""
    import shutil

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(hub_dir() / name / "README.md", out / "README.md")
    for entry in card_metadata(name)["configs"]:
        target = out / entry["data_files"][0]["path"].replace("*", "00000-of-00001")
        target.parent.mkdir(parents=True, exist_ok=True)
        build(name, data_dir, entry["config_name"]).to_parquet(str(target))
    return out


# --------------------------------------------------------------------------- reading released files


def csv_records(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[str, dict]]:
    """(where, record) of each data row of a released CSV, ``where`` naming the file, row and line. Bytes that are
    not UTF-8 are read as such (surrogate escapes) and refused with the row that holds them."""
    text = read_text(path, errors="surrogateescape")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    where = f"{path} header"
    try:
        found = reader.fieldnames or []
        if not utf8(*found):
            raise BenchmarkFileError(f"{where}: not UTF-8 text (the released CSVs are UTF-8)")
        absent = [c for c in columns if c not in found]
        if absent:
            raise BenchmarkFileError(f"{path}: no column {', '.join(absent)} (it has {', '.join(found) or 'none'}; "
                                     f"the released file has {', '.join(columns)})")
        for number, record in enumerate(reader, 1):
            where = f"{path} row {number} (line {reader.line_num})"
            if not utf8(*(v for v in record.values() if isinstance(v, str))):
                raise BenchmarkFileError(f"{where}: not UTF-8 text (the released CSVs are UTF-8)")
            yield where, record
            where = f"{path} row {number + 1} (after line {reader.line_num})"
    except csv.Error as error:  # a field over the csv module's limit, an unclosed quote
        raise BenchmarkFileError(f"{where}: {error}") from None


def utf8(*texts: str) -> bool:
    """Whether ``texts`` read with surrogate escapes were UTF-8 (no escaped byte)."""
    return not any(ESCAPED.search(text) for text in texts)


#: The code points ``errors="surrogateescape"`` gives the bytes that are not UTF-8.
ESCAPED = re.compile("[\udc80-\udcff]")


def read_text(path: Path, errors: str = "strict") -> str:
    """A released text file's text; a file that cannot be read (a folder, no permission) is one error naming it."""
    try:
        return path.read_bytes().decode("utf-8", errors=errors)
    except OSError as error:
        what = "a folder, not a file" if path.is_dir() else f"unreadable ({error.strerror or error})"
        raise BenchmarkFileError(f"{path} is {what}") from None


def parquet_records(files: list[Path], columns: tuple[str, ...], batch_size: int = 65536) -> Iterator[tuple[str, dict]]:
    """(where, record) of each row of released Parquet shards (in file-name order), only ``columns`` read, streamed
    ``batch_size`` rows at a time."""
    import pyarrow.parquet as pq

    for path in sorted(files):
        with parquet_errors(path):
            shard = pq.ParquetFile(path)
            found = shard.schema_arrow.names
            absent = [c for c in columns if c not in found]
            if absent:
                raise BenchmarkFileError(f"{path}: no column {', '.join(absent)} (it has {', '.join(found)}; "
                                         f"the released file has {', '.join(columns)})")
            number = 0
            for batch in shard.iter_batches(columns=list(columns), batch_size=batch_size):
                for record in batch.to_pylist():
                    number += 1
                    yield f"{path} row {number}", record


@contextlib.contextmanager
def parquet_errors(path: Path):
    """A Parquet file that is cut, damaged or not a file: one error naming it (pyarrow's own words after it)."""
    import pyarrow

    try:
        yield
    except (pyarrow.ArrowException, OSError) as error:
        what = "a folder, not a Parquet file" if path.is_dir() else f"not a readable Parquet file ({error})"
        raise BenchmarkFileError(f"{path} is {what}; download it again") from None


def read_json(path: Path):
    try:
        return json.loads(read_text(path))
    except ValueError as error:
        raise BenchmarkFileError(f"{path} is not JSON ({error})") from None


def reference_list(where: str, refs) -> list[str]:
    """The references of a row: a list (Parquet) or a Python-literal list (the released CSVs)."""
    value = refs
    if isinstance(refs, str):
        try:
            value = ast.literal_eval(refs)
        except (ValueError, SyntaxError):
            value = None
    if not isinstance(value, list) or not value or not all(isinstance(r, str) and r.strip() for r in value):
        raise BenchmarkFileError(f"{where}: refs must be a non-empty list of reference captions (a Python list "
                                 f"literal in the CSV), got {str(refs)[:80]!r}")
    return value


def caption(where: str, text, column: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise BenchmarkFileError(f"{where}: {column} is empty; every row needs its caption")
    return text


def number(where: str, value, column: str) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        result = math.nan
    if not math.isfinite(result):
        raise BenchmarkFileError(f"{where}: {column} must be a number, got {value!r}")
    return result


def image_file(where: str, name, folder: Path) -> str:
    """A row's image file name (:func:`image_path`); when ``folder/images`` exists the image must be in it."""
    images = folder / "images"
    path = image_path(where, name, images)
    if images.is_dir() and not path.is_file():
        raise BenchmarkFileError(f"{where}: image {name} is not in {images}")
    return name


def image_path(where: str, name, images: Path) -> Path:
    """``images / name`` for an image file name read from a data file, refused unless it names a file inside
    ``images`` (no ``..``, no absolute path).

    >>> image_path("f.csv row 1", "sub/a.png", Path("images")).as_posix()
    'images/sub/a.png'
    >>> image_path("f.csv row 2", "../a.png", Path("images"))
    Traceback (most recent call last):
    capeval.benchmarks.released.BenchmarkFileError: f.csv row 2: image file name '../a.png' is not a file name inside images
    """
    if not isinstance(name, str) or not name.strip():
        raise BenchmarkFileError(f"{where}: the image file name is empty")
    parts = PurePosixPath(name.replace("\\", "/")).parts  # a Windows separator counts as one
    if parts[0] == "/" or ".." in parts or "\0" in name:
        raise BenchmarkFileError(f"{where}: image file name {name!r} is not a file name inside {images}")
    return images / name


def judged_rows(records: Iterator[tuple[str, dict]], folder: Path, names: dict[str, str]) -> list[dict]:
    """Rows of (image, candidate, references, human score) from released records; ``names`` maps capeval's
    ``image_file``, ``candidate``, ``references`` and ``score`` to the released columns."""
    rows: list[dict] = []
    for where, record in records:
        rows.append({"row_id": len(rows),
                     "image_file": image_file(where, record[names["image_file"]], folder),
                     "candidate": caption(where, record[names["candidate"]], names["candidate"]),
                     "references": reference_list(where, record[names["references"]]),
                     "score": number(where, record[names["score"]], names["score"])})
    return rows


#: The columns of the released Polaris, Nebula (DENEB's layout) and Spica CSVs that the released loaders read.
CSV_COLUMNS = ("mt", "refs", "score", "imgid")
CSV_NAMES = {"image_file": "imgid", "candidate": "mt", "references": "refs", "score": "score"}


def polaris_rows(folder: Path, config: str) -> list[dict]:
    return judged_rows(csv_records(folder / "polaris_test.csv", CSV_COLUMNS), folder, CSV_NAMES)


def nebula_test_records(folder: Path) -> tuple[Iterator[tuple[str, dict]], dict[str, str]]:
    """Nebula's test rows: the Hub's Parquet shards, else DENEB's ``nebula_test.csv``."""
    shards = sorted(folder.glob("data/test-*.parquet"))
    if shards:
        return (parquet_records(shards, ("file_name", "refs", "mt", "human_score")),
                {"image_file": "file_name", "candidate": "mt", "references": "refs", "score": "human_score"})
    return csv_records(folder / "nebula_test.csv", CSV_COLUMNS), CSV_NAMES


def correction_key(image: str, candidate: str) -> tuple[str, str]:
    """How a Nebula row finds its Spica row: the image's stem and the whitespace-normalized caption."""
    return Path(image).stem, " ".join(candidate.split())


SPICA_FILES = ("spica_train.csv", "spica_val.csv", "spica_test.csv")


def spica_scores(folder: Path) -> dict[tuple[str, str], float]:
    """Spica's human score per (image stem, caption), averaged over the rows of its three splits that share it."""
    totals: dict[tuple[str, str], list[float]] = {}
    for name in SPICA_FILES:
        for where, record in csv_records(folder / name, ("imgid", "mt", "score")):
            key = correction_key(record["imgid"] or "", caption(where, record["mt"], "mt"))
            totals.setdefault(key, []).append(number(where, record["score"], "score"))
    return {key: sum(values) / len(values) for key, values in totals.items()}


def nebula_rows(folder: Path, config: str) -> list[dict]:
    records, names = nebula_test_records(folder)
    rows = judged_rows(records, folder, names)
    corrected = spica_scores(folder) if config == "default" else {}
    for row in rows:
        released = row["score"]
        row["score"] = corrected.get(correction_key(row["image_file"], row["candidate"]), released)
        row["released_score"] = released
        row["corrected"] = correction_key(row["image_file"], row["candidate"]) in corrected
    return rows


FOIL_FILE = "foilv1.0_test_2017.json"
COCO_CAPTIONS = "captions_val2014.json"


def foil_rows(folder: Path, config: str) -> list[dict]:
    """One row per (original caption, foil caption) pair of the FOIL test file, with the image's COCO references
    but the original caption, in the order of the Polos/DENEB/Pearl ``compute_foil`` script."""
    foil_path, coco_path = folder / FOIL_FILE, folder / COCO_CAPTIONS
    coco = read_json(coco_path)
    if not isinstance(coco, dict) or not isinstance(coco.get("annotations"), list):
        raise BenchmarkFileError(f"{coco_path} is not a COCO captions file (no 'annotations' list)")
    references: dict[int, list[str]] = {}
    for k, annotation in enumerate(coco["annotations"], 1):
        where = f"{coco_path} annotation {k}"
        if not isinstance(annotation, dict) or "image_id" not in annotation or "caption" not in annotation:
            raise BenchmarkFileError(f"{where}: needs image_id and caption")
        if not isinstance(annotation["caption"], str):
            raise BenchmarkFileError(f"{where}: caption must be text, got {annotation['caption']!r}")
        references.setdefault(identifier(where, annotation["image_id"], "image_id"), []).append(annotation["caption"])
    foil = read_json(foil_path)
    if not isinstance(foil, dict) or not isinstance(foil.get("annotations"), list) or not isinstance(foil.get("images"), list):
        raise BenchmarkFileError(f"{foil_path} is not the FOIL test file (no 'images' and 'annotations' lists)")
    files = {identifier(f"{foil_path} image {k}", image.get("id"), "id"): image.get("file_name")
             for k, image in enumerate(foil["images"], 1) if isinstance(image, dict)}
    by_id: dict[int, dict[str, list[tuple[str, dict]]]] = {}
    for k, annotation in enumerate(foil["annotations"], 1):
        where = f"{foil_path} annotation {k}"
        absent = [key for key in ("id", "image_id", "caption", "foil") if not isinstance(annotation, dict) or key not in annotation]
        if absent:
            raise BenchmarkFileError(f"{where}: no {', '.join(absent)} (a FOIL annotation has id, image_id, caption, foil)")
        kind = "foil" if annotation["foil"] else "orig"
        identifier(where, annotation["image_id"], "image_id")
        by_id.setdefault(identifier(where, annotation["id"], "id"), {"orig": [], "foil": []})[kind].append((where, annotation))
    rows: list[dict] = []
    for annotation_id, pair in by_id.items():
        where = pair["orig"][0][0] if pair["orig"] else pair["foil"][0][0]
        if len(pair["orig"]) != 1 or not pair["foil"]:
            problem = ("has no foil caption" if not pair["foil"] else
                       "has no original caption" if not pair["orig"] else f"has {len(pair['orig'])} original captions")
            raise BenchmarkFileError(f"{where}: FOIL pair id {annotation_id} {problem}; each id has one original "
                                     f"caption and its foils")
        original = pair["orig"][0][1]
        image_id = original["image_id"]
        if image_id not in files:
            raise BenchmarkFileError(f"{where}: image_id {image_id} is not among the file's images")
        others = [r for r in references.get(image_id, []) if r != original["caption"]]
        if not others:
            raise BenchmarkFileError(f"{where}: {coco_path.name} has no reference of image {image_id} besides the "
                                     f"original caption")
        for foil_where, foiled in pair["foil"]:
            rows.append({"pair_id": len(rows), "annotation_id": annotation_id, "image_id": image_id,
                         "image_file": image_file(foil_where, files[image_id], folder),
                         "original": caption(where, original["caption"], "caption"),
                         "foil": caption(foil_where, foiled["caption"], "caption"),
                         "target_word": str(foiled.get("target_word", "")), "foil_word": str(foiled.get("foil_word", "")),
                         "references": others})
    return rows


def identifier(where: str, value, field: str) -> int:
    """An id of a COCO-layout file: an integer (the card's ``int64``)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise BenchmarkFileError(f"{where}: {field} must be an integer, got {str(value)[:80]!r}")
    return value


#: LongCap-Arena's evaluation splits: the Hub split, VELA's name for its test set, and the perspective.
LONGCAP_SPLITS = tuple((f"{split}.{perspective}", test_set, perspective)
                       for split, test_set in (("dci_val", "TestA"), ("dci_test", "TestB"))
                       for perspective in ("desc", "rel", "flu"))


def longcap_arena_rows(folder: Path, config: str) -> list[dict]:
    rows: list[dict] = []
    for split, test_set, perspective in LONGCAP_SPLITS:
        shards = sorted(folder.glob(f"data/{split}-*.parquet"))
        records = parquet_records(shards, ("file_name", "refs", "cand", "score"))
        names = {"image_file": "file_name", "candidate": "cand", "references": "refs", "score": "score"}
        for row in judged_rows(records, folder, names):
            rows.append({**row, "row_id": len(rows), "test_set": test_set, "perspective": perspective, "hub_split": split})
    return rows


HUB_IMAGES = ("the images are embedded in the Parquet files (`image` column): capeval.benchmarks.released.extract_images "
              "writes them to `<folder>/images/`, named by `file_name`, for image metrics")
COCO_ANNOTATIONS = ("captions_val2014.json from the COCO 2014 annotations (annotations_trainval2014.zip, "
                    "cocodataset.org), into {folder}")

#: The benchmarks read from released files, by capeval name.
RELEASED: dict[str, ReleasedBenchmark] = {
    "polaris": ReleasedBenchmark("polaris", "Polaris", {"default": (
        Need("Polaris's test CSV", ("polaris_test.csv",), "yuwd/Polaris", ("polaris_test.csv",)),)}, polaris_rows,
        images="images.tar.gz of yuwd/Polaris (7.3 GB), extracted so that each row's imgid names a file in "
               "`<folder>/images/`"),
    "nebula": ReleasedBenchmark("nebula", "Nebula", {
        "default": (Need("Nebula's test split", ("data/test-*.parquet", "nebula_test.csv"), "Ka2ukiMatsuda/Nebula",
                         ("data/test-*",)),
                    Need("Spica's CSVs (the score corrections)", ("spica_test.csv",), "hiranohachiman/Spica", SPICA_FILES)),
        "uncorrected": (Need("Nebula's test split", ("data/test-*.parquet", "nebula_test.csv"), "Ka2ukiMatsuda/Nebula",
                             ("data/test-*",)),)}, nebula_rows, images=HUB_IMAGES),
    "foil": ReleasedBenchmark("foil", "FOIL-COCO", {"default": (
        Need("the FOIL test annotations", (FOIL_FILE,),
             elsewhere=f"{FOIL_FILE} from the FOIL-COCO page (foilunitn.github.io), into {{folder}}"),
        Need("the COCO val2014 captions", (COCO_CAPTIONS,), elsewhere=COCO_ANNOTATIONS))}, foil_rows,
        images="the COCO val2014 images (val2014.zip, cocodataset.org) in `<folder>/images/`"),
    "longcap_arena": ReleasedBenchmark("longcap_arena", "LongCap-Arena", {"default": tuple(
        Need(f"LongCap-Arena's {split} split", (f"data/{split}-*.parquet",), "Ka2ukiMatsuda/LongCap-Arena",
             (f"data/{split}-*",)) for split, _, _ in LONGCAP_SPLITS)}, longcap_arena_rows, images=HUB_IMAGES),
}


#: The Parquet shards whose ``image`` column embeds a benchmark's images (the Hub layouts).
EMBEDDED_IMAGES = {"nebula": ("data/test-*.parquet",),
                   "longcap_arena": tuple(f"data/{split}-*.parquet" for split, _, _ in LONGCAP_SPLITS)}


def extract_images(name: str, data_dir=None) -> Path:
    """Write the images embedded in benchmark ``name``'s Parquet shards (Nebula, LongCap-Arena) to
    ``<folder>/images/<file_name>``, where image metrics read them; files already there are kept."""
    if name not in EMBEDDED_IMAGES:
        raise ValueError(f"{name}'s released files do not embed its images; image metrics need {RELEASED[name].images}")
    folder = locate(name, data_dir, next(reversed(RELEASED[name].needs)))
    shards = sorted(path for pattern in EMBEDDED_IMAGES[name] for path in folder.glob(pattern))
    if not shards:
        raise ValueError(f"{folder} holds {name} without its Parquet shards ({', '.join(EMBEDDED_IMAGES[name])}): put "
                         f"the images in {folder / 'images'}")
    images = folder / "images"
    images.mkdir(exist_ok=True)
    for where, record in parquet_records(shards, ("file_name", "image"), batch_size=64):
        target = image_path(where, record["file_name"], images)
        if not target.is_file():
            payload = record["image"] or {}
            if not payload.get("bytes"):
                raise BenchmarkFileError(f"{where}: no image bytes for {record['file_name']}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(payload["bytes"])
    return images


def data_note(names: list[str]) -> str:
    """The one line ``--dataset all`` prints: the benchmarks not run because their released files are not here
    (``names``, where their files go), and AMBER, which scores a model's responses rather than a metric.

    >>> print(data_note([]))
    not run: amber (it scores a model's responses, not a metric: capeval benchmark --metric amber --dataset amber --results FILE)
    """
    from capeval.settings import benchmark_data_dir

    missing = (f"{', '.join(names)} (no data here: put each one's released files in {benchmark_data_dir()}{os.sep}<name> "
               f"or --data DIR/<name>; `capeval benchmark --dataset <name>` says what to download); ") if names else ""
    return (f"not run: {missing}amber (it scores a model's responses, not a metric: capeval benchmark --metric amber "
            f"--dataset amber --results FILE)")
