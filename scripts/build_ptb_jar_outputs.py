#!/usr/bin/env python
"""Build ``tests/assets/ptb_jar_outputs.parquet``: the CoreNLP 3.4.1 jar's COCO tokenization of every caption capeval
ships or is evaluated on, so the pure-Python tokenizer can be compared with it without Java; and
``tests/assets/karpathy_coco_tokens.parquet``: pycocoevalcap's own tokenization of the Karpathy-test caption sets,
as its evaluation tokenizes them, so CIDEr-D can be compared with pycocoevalcap's without Java.

One row per distinct caption string: ``text`` (as in the corpus), ``jar`` (what pycocoevalcap's ``PTBTokenizer``
returns for it: the jar's ``-preserveLines -lowerCase`` tokens without the toolkit's punctuation list) and
``corpora`` (the corpora it occurs in, comma-separated). The corpora are the bundled hub datasets (Flickr8k-Expert,
Flickr8k-CF, PASCAL-50S with all 50 references per image, Composite, THumB, CapEval1k), the package resources
(SMURF's Karpathy-test caption sets, the Flickr8k reference corpus, the demo captions) and two public files
given on the command line: Flickr8k's ``Flickr8k.token.txt`` (all 40,460 captions, Hodosh et al. 2013) and the
reformulations dataset (``full_reformulation_dataset.json`` of uriberger/caption_evaluation).

    python scripts/build_ptb_jar_outputs.py --flickr8k-token Flickr8k.token.txt \\
        --reformulations full_reformulation_dataset.json

The jar reads the distinct strings in sorted order, one a line. Where a caption's tokens depend on the next line
(a final "U." before a line starting "A "), the stored output is the one for that order, which the tests keep.

``karpathy_coco_tokens.parquet`` has one row per image of ``shared/capeval/resources/smurf_golden.parquet`` (SMURF's
Karpathy-test sets, image order): ``references`` (the image's references) and ``candidates`` (the 4 systems'
captions), as pycocoevalcap's ``PTBTokenizer`` returns them when each system is evaluated on its own (references of
all images in one input, that system's candidates in another).

Needs Java and pycocoevalcap.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from capeval.text.ptb import java_tokenize

REPO = Path(__file__).resolve().parents[1]
RESOURCES = REPO / "shared" / "capeval" / "resources"
ASSETS = REPO / "tests" / "assets"
N_SYSTEMS = 4
# The text columns of each bundled hub dataset (strings or lists of strings).
HUB_TEXT_COLUMNS = {
    "flickr8k_expert": ("candidate", "references"),
    "flickr8k_cf": ("candidate", "references"),
    "pascal50s": ("caption_a", "caption_b", "references", "fleur_references"),
    "composite": ("candidate", "references"),
    "thumb": ("candidate", "references"),
    "capeval1k": ("candidate",),
}


def column_strings(table: pa.Table, columns: tuple[str, ...]) -> list[str]:
    strings = []
    for column in columns:
        for value in table.column(column).to_pylist():
            # A missing value (a row without FLEUR's references) holds no caption.
            strings += [s for s in (value if isinstance(value, list) else [value]) if s is not None]
    return strings


def shipped_corpora() -> dict[str, list[str]]:
    """The caption strings of every corpus in the repository, by corpus name."""
    corpora = {name: column_strings(pq.read_table(REPO / "hub" / name / "data" / "test-00000-of-00001.parquet",
                                                  columns=list(columns)), columns)
               for name, columns in HUB_TEXT_COLUMNS.items()}
    corpora["karpathy"] = column_strings(pq.read_table(RESOURCES / "smurf_golden.parquet"), ("candidate", "references"))
    with gzip.open(RESOURCES / "flickr8k_references.json.gz", "rt", encoding="utf-8") as file:
        corpora["flickr8k_references"] = [r for refs in json.load(file)["references"] for r in refs]
    samples = json.loads((RESOURCES / "sample_captions.json").read_text(encoding="utf-8"))
    corpora["sample_captions"] = [s for row in samples["rows"] for s in [row["candidate"], *row["references"]]]
    return corpora


def flickr8k_captions(path: Path) -> list[str]:
    """The captions of Flickr8k.token.txt (``image#index<TAB>caption`` lines)."""
    return [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines() if "\t" in line]


def reformulation_captions(path: Path) -> list[str]:
    """Both sides of every reformulation pair (a model caption and its human rewrite)."""
    return [s for pair in json.loads(path.read_text(encoding="utf-8")) for s in (pair["question"], pair["answer"])]


def build_table(corpora: dict[str, list[str]]) -> pa.Table:
    corpora_of: dict[str, list[str]] = {}
    for name, strings in corpora.items():
        for text in dict.fromkeys(strings):
            corpora_of.setdefault(text, []).append(name)
    texts = sorted(corpora_of)
    return pa.table({"text": texts, "jar": java_tokenize(texts),
                     "corpora": pa.array([",".join(corpora_of[t]) for t in texts]).dictionary_encode()})


def karpathy_coco_tokens() -> pa.Table:
    """pycocoevalcap's tokenization of the Karpathy-test references and of each system's candidates."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    rows = pq.read_table(RESOURCES / "smurf_golden.parquet").to_pylist()
    first_system = [row for row in rows if row["system"] == 0]
    references = PTBTokenizer().tokenize({i: [{"caption": r} for r in row["references"]]
                                          for i, row in enumerate(first_system)})
    candidates = [PTBTokenizer().tokenize({i: [{"caption": row["candidate"]}]
                                           for i, row in enumerate(r for r in rows if r["system"] == system)})
                  for system in range(N_SYSTEMS)]
    return pa.table({"references": [references[i] for i in range(len(first_system))],
                     "candidates": [[candidates[s][i][0] for s in range(N_SYSTEMS)] for i in range(len(first_system))]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flickr8k-token", type=Path, required=True, help="Flickr8k.token.txt of the Flickr8k_text package")
    parser.add_argument("--reformulations", type=Path, required=True, help="full_reformulation_dataset.json")
    args = parser.parse_args()
    corpora = shipped_corpora()
    corpora["flickr8k"] = flickr8k_captions(args.flickr8k_token)
    corpora["reformulations"] = reformulation_captions(args.reformulations)
    for name, table in (("ptb_jar_outputs", build_table(corpora)), ("karpathy_coco_tokens", karpathy_coco_tokens())):
        path = ASSETS / f"{name}.parquet"
        pq.write_table(table, path, compression="zstd", compression_level=19)
        print(f"{table.num_rows} rows -> {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
