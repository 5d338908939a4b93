"""Warm captions/s of model metrics on the COCO Karpathy rows, by forward-pass precision and batch size.

Per metric and ``--dtype``: bench_karpathy's stand-in models at the paper models' real sizes (``--quick``: tiny ones,
a check of this script), one warm-up call over every row (models loaded, the kernels of every shape chosen), then one
timed ``capeval.evaluate(..., batch_size=N)`` per ``--batch-sizes`` value, each after capeval's cross-call feature
caches are emptied, so that every call encodes everything (warm vs warm: the models stay loaded). What a batch holds
is the metric's own: captions (UMIC), (caption, image) pairs (ViLBERTScore), sequences per generation batch (QACE),
texts or images (CLIP-S, Polos), sentences (BERTScore, BERT-TBR, SMURF).

On an H100 (docs/speed.md): ViLBERTScore 266-279 captions/s in float32 and 429-530 in bfloat16 over batches of 64-256;
QACE-Ref 45 captions/s with generation batches of 256 and 66 with 1,024.

Usage: python speed/bench_batch_sizes.py [--device cuda] [--rows 1000] [--metrics vilbertscore,umic,qace_ref]
       [--dtype float32 bfloat16] [--batch-sizes 64,256,1024] [--spans FILE] [--quick] [--output JSON]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

from bench_karpathy import FULL, METRICS, QUICK, build_runs, karpathy_rows, spec_dtype  # noqa: E402  (this folder is on sys.path)
from timing import timed  # noqa: E402

DTYPES = ("float32", "bfloat16", "float16")
TEXT_METRICS = ("bleu", "rouge", "cider", "meteor")


def sweep(name: str, dtype: str, batch_sizes: list[int], captions, references, args, spans: dict | None) -> list[dict]:
    """One row per batch size: warm seconds and captions/s of ``name`` in ``dtype`` on ``captions``."""
    import capeval
    from capeval.models import clear_feature_caches

    with tempfile.TemporaryDirectory() as folder:
        spec, inputs = build_runs(name, Path(folder), captions, references, QUICK if args.quick else FULL, args.device, spans, dtype)
        capeval.evaluate(captions, metrics=[spec], show_progress=False, **inputs)  # the warm-up call
        rows = []
        for batch_size in batch_sizes:
            clear_feature_caches()
            seconds = timed(lambda: capeval.evaluate(captions, metrics=[spec], batch_size=batch_size, show_progress=False, **inputs))[1]
            rows.append({"metric": name, "dtype": spec_dtype(spec), "batch_size": batch_size, "captions": len(captions),
                         "warm_s": round(seconds, 2), "captions_per_s": round(len(captions) / seconds, 1)})
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--rows", type=int, default=1000, help="Karpathy-test captions scored by each call")
    parser.add_argument("--metrics", default="vilbertscore,umic,qace_ref",
                        help="comma-separated model metrics, from: " + ", ".join(m for m in METRICS if m not in TEXT_METRICS))
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=DTYPES, help="forward-pass precisions (default float32)")
    parser.add_argument("--batch-sizes", default="64,256,1024", help="comma-separated batch sizes")
    parser.add_argument("--spans", help="QACE answer spans written by bench_karpathy.py --write-spans (where spaCy is not installed)")
    parser.add_argument("--quick", action="store_true", help="tiny stand-in models: checks the script, measures nothing")
    parser.add_argument("--output", help="also write the rows as JSON here")
    args = parser.parse_args()
    metrics = [m for m in args.metrics.split(",") if m]
    if unknown := sorted(set(metrics) - (set(METRICS) - set(TEXT_METRICS))):
        parser.error(f"not a model metric of bench_karpathy: {unknown}")
    batch_sizes = [int(size) for size in args.batch_sizes.split(",")]
    import torch
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    captions, references = karpathy_rows(args.rows)
    spans = json.loads(Path(args.spans).read_text()) if args.spans else None
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({torch.get_num_threads()} torch threads)"
    print(f"{len(captions)} Karpathy-test captions on {where}; {'tiny (--quick)' if args.quick else 'real-size'} random-weight "
          f"models; warm calls, feature caches emptied before each; load average {os.getloadavg()[0]:.1f}")
    print("\n| metric | dtype | batch size | warm s | captions/s |\n|---|---|---|---|---|")
    rows: list[dict] = []
    for name in metrics:
        for dtype in args.dtype:
            for row in sweep(name, dtype, batch_sizes, captions, references, args, spans):
                rows.append(row)
                print(f"| {name} | {row['dtype']} | {row['batch_size']} | {row['warm_s']} | {row['captions_per_s']} |", flush=True)
            if args.output:  # after every sweep, so a run stopped part-way keeps what it measured
                Path(args.output).write_text(json.dumps({"device": where, "quick": args.quick, "rows": rows}, indent=1))
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
