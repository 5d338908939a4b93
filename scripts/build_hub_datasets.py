#!/usr/bin/env python
"""Build the Hub dataset folders under ``hub/`` from the raw human-judgment data.

Each folder is laid out as a Hugging Face Hub dataset repository: ``data/test-*.parquet``
(zstd) and a ``README.md`` card whose YAML declares the config, data files, features and
split sizes, so ``datasets.load_dataset("hub/<name>")`` works offline.

Only this script reads the shared raw data (``--source``, default ``../shared/data``);
the run-time code reads the folders it writes.

    python scripts/build_hub_datasets.py                 # every benchmark
    python scripts/build_hub_datasets.py flickr8k_expert # one
"""

from __future__ import annotations

import argparse
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import datasets
import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data"
DEFAULT_OUTPUT = REPO / "hub"

IMAGE_NOTE = (
    "Images are not redistributed. `image_file` names the judged image; the `image` column is an "
    "optional `Image` feature left empty here, for users who have the images "
    "(`capeval.benchmarks.attach_images(dataset, image_dir)` fills it)."
)

FLICKR8K_CITATION = """\
@article{hodosh2013framing,
  title   = {Framing Image Description as a Ranking Task: Data, Models and Evaluation Metrics},
  author  = {Hodosh, Micah and Young, Peter and Hockenmaier, Julia},
  journal = {Journal of Artificial Intelligence Research},
  volume  = {47},
  pages   = {853--899},
  year    = {2013}
}"""


@dataclass
class HubDataset:
    """One benchmark's rows, schema and card text."""

    name: str
    pretty_name: str
    license: str
    features: datasets.Features
    rows: list[dict]
    description: str
    fields: dict[str, str]
    provenance: str
    citation: str
    tags: tuple[str, ...] = ()

    def write(self, output: Path) -> None:
        folder = output / self.name
        (folder / "data").mkdir(parents=True, exist_ok=True)
        for old in (folder / "data").glob("*.parquet"):
            old.unlink()
        missing = set(self.features) - set(self.fields)
        if missing:
            raise ValueError(f"{self.name}: card documents no field {sorted(missing)}")
        dataset = datasets.Dataset.from_list(self.rows, features=self.features)
        parquet = folder / "data" / "test-00000-of-00001.parquet"
        # The Arrow schema carries the `datasets` feature metadata, so the file alone round-trips too.
        pq.write_table(dataset.data.table, parquet, compression="zstd")
        (folder / "README.md").write_text(self.card(dataset.data.nbytes, parquet.stat().st_size), encoding="utf-8")
        print(f"{folder.relative_to(REPO)}: {len(dataset)} rows, {parquet.stat().st_size / 1024:.0f} KiB")

    def card(self, num_bytes: int, download_size: int) -> str:
        header = {
            "pretty_name": self.pretty_name,
            "license": self.license,
            "language": ["en"],
            "task_categories": ["image-to-text"],
            "tags": ["image-captioning", "caption-evaluation", "human-judgments", *self.tags],
            "size_categories": [size_category(len(self.rows))],
            "configs": [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}],
            "dataset_info": {
                "features": self.features._to_yaml_list(),
                "splits": [{"name": "test", "num_bytes": num_bytes, "num_examples": len(self.rows)}],
                "download_size": download_size,
                "dataset_size": num_bytes,
            },
        }
        fields = "\n".join(f"| `{name}` | {text} |" for name, text in self.fields.items())
        return (
            "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n"
            f"# {self.pretty_name}\n\n{textwrap.dedent(self.description).strip()}\n\n"
            f"One split, `test`, {len(self.rows):,} rows. {IMAGE_NOTE}\n\n"
            "```python\nimport datasets\n"
            f'ds = datasets.load_dataset("hub/{self.name}", split="test")  # a local folder of the capeval repo\n```\n\n'
            "## Fields\n\n| field | meaning |\n|---|---|\n" + fields + "\n\n"
            f"## Provenance and licence\n\n{self.provenance.strip()}\n\n"
            "Built by `scripts/build_hub_datasets.py` in the capeval repository.\n\n"
            f"## Citation\n\n```bibtex\n{self.citation.strip()}\n```\n"
        )


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


# --------------------------------------------------------------------------- Flickr8k


def read_flickr8k_captions(source: Path) -> dict[str, str]:
    captions = {}
    for line in (source / "flickr8k" / "raw_Flickr8k_text" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines():
        caption_id, text = line.split("\t")
        captions[caption_id] = text
    return captions


def flickr8k_references(captions: dict[str, str], image: str) -> list[str]:
    return [captions[f"{image}#{k}"] for k in range(5)]


def read_tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="ascii").splitlines()]


FLICKR8K_PROVENANCE = """\
Source files: `ExpertAnnotations.txt`, `CrowdFlowerAnnotations.txt` and `Flickr8k.token.txt` of the
`Flickr8k_text` package (Hodosh, Young & Hockenmaier 2013), from the public copy in
prakhar-dhakar/Image-Captioning at commit 5ab3142167da9315c4287173ed24a643a0425ab8 (md5 of
ExpertAnnotations.txt bc1d95194465b7f5210d41f511fec4d6, CrowdFlowerAnnotations.txt
225f7217b50d1504bf448f91dd2e1a21, Flickr8k.token.txt e898e3ced284f72589f239c4f6301778).
Candidate and reference texts are looked up in `Flickr8k.token.txt`, unchanged.

No licence file ships with the data; the original readme asks users to cite Hodosh et al. (2013).
Flickr8k was distributed by UIUC for research use; treat this derivative as research-use only
(`license: other`)."""


def check_bert_tbr_order(source: Path, p1_rows: list[dict]) -> None:
    """The unflagged rows must be BERT-TBR's ``flickr.json``: same order, candidates, references, mean scores."""
    items = json.loads((source / "flickr8k" / "improved_bertscore_format" / "flickr.json").read_text(encoding="utf-8"))
    assert len(items) == len(p1_rows), len(items)
    for i, row in enumerate(p1_rows):
        item = items[str(i)]
        same = item["cand"] == [row["candidate"]] and item["refs"] == row["references"]
        assert same and abs(item["score"] - row["mean_score"]) < 1e-12, f"flickr.json item {i} differs"


def build_flickr8k_expert(source: Path) -> HubDataset:
    captions = read_flickr8k_captions(source)
    rows = []
    for row_id, (image, caption_id, *ratings) in enumerate(read_tsv(source / "flickr8k" / "raw_Flickr8k_text" / "ExpertAnnotations.txt")):
        experts = [int(r) for r in ratings]
        rows.append({
            "row_id": row_id,
            "image_file": image,
            "image": None,
            "candidate_id": caption_id,
            "candidate": captions[caption_id],
            "references": flickr8k_references(captions, image),
            "expert_scores": experts,
            "mean_score": sum(experts) / 3,
            "is_self_caption": caption_id.split("#")[0] == image,
        })
    flagged = sum(r["is_self_caption"] for r in rows)
    assert (len(rows), flagged) == (5822, 158), (len(rows), flagged)
    check_bert_tbr_order(source, [r for r in rows if not r["is_self_caption"]])
    return HubDataset(
        name="flickr8k_expert",
        pretty_name="Flickr8k-Expert",
        license="other",
        features=datasets.Features({
            "row_id": datasets.Value("int32"),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "candidate_id": datasets.Value("string"),
            "candidate": datasets.Value("string"),
            "references": datasets.List(datasets.Value("string"), length=5),
            "expert_scores": datasets.List(datasets.Value("int8"), length=3),
            "mean_score": datasets.Value("float64"),
            "is_self_caption": datasets.Value("bool"),
        }),
        rows=rows,
        description="""\
            Flickr8k-Expert (Hodosh et al. 2013): 5,822 image–caption pairs over 1,000 judged images, each rated
            by three experts on a 1–4 scale (1: the caption does not describe the image at all; 4: it describes
            the image). Each candidate is a Flickr8k caption retrieved for the judged image; the references are
            the judged image's own 5 Flickr8k captions.

            **158 rows grade one of the judged image's own captions** (`is_self_caption`). They are kept here but
            every published protocol drops them, leaving **5,664 rows** (the row set and order of BERT-TBR's
            `example/flickr.json`, verified identical: candidate, 5 references in `#0..#4` order, mean score).
            Protocols in capeval's harness: *mean* (P1: 5,664 rows, human score = `mean_score`) and *all*
            (P2: 16,992 rows, each expert rating a row).""",
        fields={
            "row_id": "line index (0-based) in `ExpertAnnotations.txt`",
            "image_file": "file name of the judged Flickr8k image",
            "image": "optional image (empty here)",
            "candidate_id": "Flickr8k caption id `<image>#<0-4>` of the candidate",
            "candidate": "candidate caption text (Flickr8k tokenized text)",
            "references": "the judged image's 5 Flickr8k captions, `#0` to `#4`",
            "expert_scores": "the three expert ratings, 1–4",
            "mean_score": "mean of the three expert ratings",
            "is_self_caption": "the candidate is one of the judged image's own captions (158 rows)",
        },
        provenance=FLICKR8K_PROVENANCE,
        citation=FLICKR8K_CITATION,
    )


def build_flickr8k_cf(source: Path) -> HubDataset:
    captions = read_flickr8k_captions(source)
    rows = []
    raw = read_tsv(source / "flickr8k" / "raw_Flickr8k_text" / "CrowdFlowerAnnotations.txt")
    for row_id, (image, caption_id, fraction, yes, no) in enumerate(raw):
        rows.append({
            "row_id": row_id,
            "image_file": image,
            "image": None,
            "candidate_id": caption_id,
            "candidate": captions[caption_id],
            "references": flickr8k_references(captions, image),
            "fraction_yes": int(yes) / (int(yes) + int(no)),
            "num_yes": int(yes),
            "num_no": int(no),
            "is_self_caption": caption_id.split("#")[0] == image,
        })
        assert abs(float(fraction) - rows[-1]["fraction_yes"]) < 1e-9, row_id
    flagged = sum(r["is_self_caption"] for r in rows)
    assert (len(rows), flagged) == (47830, 721), (len(rows), flagged)
    judgments = sum(r["num_yes"] + r["num_no"] for r in rows)
    return HubDataset(
        name="flickr8k_cf",
        pretty_name="Flickr8k-CF (CrowdFlower)",
        license="other",
        features=datasets.Features({
            "row_id": datasets.Value("int32"),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "candidate_id": datasets.Value("string"),
            "candidate": datasets.Value("string"),
            "references": datasets.List(datasets.Value("string"), length=5),
            "fraction_yes": datasets.Value("float64"),
            "num_yes": datasets.Value("int16"),
            "num_no": datasets.Value("int16"),
            "is_self_caption": datasets.Value("bool"),
        }),
        rows=rows,
        description=f"""\
            Flickr8k-CF (Hodosh et al. 2013): {len(rows):,} image–caption pairs over 1,000 judged images with
            {judgments:,} binary CrowdFlower judgments ("does the caption describe the image, possibly with minor
            mistakes?"), at least 3 per pair. The human score of a pair is the fraction of "yes" answers.
            The references are the judged image's own 5 Flickr8k captions.

            **{flagged} rows grade one of the judged image's own captions** (`is_self_caption`); capeval's harness
            drops them by default, as for Flickr8k-Expert. Built from the raw CrowdFlower file (not from
            CLIPScore's `crowdflower_flickr8k.json`, which was not available).""",
        fields={
            "row_id": "line index (0-based) in `CrowdFlowerAnnotations.txt`",
            "image_file": "file name of the judged Flickr8k image",
            "image": "optional image (empty here)",
            "candidate_id": "Flickr8k caption id `<image>#<0-4>` of the candidate",
            "candidate": "candidate caption text",
            "references": "the judged image's 5 Flickr8k captions, `#0` to `#4`",
            "fraction_yes": "num_yes / (num_yes + num_no), exact (the raw file rounds it to 15 digits)",
            "num_yes": "number of \"yes\" judgments",
            "num_no": "number of \"no\" judgments",
            "is_self_caption": f"the candidate is one of the judged image's own captions ({flagged} rows)",
        },
        provenance=FLICKR8K_PROVENANCE,
        citation=FLICKR8K_CITATION,
    )


BUILDERS: dict[str, Callable[[Path], HubDataset]] = {
    "flickr8k_expert": build_flickr8k_expert,
    "flickr8k_cf": build_flickr8k_cf,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to build, of {sorted(BUILDERS)} (default: all)")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the shared raw data folder")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where the Hub folders go")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(BUILDERS)
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; choose from {sorted(BUILDERS)}")
    for name in args.names or BUILDERS:
        BUILDERS[name](args.source).write(args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
