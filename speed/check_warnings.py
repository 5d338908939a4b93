"""Run every metric that runs here over Flickr8k-Expert's 16,992 P2 rows and fail on any warning from capeval.

The text metrics run as the registry's offline configurations (all-MiniLM-L6-v2 standing in for the paper's
BERT models, SMURF's SPURTS and MIMA included); UMIC, ViLBERTScore and QACE-Img need image features the benchmark
does not ship, so they score each caption against the bundled sample image's features with small random models
(their numbers mean nothing; the run checks that nothing warns). Prints the warnings by origin and exits 1 if any
came from capeval's own code.

Usage: python speed/check_warnings.py [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import capeval  # noqa: E402
from capeval.benchmarks import prepare  # noqa: E402
from capeval.registry import offline_runs  # noqa: E402


def p2_rows(limit: int | None) -> tuple[list[str], list[list[str]]]:
    """One row per expert rating (P2): each candidate three times, with its references."""
    bench = prepare("flickr8k_expert")
    items = bench.correlations[1].item[:limit]
    return [bench.items.candidates[i] for i in items], [bench.items.references[i] for i in items]


def configurations() -> list[tuple[str, str, dict]]:
    """(label, metric, options) for every metric that runs here."""
    runs = [(run.label, run.metric, options) for run in offline_runs() if (options := run.resolved_options()) is not None]
    minilm = next(options["model_name"] for label, metric, options in runs if metric == "bert_tbr" and "model_name" in options)
    return runs + [("SMURF (MiniLM stand-ins)", "smurf", {"spurts_model": minilm, "mima_model": minilm})]


def image_configurations(folder: str) -> list[tuple[str, str, dict]]:
    """UMIC and ViLBERTScore with small random models saved in ``folder`` (their scores are meaningless)."""
    from transformers import BertTokenizer

    from capeval.backbones.uniter import save_random_checkpoint, uniter_config
    from capeval.backbones.vilbert import read_vilbert_config
    from capeval.backbones.vilbert import save_random_checkpoint as save_random_vilbert

    minilm_vocab = next(o["model_name"] for _, m, o in configurations() if m == "bert_tbr" and "model_name" in o)
    cased = BertTokenizer.from_pretrained(minilm_vocab, do_lower_case=False)
    cased.save_pretrained(f"{folder}/cased")
    umic = save_random_checkpoint(f"{folder}/umic.pt", uniter_config(vocab_size=len(cased), hidden_size=64, num_hidden_layers=2,
                                                                    num_attention_heads=4, intermediate_size=128), seed=0)
    config = {"vocab_size": len(cased), "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
              "v_hidden_size": 64, "v_num_attention_heads": 4, "v_intermediate_size": 128, "bi_hidden_size": 64,
              "bi_num_attention_heads": 4}
    with open(f"{folder}/vilbert.json", "w", encoding="utf-8") as handle:
        import json

        json.dump(config, handle)
    vilbert = save_random_vilbert(f"{folder}/vilbert.bin", read_vilbert_config(f"{folder}/vilbert.json"))
    return [("UMIC (random UNITER)", "umic", {"checkpoint": umic, "tokenizer": f"{folder}/cased", "num_attention_heads": 4}),
            ("ViLBERTScore (random ViLBERT)", "vilbertscore", {"checkpoint": vilbert, "config": f"{folder}/vilbert.json",
                                                               "tokenizer": minilm_vocab})]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="the first N of the 16,992 rows")
    args = parser.parse_args()
    from capeval.samples import sample_region_features

    predictions, references = p2_rows(args.limit)
    features = [str(sample_region_features())] * len(predictions)
    by_origin: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        for label, metric, options in configurations() + image_configurations(folder):
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                module = capeval.load(metric, **options)
                inputs = {"references": references} if module.needs_references else {}
                if module.needs_images:
                    inputs["region_features"] = features
                module.compute(predictions=predictions, **inputs)
            for warning in caught:
                by_origin[(label, warning.filename, str(warning.message)[:120])] += 1
            print(f"- {label}: {len(predictions):,} rows in {time.perf_counter() - start:.1f} s, {len(caught)} warning(s)")
    ours = {key: n for key, n in by_origin.items() if f"{os.sep}capeval{os.sep}" in key[1]}
    for (label, filename, message), n in by_origin.items():
        print(f"  {'CAPEVAL ' if (label, filename, message) in ours else ''}{label}: {n}× {filename}: {message}")
    print(f"\n{len(ours)} kind(s) of warning from capeval's own code" + ("" if ours else " (none)"))
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
