#!/usr/bin/env python
"""Build ``shared/capeval/resources/smurf_golden.parquet`` from SMURF's released example caption sets.

One row per candidate (20,000 = 5,000 COCO Karpathy-test images × 4 captioning systems, in the
released order): ``image_id``, ``system`` (0 = C1, the human caption, … 3 = C4), the raw
``candidate``, the raw ``references`` of its image (file order) and the golden ``SPARCS``,
``SPURTS``, ``MIMA``, ``SMURF`` from ``results/smurf_scores.json``. Captions are stored as
released (not preprocessed). The provenance note, with the data's MIT licence, is written beside it
(``smurf_golden_provenance.txt``).

Only this script reads the shared raw data (``--source``, default ``../shared/data/smurf_caption_sets``).

    python scripts/build_smurf_golden.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "smurf_caption_sets"
RESOURCES = REPO / "shared" / "capeval" / "resources"
N_SYSTEMS = 4
SCORE_KEYS = ("SPARCS", "SPURTS", "MIMA", "SMURF")

PROVENANCE = """\
smurf_golden.parquet: SMURF's example caption sets and golden scores
=====================================================================

Source: github.com/JoshuaFeinglass/SMURF at commit f5ae4e3b1e2dce6e0c2b1ed16142b5dbe57271c2
  data/karpathy_cand.json  (md5 992ded8ea2099b8a36f4670dd349ee95) -> image_id, system, candidate
  data/karpathy_ref.json   (md5 9adeec4056aff43940c0ca0898546347) -> references (grouped by image, file order)
  results/smurf_scores.json (md5 decb45f4aee7b9cb4f19c5fa8769365c) -> SPARCS, SPURTS, MIMA, SMURF
Built by scripts/build_smurf_golden.py.

Rows: 20,000 candidates = 5,000 COCO Karpathy-test images x 4 captioning systems, in the released
order [C1 image 1, C2 image 1, C3 image 1, C4 image 1, C1 image 2, ...]; system = 0..3 for C1..C4.
C1 is the human caption #0 of each image (the README's ground-truth captioner); the other captions of
the image are its references (4, or 5 for 10 images). The repository does not name C2-C4; their
system-level grammar penalties (-7.467, -7.561, -4.465) equal the paper's for M2, X-Transformer and
Google. Captions are stored raw; the golden scores were computed on smurf.eval.preprocess'ed text
by the repository's smurf_example.py (fuse=True). No images, no human judgments.

Licence of the source data (the repository's LICENSE, MIT):

"""


def build_table(source: Path) -> pa.Table:
    candidates = json.loads((source / "karpathy_cand.json").read_text(encoding="utf-8"))
    references = json.loads((source / "karpathy_ref.json").read_text(encoding="utf-8"))
    scores = json.loads((source / "smurf_scores.json").read_text(encoding="utf-8"))
    refs_of: dict[str, list[str]] = {}
    for ref in references:
        refs_of.setdefault(ref["image_id"], []).append(ref["caption"])
    if any(len(scores[key]) != len(candidates) for key in SCORE_KEYS):
        raise ValueError("smurf_scores.json is not aligned with karpathy_cand.json")
    columns = {
        "image_id": pa.array([c["image_id"] for c in candidates], pa.string()).dictionary_encode(),
        "system": pa.array([i % N_SYSTEMS for i in range(len(candidates))], pa.int8()),
        "candidate": pa.array([c["caption"] for c in candidates], pa.string()),
        "references": pa.array([refs_of[c["image_id"]] for c in candidates], pa.list_(pa.string())),
    }
    columns.update({key: pa.array([float(v) for v in scores[key]], pa.float64()) for key in SCORE_KEYS})
    return pa.table(columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--output", type=Path, default=RESOURCES)
    args = parser.parse_args()
    table = build_table(args.source)
    args.output.mkdir(parents=True, exist_ok=True)
    target = args.output / "smurf_golden.parquet"
    pq.write_table(table, target, compression="zstd", compression_level=19)
    licence = (args.source / "LICENSE").read_text(encoding="utf-8")
    (args.output / "smurf_golden_provenance.txt").write_text(PROVENANCE + licence, encoding="utf-8")
    print(f"wrote {target} ({target.stat().st_size:,} bytes, {table.num_rows} rows)")


if __name__ == "__main__":
    main()
