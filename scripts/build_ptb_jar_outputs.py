#!/usr/bin/env python
"""Build ``tests/assets/ptb_jar_outputs.parquet``: the CoreNLP 3.4.1 jar's COCO tokenization of every caption capeval
ships or is evaluated on, so the pure-Python tokenizer can be compared with it without Java.

One row per distinct caption string: ``text`` (as in the corpus), ``jar`` (what pycocoevalcap's ``PTBTokenizer``
returns for it: the jar's ``-preserveLines -lowerCase`` tokens without the toolkit's punctuation list) and
``corpora`` (the corpora it occurs in, comma-separated). The corpora are the bundled hub datasets (Flickr8k-Expert,
Flickr8k-CF, PASCAL-50S with all 50 references per image, Composite, THumB, CapEval1k), the package resources
(SMURF's Karpathy-test caption sets, the Flickr8k reference corpus, the demo captions) and two public files
given on the command line: Flickr8k's ``Flickr8k.token.txt`` (all 40,460 captions, Hodosh et al. 2013) and the
reformulations dataset (``full_reformulation_dataset.json`` of uriberger/caption_evaluation).

    python scripts/build_ptb_jar_outputs.py --flickr8k-token Flickr8k.token.txt \\
        --reformulations full_reformulation_dataset.json

Needs Java and pycocoevalcap (the jar) or ``$CAPEVAL_CORENLP_JAR``.
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
OUTPUT = REPO / "tests" / "assets" / "ptb_jar_outputs.parquet"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flickr8k-token", type=Path, required=True, help="Flickr8k.token.txt of the Flickr8k_text package")
    parser.add_argument("--reformulations", type=Path, required=True, help="full_reformulation_dataset.json")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    corpora = shipped_corpora()
    corpora["flickr8k"] = flickr8k_captions(args.flickr8k_token)
    corpora["reformulations"] = reformulation_captions(args.reformulations)
    table = build_table(corpora)
    pq.write_table(table, args.output, compression="zstd", compression_level=19)
    print(f"{table.num_rows} distinct strings -> {args.output} ({args.output.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
