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
        # Columns in the order of the declared features (the card lists them in that order).
        dataset = datasets.Dataset.from_list([{k: row[k] for k in self.features} for row in self.rows],
                                             features=self.features)
        parquet = folder / "data" / "test-00000-of-00001.parquet"
        # The Arrow schema carries the `datasets` feature metadata, so the file alone round-trips too.
        pq.write_table(dataset.data.table, parquet, compression="zstd", compression_level=19)
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
            f'ds = datasets.load_dataset("hub/{self.name}", split="test")  # in a capeval checkout\n'
            f'# ds = datasets.load_dataset("<namespace>/{self.name.replace("_", "-")}", split="test")  # once published\n```\n\n'
            "## Fields\n\n| field | meaning |\n|---|---|\n" + fields + "\n\n"
            f"## Provenance and licence\n\n{textwrap.dedent(self.provenance).strip()}\n\n"
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


FLICKR8K_FEATURES = {
    "row_id": datasets.Value("int32"),
    "image_file": datasets.Value("string"),
    "image": datasets.Image(),
    "candidate_id": datasets.Value("string"),
    "candidate": datasets.Value("string"),
    "references": datasets.List(datasets.Value("string"), length=5),
}


def flickr8k_fields(source_file: str) -> dict[str, str]:
    return {
        "row_id": f"line index (0-based) in `{source_file}`",
        "image_file": "file name of the judged Flickr8k image",
        "image": "optional image (empty here)",
        "candidate_id": "Flickr8k caption id `<image>#<0-4>` of the candidate",
        "candidate": "candidate caption text (Flickr8k tokenized text)",
        "references": "the judged image's 5 Flickr8k captions, `#0` to `#4`",
    }


def flickr8k_row(row_id: int, image: str, caption_id: str, captions: dict[str, str]) -> dict:
    """The columns both Flickr8k judgment files share; ``is_self_caption`` flags an image's own caption."""
    return {"row_id": row_id, "image_file": image, "image": None, "candidate_id": caption_id,
            "candidate": captions[caption_id], "references": flickr8k_references(captions, image),
            "is_self_caption": caption_id.split("#")[0] == image}


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
        rows.append({**flickr8k_row(row_id, image, caption_id, captions), "expert_scores": experts,
                     "mean_score": sum(experts) / 3})
    flagged = sum(r["is_self_caption"] for r in rows)
    assert (len(rows), flagged) == (5822, 158), (len(rows), flagged)
    check_bert_tbr_order(source, [r for r in rows if not r["is_self_caption"]])
    return HubDataset(
        name="flickr8k_expert",
        pretty_name="Flickr8k-Expert",
        license="other",
        features=datasets.Features({
            **FLICKR8K_FEATURES,
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
            **flickr8k_fields("ExpertAnnotations.txt"),
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
        rows.append({**flickr8k_row(row_id, image, caption_id, captions),
                     "fraction_yes": int(yes) / (int(yes) + int(no)), "num_yes": int(yes), "num_no": int(no)})
        assert abs(float(fraction) - rows[-1]["fraction_yes"]) < 1e-9, row_id
    flagged = sum(r["is_self_caption"] for r in rows)
    assert (len(rows), flagged) == (47830, 721), (len(rows), flagged)
    judgments = sum(r["num_yes"] + r["num_no"] for r in rows)
    return HubDataset(
        name="flickr8k_cf",
        pretty_name="Flickr8k-CF (CrowdFlower)",
        license="other",
        features=datasets.Features({
            **FLICKR8K_FEATURES,
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
            **flickr8k_fields("CrowdFlowerAnnotations.txt"),
            "fraction_yes": "num_yes / (num_yes + num_no), exact (the raw file rounds it to 15 digits)",
            "num_yes": "number of \"yes\" judgments",
            "num_no": "number of \"no\" judgments",
            "is_self_caption": f"the candidate is one of the judged image's own captions ({flagged} rows)",
        },
        provenance=FLICKR8K_PROVENANCE,
        citation=FLICKR8K_CITATION,
    )


# --------------------------------------------------------------------------- Composite

COMPOSITE_CITATION = """\
@article{aditya2018image,
  title   = {From Images to Sentences through Scene Description Graphs using Commonsense Reasoning and Knowledge},
  author  = {Aditya, Somak and Yang, Yezhou and Baral, Chitta and Aloimonos, Yiannis and Ferm{\"u}ller, Cornelia},
  journal = {arXiv preprint arXiv:1511.03292},
  year    = {2015}
}"""


def normalized(text: str) -> str:
    """Lowercased alphanumeric words: Composite's caption texts differ from Flickr8k's in case and spacing only."""
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def build_composite(source: Path) -> HubDataset:
    flickr8k = {}
    for caption_id, text in read_flickr8k_captions(source).items():
        flickr8k.setdefault(caption_id.split("#")[0], []).append(text)
    rows = []
    lines = (source / "composite" / "composite_umic_fleur_joined.jsonl").read_text(encoding="utf-8").splitlines()
    for row_id, line in enumerate(lines):
        record = json.loads(line)
        image = record["image"].split("/")[-1]
        references = flickr8k[image] if record["subset"] == "flickr8k" else None
        matches = [k for k, ref in enumerate(references or []) if normalized(ref) == normalized(record["caption"])]
        rows.append({
            "row_id": row_id,
            "subset": record["subset"],
            "image_file": image,
            "image": None,
            "caption_index": record["caption_index_within_image"],
            "candidate": record["caption"],
            "score": record["human_score"],
            "references": references,
            "candidate_reference_index": matches[0] if matches else None,
            "text_match": "exact" if record["alignment_check"] == "exact" else "partial",
        })
    counts = {s: sum(r["subset"] == s for r in rows) for s in ("flickr8k", "flickr30k", "coco")}
    assert counts == {"flickr8k": 2991, "flickr30k": 2973, "coco": 6021}, counts
    partial = sum(r["text_match"] == "partial" for r in rows)
    human_in_refs = sum(r["candidate_reference_index"] is not None for r in rows if r["caption_index"] == 0 and r["references"])
    return HubDataset(
        name="composite",
        pretty_name="Composite",
        license="other",
        features=datasets.Features({
            "row_id": datasets.Value("int32"),
            "subset": datasets.Value("string"),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "caption_index": datasets.Value("int8"),
            "candidate": datasets.Value("string"),
            "score": datasets.Value("int8"),
            "references": datasets.List(datasets.Value("string")),
            "candidate_reference_index": datasets.Value("int8"),
            "text_match": datasets.Value("string"),
        }),
        rows=rows,
        description=f"""\
            Composite (Aditya et al. 2015): {len(rows):,} AMT correctness judgments (1–5) of captions for
            {counts['flickr8k'] // 3} Flickr8k, {counts['flickr30k'] // 3} Flickr30k and {counts['coco'] // 3} COCO val2014
            images, 3 captions per image (the first, `caption_index` 0, is a human caption; the other two are
            machine captions). The published protocol computes one Kendall τ over all rows.

            **Derived data.** The original AMT files were not available. Each row joins the human score of
            UMIC's tokenized `txt_db` with the caption text of FLEUR's result log (the two list an image's three
            captions in the same order). The join was checked by decoding UMIC's word-piece ids with a partially
            reconstructed vocabulary: `text_match` is `exact` when the decoded ids equal the lowercased caption,
            `partial` ({partial} rows) when some ids could not be decoded but every decoded piece matches.

            **References** are available only for the Flickr8k subset (the image's 5 Flickr8k captions); for
            Flickr30k and COCO they are absent (`null`): their caption annotations were not available. All
            {human_in_refs} Flickr8k human candidates are one of their image's references
            (`candidate_reference_index`); prior work removes that reference before scoring, which capeval's
            harness does by default.""",
        fields={
            "row_id": "row index (0-based): UMIC's Flickr8k, Flickr30k, then COCO txt_db order",
            "subset": "`flickr8k`, `flickr30k` or `coco`",
            "image_file": "file name of the judged image",
            "image": "optional image (empty here)",
            "caption_index": "0 (the human caption), 1 or 2 (machine captions) within the image",
            "candidate": "caption text (from FLEUR's log; original case)",
            "score": "AMT correctness score, 1–5 (UMIC's `target`)",
            "references": "the image's 5 Flickr8k captions (Flickr8k subset only; otherwise null)",
            "candidate_reference_index": "index in `references` of the reference equal to the candidate "
                                         "(compared lowercased, punctuation ignored), else null",
            "text_match": "`exact` or `partial`: how the text/score join was verified (see above)",
        },
        provenance="""\
            Human scores: `txt_db/composite_{8k,30k,coco}` of hwanheelee1993/UMIC at commit
            9d897ee575d754dada84e00da426bbceabffc450 (MIT). Caption texts: `results/fleur_composite.txt` of
            Yebin46/FLEUR at commit b9cd6c9c086113b9ad3d040522a85c776aff1225 (no licence stated). Flickr8k
            references: `Flickr8k.token.txt` (see the Flickr8k-Expert card). Which AMT question (correctness or
            thoroughness) UMIC's `target` holds is not stated in the UMIC repository; its 1–5 distribution and the
            11,985 count match the correctness set used by later work. The original judgments were released by
            Aditya et al. for research use; treat this derivative as research-use only.""",
        citation=COMPOSITE_CITATION,
    )


# --------------------------------------------------------------------------- PASCAL-50S

PASCAL50S_CITATION = """\
@inproceedings{vedantam2015cider,
  title     = {CIDEr: Consensus-based Image Description Evaluation},
  author    = {Vedantam, Ramakrishna and Zitnick, C. Lawrence and Parikh, Devi},
  booktitle = {CVPR},
  year      = {2015}
}"""


def build_pascal50s(source: Path) -> HubDataset:
    from scipy.io import loadmat

    mat = loadmat(source / "pascal50s" / "cider_matlab" / "pascal50S.mat", squeeze_me=True, struct_as_record=False)
    all_references = {entry.image: [str(s) for s in entry.sent] for entry in mat["refs"]}
    pairs = json.loads((source / "pascal50s" / "fleur" / "pascal_50s.json").read_text(encoding="utf-8"))
    rows = []
    for category in ("HC", "HI", "HM", "MM"):
        for item in pairs[category]:
            image = item["image"].split("/")[-1]
            assert set(item["references"]) <= set(all_references[image]), image
            rows.append({
                "pair_id": len(rows),
                "category": category,
                "image_file": image,
                "image": None,
                "caption_a": item["captions"][0],
                "caption_b": item["captions"][1],
                "label": item["label"],
                "references": all_references[image],
                "fleur_references": item["references"],
            })
    assert len(rows) == 4000 and all(len(r["references"]) == 50 for r in rows)
    return HubDataset(
        name="pascal50s",
        pretty_name="PASCAL-50S",
        license="other",
        features=datasets.Features({
            "pair_id": datasets.Value("int32"),
            "category": datasets.ClassLabel(names=["HC", "HI", "HM", "MM"]),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "caption_a": datasets.Value("string"),
            "caption_b": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["a", "b"]),
            "references": datasets.List(datasets.Value("string"), length=50),
            "fleur_references": datasets.List(datasets.Value("string"), length=5),
        }),
        rows=rows,
        description="""\
            PASCAL-50S (Vedantam et al. 2015): 4,000 caption pairs on 1,000 PASCAL VOC images, 1,000 per
            category — HC (two correct human captions), HI (a human caption vs one of another image), HM (human vs
            machine), MM (machine vs machine). `label` is the caption most human judges found more similar to
            the references (majority of the triplet votes; how vote ties were broken is not documented).
            Each image has 50 references. Metric accuracy = share of pairs where the metric prefers the
            human-preferred caption, per category and averaged over the four.

            Which 5 references papers used varies ("the first 5", "5 random", unspecified). `references` keeps all
            50 in the original order (so "first 5" is `references[:5]`); `fleur_references` keeps the 5 that FLEUR's
            processed file pairs with each item (random members of the 50). In about 50 pairs a candidate's text
            also occurs among the image's 50 references.""",
        fields={
            "pair_id": "row index (0-based), categories in HC, HI, HM, MM order, each in FLEUR's order",
            "category": "HC, HI, HM or MM",
            "image_file": "file name of the PASCAL VOC image",
            "image": "optional image (empty here)",
            "caption_a": "first candidate caption",
            "caption_b": "second candidate caption",
            "label": "the caption humans preferred: `a` (0) or `b` (1)",
            "references": "all 50 references of the image, in the original order",
            "fleur_references": "the 5 references FLEUR's file gives this pair",
        },
        provenance="""\
            Pairs, labels and categories: `annotations/pascal_50s.json` of Yebin46/FLEUR at commit
            b9cd6c9c086113b9ad3d040522a85c776aff1225 (no licence stated). The 50 references per image:
            `data/pascal50S.mat` of vrama91/cider-matlab at commit 734089da05b495bb7a36cece2cd8ddb548d128aa
            (no licence stated); FLEUR's 5 references of every pair are members of these 50. The 4,000 pairs equal
            the candidate pairs of cider-matlab's `pascal_cands.mat`. The original consensus files with the 48 votes
            per triplet were not available. The PASCAL-50S sentences were collected by Vedantam et al. for
            research use; treat this derivative as research-use only.""",
        citation=PASCAL50S_CITATION,
    )


# --------------------------------------------------------------------------- CapEval1k

CAPEVAL1K_CITATION = """\
@inproceedings{lee2021umic,
  title     = {UMIC: An Unreferenced Metric for Image Captioning via Contrastive Learning},
  author    = {Lee, Hwanhee and Yoon, Seunghyun and Dernoncourt, Franck and Bui, Trung and Jung, Kyomin},
  booktitle = {ACL},
  year      = {2021}
}"""


def build_capeval1k(source: Path) -> HubDataset:
    rows = []
    for line in (source / "capeval1k" / "capeval1k_decoded.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        rows.append({
            "row_id": int(record["umic_key"]),
            "image_file": record["image"],
            "image": None,
            "system_group": record["group_index"],
            "candidate": record["caption_decoded"],
            "fully_decoded": record["fully_decoded"],
            "score": record["human_score"],
            "input_ids": record["input_ids"],
        })
    unresolved = sum(not r["fully_decoded"] for r in rows)
    assert (len(rows), unresolved) == (1000, 31), (len(rows), unresolved)
    return HubDataset(
        name="capeval1k",
        pretty_name="CapEval1k",
        license="mit",
        features=datasets.Features({
            "row_id": datasets.Value("int32"),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "system_group": datasets.Value("int8"),
            "candidate": datasets.Value("string"),
            "fully_decoded": datasets.Value("bool"),
            "score": datasets.Value("float64"),
            "input_ids": datasets.List(datasets.Value("int32")),
        }),
        rows=rows,
        description=f"""\
            CapEval1k (Lee et al. 2021, UMIC): 1,000 captions of 4 recent captioning models on 250 COCO val2014
            images, each with an overall human score. The shipped scores lie in [0, 1] and are consistent with
            the mean over 4–6 annotators of (rating − 1) / 4 on a 1–5 scale. No references are available (they
            would come from COCO captions_val2014), so only reference-free metrics can be evaluated.

            **Derived text.** UMIC released only bert-base-cased word-piece ids. The texts here were decoded
            with a vocabulary reconstructed by aligning UMIC's other databases with their known captions: they
            are lowercased, space-separated BERT basic tokens. **{unresolved} captions contain unresolved ids**,
            rendered `<id>` (`fully_decoded` is false); `input_ids` is kept so that the text can be decoded exactly
            with the real vocabulary.""",
        fields={
            "row_id": "UMIC txt_db key (0–999)",
            "image_file": "COCO val2014 file name",
            "image": "optional image (empty here)",
            "system_group": "row_id // 250: the four 250-caption blocks (one captioning model each; which model is not documented)",
            "candidate": "decoded caption (lowercased BERT basic tokens; unresolved ids as `<id>`)",
            "fully_decoded": f"every id was decoded ({1000 - unresolved} rows); false for the {unresolved} with `<id>` tokens",
            "score": "human score in [0, 1] (UMIC's `target`)",
            "input_ids": "bert-base-cased word-piece ids as released (no [CLS]/[SEP])",
        },
        provenance="""\
            `txt_db/capeval1k` of hwanheelee1993/UMIC at commit 9d897ee575d754dada84e00da426bbceabffc450
            (MIT licence). The decoded text is derived (see above). Images and references are not included.""",
        citation=CAPEVAL1K_CITATION,
    )


# --------------------------------------------------------------------------- THumB

THUMB_CITATION = """\
@inproceedings{kasai2022thumb,
  title     = {Transparent Human Evaluation for Image Captioning},
  author    = {Kasai, Jungo and Sakaguchi, Keisuke and Dunagan, Lavinia and Morrison, Jacob and Le Bras, Ronan and Choi, Yejin and Smith, Noah A.},
  booktitle = {NAACL},
  year      = {2022}
}"""


def build_thumb(source: Path) -> HubDataset:
    folder = source / "thumb_mscoco"
    references = {}
    for line in (folder / "mscoco_references.json").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        references[record["seg_id"]] = record["refs"]
    rows = []
    for row_id, line in enumerate((folder / "mscoco_THumB-1.0.jsonl").read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        rows.append({
            "row_id": row_id,
            "system": record["SYS"],
            "seg_id": record["seg_id"],
            "set_id": record["set_id"],
            "image_file": record["image"],
            "image": None,
            "candidate": record["hyp"],
            "references": references[record["seg_id"]],
            "precision": record["P"],
            "recall": record["R"],
            "fluency": record["Fl"],
            "conciseness": record["Con"],
            "inclusive_language": record["Inc"],
            "score": record["human_score"],
        })
    assert len(rows) == 2500 and all(len(r["references"]) == 4 for r in rows)
    return HubDataset(
        name="thumb",
        pretty_name="THumB 1.0 (MSCOCO)",
        license="other",
        features=datasets.Features({
            "row_id": datasets.Value("int32"),
            "system": datasets.Value("string"),
            "seg_id": datasets.Value("string"),
            "set_id": datasets.Value("int32"),
            "image_file": datasets.Value("string"),
            "image": datasets.Image(),
            "candidate": datasets.Value("string"),
            "references": datasets.List(datasets.Value("string"), length=4),
            "precision": datasets.Value("float32"),
            "recall": datasets.Value("float32"),
            "fluency": datasets.Value("float32"),
            "conciseness": datasets.Value("float32"),
            "inclusive_language": datasets.Value("float32"),
            "score": datasets.Value("float32"),
        }),
        rows=rows,
        description="""\
            THumB 1.0 for MSCOCO (Kasai et al. 2022): 2,500 captions = 500 Karpathy-test images × 5 systems
            (Up-Down, Unified-VLP, VinVL-base, VinVL-large and Human, the 5th COCO caption), rated by trained
            annotators for precision and recall (1–5) with penalties for fluency, conciseness and inclusive
            language; `score` = (precision + recall) / 2 + the penalties. The references are the image's other
            4 COCO captions.""",
        fields={
            "row_id": "line index (0-based) in `mscoco_THumB-1.0.jsonl`",
            "system": "captioning system (`Human` = a held-out COCO caption)",
            "seg_id": "COCO image id",
            "set_id": "index of the image in the Karpathy test split (0–4999)",
            "image_file": "COCO val2014 file name",
            "image": "optional image (empty here)",
            "candidate": "caption (clean, truecased, untokenized)",
            "references": "the image's 4 other COCO captions",
            "precision": "precision rating, 1–5",
            "recall": "recall rating, 1–5",
            "fluency": "fluency penalty (≤ 0)",
            "conciseness": "conciseness penalty (≤ 0)",
            "inclusive_language": "inclusive-language penalty (≤ 0)",
            "score": "total human score (precision + recall) / 2 + penalties",
        },
        provenance="""\
            `mscoco/mscoco_THumB-1.0.jsonl` and `mscoco/mscoco_references.json` of jungokasai/THumB at commit
            fd099b4f311d9c4fd24e6c58ef0df038ec1615f3 (no licence stated in the repository; the captions derive
            from MSCOCO, CC BY 4.0 annotations).""",
        citation=THUMB_CITATION,
    )


BUILDERS: dict[str, Callable[[Path], HubDataset]] = {
    "flickr8k_expert": build_flickr8k_expert,
    "flickr8k_cf": build_flickr8k_cf,
    "composite": build_composite,
    "pascal50s": build_pascal50s,
    "capeval1k": build_capeval1k,
    "thumb": build_thumb,
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
