#!/usr/bin/env python
"""Build ``shared/capeval/resources/flickr8k_references.json.gz``: the references of the bundled Flickr8k benchmarks.

    python scripts/build_reference_corpus.py

The 1,000 Flickr8k test images of ``hub/flickr8k_expert`` and ``hub/flickr8k_cf`` (the same images, five
references each) in image-file order. CIDEr-D and BERT-TBR take document frequencies from this set with
``idf="flickr8k"`` (:mod:`capeval.text.reference_corpus`), so a single caption gets a meaningful score.
Only the sentences are stored: document frequencies depend on the tokenizer and are computed on first use.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("flickr8k_expert", "flickr8k_cf")
TARGET = REPO / "shared" / "capeval" / "resources" / "flickr8k_references.json.gz"


def reference_sets() -> dict[str, list[str]]:
    """image file -> its references, over both Flickr8k benchmarks (which must agree)."""
    sets: dict[str, list[str]] = {}
    for name in SOURCES:
        for row in pd.read_parquet(REPO / "hub" / name / "data" / "test-00000-of-00001.parquet").itertuples():
            references = [str(r) for r in row.references]
            if sets.setdefault(row.image_file, references) != references:
                raise SystemExit(f"{name}: {row.image_file} has other references than before")
    return dict(sorted(sets.items()))


def main() -> None:
    sets = reference_sets()
    document = {"source": "Flickr8k test references (Hodosh et al., JAIR 2013) from hub/" + " and hub/".join(SOURCES),
                "images": list(sets), "references": list(sets.values())}
    # mtime=0: the same input gives the same bytes.
    TARGET.write_bytes(gzip.compress(json.dumps(document, ensure_ascii=False).encode("utf-8"), mtime=0))
    print(f"wrote {TARGET} ({len(sets)} images, {TARGET.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
