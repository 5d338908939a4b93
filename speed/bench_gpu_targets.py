"""The GPU figures of step 21 (issue 29, item 6), each beside its goal, one metric per run; every figure labelled warm
or cold, measured or projected, with its MFU (model FLOP utilisation: the FLOPs of the call, counted from the model
shapes by speed/flops.py, per second over the card's dense peak in the forward pass's precision).

* ``vilbertscore`` (goal: >= 1,000 captions/s warm in bfloat16): the first --rows Karpathy-test captions (default
  2,000, five references, 100-box features) through bench_karpathy's real-size random ViLBERT. Each variant gets a
  warm-up call over every row (kernels chosen, graphs captured, code compiled: its seconds are reported as
  ``first_s``), then one timed call with capeval's feature caches emptied: the path before this step (pairs batched by
  length, 64 a batch, every pair embedding its image), batches grouped by image at 128, 256 (the default) and 512
  pairs, then ``cuda_graphs`` and ``torch_compile`` at the default size (compilation stopped after --compile-limit
  seconds). Every variant's largest score difference from the path before, and the default's split between encoding
  (tokenization, batches, forward passes) and matching.
* ``qace_ref`` (goal: the Karpathy test split in < 60 s): bench_karpathy's T5-small stand-ins (random weights decode
  every sequence to its maximum length: a worst case). The models are loaded by a first call on 8 captions (its
  seconds: ``load_s``); then a --probe-caption slice (default 500) per variant (generation batches of 1,024 (the GPU
  default), 512 and 2,048 in float32, 1,024 in bfloat16), each projected to the 5,000 captions, with the seconds in
  question generation, answering and the answer-similarity BERTScore; then, when the default's projection is under
  --full-limit seconds, the whole split in one call (stopped at --full-limit, then left as projected).
* ``clip_score`` (goal: >= 1,500 captions/s cold with decoding spread over all cores, bit-identical preprocessing):
  5,000 captions with 20,010 references and 5,000 distinct synthetic 500 × 375 JPEGs. Cold: the first call (model
  loaded from disk, nothing cached); warm: the same call again (every text and image found encoded). Then, with the
  model loaded and the caches emptied before each, a call with the default worker count (one per usable core but one,
  up to 32), one with the count before this step (8) and the default again, each split into image and text seconds,
  with the DataLoader's decoding rate alone at each count.

--quick shrinks everything (tiny models, a few captions; compilation skipped): a CPU check of this script.

Usage: python speed/bench_gpu_targets.py vilbertscore|qace_ref|clip_score [--device cuda] [--quick] [--rows N]
       [--dtype bfloat16] [--spans FILE] [--probe N] [--full-limit S] [--compile-limit S] [--output JSON]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import torch  # noqa: E402

import flops  # noqa: E402  (this folder is on sys.path when the script runs)
from bench_karpathy import (FULL, QUICK, Overrun, build_runs, caption_words, karpathy_rows, qace_scorer,  # noqa: E402
                            save_qace_models, time_limit)
from timing import timed  # noqa: E402

GOALS = {"vilbertscore": "warm captions/s in bfloat16 >= 1,000", "qace_ref": "Karpathy test split (5,000 captions) < 60 s",
         "clip_score": "cold captions/s >= 1,500"}
SPLIT = 5000
#: CLIP-S's image-decoding workers on CUDA before this step.
WORKERS_BEFORE = 8


class Phases:
    """Seconds spent in named methods of an object during the calls made while it is attached (CUDA work finished at
    each method's end, so that a method is charged for its own kernels)."""

    def __init__(self, owner: Any, names: list[str]):
        self.seconds = dict.fromkeys(names, 0.0)
        for name in names:
            method = getattr(owner, name)

            def wrapped(*args, _method=method, _name=name, **kwargs):
                value, seconds = timed(lambda: _method(*args, **kwargs))
                self.seconds[_name] += seconds
                return value

            setattr(owner, name, wrapped)

    def take(self) -> dict[str, float]:
        """The seconds so far, rounded, and the counters reset."""
        taken = {name: round(seconds, 2) for name, seconds in self.seconds.items()}
        self.seconds = dict.fromkeys(self.seconds, 0.0)
        return taken


def evaluate_call(captions, scorer, inputs: dict, *, batch_size: int | None = None) -> tuple[Any, float]:
    """One ``capeval.evaluate`` call with ``scorer`` (an instance, so that its graphs and compiled code persist):
    the metric's columns and the seconds."""
    import capeval

    result, seconds = timed(lambda: capeval.evaluate(captions, metrics=[scorer], batch_size=batch_size, show_progress=False, **inputs))
    return result.columns, seconds


def largest_difference(a: dict, b: dict) -> float:
    return max(abs(x - y) for column in a for x, y in zip(a[column], b[column]))


def rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def the_rest(seconds: float, parts: dict[str, float]) -> float:
    """The seconds of a call outside its timed parts (never below 0: the parts are rounded)."""
    return round(max(0.0, seconds - sum(parts.values())), 2)


# --------------------------------------------------------------------------- ViLBERTScore


def vilbertscore_flops(scorer, captions: list[str], references: list[list[str]], regions: list) -> int:
    """Matrix FLOPs of every distinct (caption, image) pair a call encodes, at its own text and region lengths."""
    from capeval.scoring.vilbertscore import first_equal_images

    image_of = first_equal_images(regions)
    pairs = dict.fromkeys((caption, image_of[i]) for i, refs in enumerate(references) for caption in (captions[i], *refs))
    texts = list(dict.fromkeys(caption for caption, _ in pairs))
    ids = dict(zip(texts, scorer.model_input_ids(texts, scorer.word_pieces(texts))))
    task = int(scorer.model.task_token)
    return sum(flops.vilbert_pair(scorer.architecture, len(ids[caption]) + task, regions[image].num_boxes + 1, scorer.layer)
               for caption, image in pairs)


def vilbertscore(args, device_name: str, folder: Path) -> dict:
    import capeval
    from capeval.models import clear_feature_caches

    captions, references = karpathy_rows(args.rows or (6 if args.quick else 2000))
    (name, options), inputs = build_runs("vilbertscore", folder, captions, references, QUICK if args.quick else FULL, args.device,
                                         None, args.dtype)
    variants = [("before: pairs batched by length, 64 a batch", {"group_by_image": False}, 64),
                ("grouped by image, 128 a batch", {}, 128),
                ("grouped by image, 256 a batch (the default)", {}, None),
                ("grouped by image, 512 a batch", {}, 512),
                ("cuda_graphs, 256 a batch", {"cuda_graphs": True}, None),
                ("torch_compile, 256 a batch", {"torch_compile": True}, None)]
    rows, before = [], None
    total_flops = None
    for label, extra, batch_size in variants:
        row: dict[str, Any] = {"variant": label, "batch_size": batch_size or "default", "captions": len(captions)}
        rows.append(row)
        if extra.get("torch_compile") and args.quick:
            row["skipped"] = "--quick (compiling takes minutes on a CPU)"
            continue
        scorer = capeval.resolve((name, {**options, **extra}))
        try:
            with time_limit(args.compile_limit if extra.get("torch_compile") else None):
                row["first_s"] = round(evaluate_call(captions, scorer, inputs, batch_size=batch_size)[1], 2)
        except Overrun:
            row["skipped"] = f"the warm-up call (compiling) ran past {args.compile_limit:g} s"
            continue
        clear_feature_caches()
        phases = Phases(scorer, ["encode"]) if not extra and batch_size is None else None
        scores, seconds = evaluate_call(captions, scorer, inputs, batch_size=batch_size)
        if total_flops is None:
            total_flops = vilbertscore_flops(scorer, captions, references, inputs["region_features"])
        before = before or scores
        row.update({"warm_s": round(seconds, 2), "captions_per_s": round(len(captions) / seconds, 1),
                    "mfu": rounded(flops.mfu(total_flops, seconds, device_name, args.dtype)),
                    "max_abs_diff_vs_before": float(f"{largest_difference(before, scores):.2e}")})
        if phases:
            encode = phases.take()["encode"]
            row["split_s"] = {"encode (tokenize, batches, forward passes)": encode, "matching and the rest": the_rest(seconds, {"": encode})}
        print(f"| {label} | {row.get('first_s')} | {row['warm_s']} | {row['captions_per_s']} | {row['mfu']} | "
              f"{row['max_abs_diff_vs_before']} |", flush=True)
    return {"goal": GOALS["vilbertscore"], "dtype": args.dtype, "captions": len(captions),
            "gflop_per_caption": round(total_flops / len(captions) / 1e9, 1) if total_flops else None, "rows": rows}


# --------------------------------------------------------------------------- QACE-Ref


class GenerationFlops:
    """Counts the matrix FLOPs of QACE's generation (every row decodes as many steps as its batch, on its own input
    length) and of its answer-similarity encoder (each sentence at its own length) while attached."""

    def __init__(self):
        import capeval.backbones.t5 as t5
        from capeval.text.encoder import TextEncoder

        self.total = 0
        generate, encode = t5.greedy_generate, TextEncoder.forward_ids

        def counted_generate(model, *, max_length, **inputs):
            sequences, answerability = generate(model, max_length=max_length, **inputs)
            steps = len(sequences[0]) - 1
            self.total += sum(flops.t5_generation(model.config, int(length), steps) for length in inputs["attention_mask"].sum(1))
            return sequences, answerability

        def counted_encode(encoder, id_lists, **kwargs):
            self.total += sum(flops.bert_encoder(encoder.model.config, len(ids), layers=encoder.layer) for ids in id_lists)
            return encode(encoder, id_lists, **kwargs)

        t5.greedy_generate, TextEncoder.forward_ids = counted_generate, counted_encode

    def take(self) -> int:
        total, self.total = self.total, 0
        return total


def qace_ref(args, device_name: str, folder: Path) -> dict:
    from capeval.models import clear_feature_caches

    captions, references = karpathy_rows(SPLIT)
    spans = json.loads(Path(args.spans).read_text()) if args.spans else None
    sizes = QUICK if args.quick else FULL
    options = save_qace_models(folder, caption_words(captions + [r for refs in references for r in refs]), sizes, variant="ref",
                               device=args.device)
    probe = min(args.probe or (4 if args.quick else 500), SPLIT)
    counter = GenerationFlops()
    result: dict[str, Any] = {"goal": GOALS["qace_ref"], "probe_captions": probe, "rows": []}
    variants = [("float32", None), ("float32", 512), ("float32", 2048), ("bfloat16", None)]
    for dtype, batch_size in variants:
        scorer = qace_scorer(options, spans, dtype)
        if "load_s" not in result:  # the models load once (their cache is shared by every dtype)
            result["load_s"] = round(evaluate_call(captions[:8], scorer, {"references": references[:8]})[1], 2)
        phases = Phases(scorer, ["ask", "answer_on_text", "_compare"])
        clear_feature_caches()
        counter.take()
        _, seconds = evaluate_call(captions[:probe], scorer, {"references": references[:probe]}, batch_size=batch_size)
        split, done = phases.take(), counter.take()
        row = {"dtype": dtype, "batch_size": batch_size or "default (1,024 on GPU)", "probe_s": round(seconds, 2),
               "captions_per_s": round(probe / seconds, 1), "projected_split_s": round(seconds * SPLIT / probe, 1),
               "gflop": round(done / 1e9, 1), "mfu": rounded(flops.mfu(done, seconds, device_name, dtype)),
               "split_s": {"questions (spans + generation)": split["ask"], "answers (generation)": split["answer_on_text"],
                           "answer similarity (BERTScore)": split["_compare"], "the rest": the_rest(seconds, split)}}
        result["rows"].append(row)
        print(f"| {dtype} | {row['batch_size']} | {probe} | {row['probe_s']} | {row['projected_split_s']} | {row['mfu']} |", flush=True)
    default = result["rows"][0]
    if args.quick or default["projected_split_s"] > args.full_limit:
        result["split"] = f"not run: projected {default['projected_split_s']} s" + (" (--quick)" if args.quick else "")
        return result
    scorer = qace_scorer(options, spans)
    clear_feature_caches()
    try:
        with time_limit(args.full_limit):
            _, seconds = evaluate_call(captions, scorer, {"references": references})
        result["split"] = {"captions": SPLIT, "seconds": round(seconds, 1), "captions_per_s": round(SPLIT / seconds, 1), "measured": True}
    except Overrun:
        result["split"] = f"stopped past {args.full_limit:g} s (the projection stands)"
    return result


# --------------------------------------------------------------------------- CLIP-S


def decoding_rate(images: list, workers: int, batch_size: int = 64) -> float:
    """Images per second through CLIP-S's DataLoader alone (decoded, resized, cropped, normalised; no model)."""
    from capeval.backbones.clip import ImagePixels, stack_pixels

    dataset = ImagePixels(images, [f"images[{i}]" for i in range(len(images))], mode="code")
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=min(workers, len(images)), collate_fn=stack_pixels)
    start = time.perf_counter()
    for _ in loader:
        pass
    return len(images) / (time.perf_counter() - start)


def clip_score(args, device_name: str, folder: Path) -> dict:
    import capeval
    from capeval.backbones.clip import default_image_workers
    from capeval.models import clear_feature_caches

    captions, references = karpathy_rows(args.rows or (6 if args.quick else SPLIT))
    (name, options), inputs = build_runs("clip_score", folder, captions, references, QUICK if args.quick else FULL, args.device, None)
    scorer = capeval.resolve((name, options))
    _, cold = evaluate_call(captions, scorer, inputs)
    _, warm = evaluate_call(captions, scorer, inputs)
    encoder = scorer.encoder
    texts = list(dict.fromkeys([*captions, *(r for refs in references for r in refs)]))
    call_flops = len(captions) * flops.clip_image(encoder.model.config) + sum(
        flops.clip_text(encoder.model.config, len(ids)) for ids in encoder.token_ids(texts, scorer.mode))
    new_workers = default_image_workers(torch.device(args.device))
    result: dict[str, Any] = {
        "goal": GOALS["clip_score"], "captions": len(captions), "references": sum(map(len, references)),
        "workers_before": 1 if args.quick else WORKERS_BEFORE, "workers_now": new_workers, "cpu_cores": len(os.sched_getaffinity(0)),
        "first_call": {"cold_s": round(cold, 2), "captions_per_s": round(len(captions) / cold, 1),
                       "mfu": rounded(flops.mfu(call_flops, cold, device_name, "float32"))},
        "warm": {"warm_s": round(warm, 2), "captions_per_s": round(len(captions) / warm, 1)}, "rows": []}
    before = 1 if args.quick else WORKERS_BEFORE  # a CPU check need not fork eight workers
    # The default twice, around the count before: the two give the spread between calls of one setting.
    for label, workers in (("now", None), ("before", before), ("now, again", None)):
        measured = capeval.resolve((name, {**options, "num_workers": workers}))
        phases = Phases(measured.encoder, ["image_features", "text_features"])
        clear_feature_caches()
        _, seconds = evaluate_call(captions, measured, inputs)
        split = phases.take()
        count = new_workers if workers is None else workers
        row = {"workers": count, "label": label, "cold_model_loaded_s": round(seconds, 2), "captions_per_s": round(len(captions) / seconds, 1),
               "mfu": rounded(flops.mfu(call_flops, seconds, device_name, "float32")),
               "split_s": {"images (decode + encode)": split["image_features"], "texts (tokenize + encode)": split["text_features"],
                           "the rest": the_rest(seconds, split)},
               "decoding_alone_images_per_s": round(decoding_rate(inputs["images"], count), 1)}
        result["rows"].append(row)
        print(f"| {count} | {row['cold_model_loaded_s']} | {row['captions_per_s']} | {row['split_s']} | {row['decoding_alone_images_per_s']} |",
              flush=True)
    return result


MEASURES: dict[str, Callable[[Any, str, Path], dict]] = {"vilbertscore": vilbertscore, "qace_ref": qace_ref, "clip_score": clip_score}


def measure(metric: str, args: argparse.Namespace, device_name: str, folder: Path) -> dict:
    """One goal's figures, labelled with the metric and the card (``device_name``) at the top and in every row, so
    that rows copied out of the JSON keep it."""
    result = MEASURES[metric](args, device_name, folder)
    for row in result["rows"]:
        row["device"] = device_name
    return {"metric": metric, "device": device_name, "quick": args.quick, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("metric", choices=sorted(MEASURES))
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="tiny stand-in models and a few captions: checks the script, measures nothing")
    parser.add_argument("--rows", type=int, help="Karpathy-test captions (ViLBERTScore: 2,000; CLIP-S: 5,000)")
    parser.add_argument("--dtype", default="bfloat16", help="ViLBERTScore's forward-pass precision (default bfloat16)")
    parser.add_argument("--spans", default=os.environ.get("CAPEVAL_BENCH_SPANS"),
                        help="QACE answer spans written by bench_karpathy.py --write-spans (where spaCy is not installed)")
    parser.add_argument("--probe", type=int, help="QACE-Ref captions per measured slice (default 500)")
    parser.add_argument("--full-limit", type=float, default=90, help="QACE-Ref: seconds the whole split may take (default 90)")
    parser.add_argument("--compile-limit", type=float, default=150, help="ViLBERTScore: seconds for compiling (default 150)")
    parser.add_argument("--output", help="write the figures as JSON here")
    args = parser.parse_args()
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    print(f"{args.metric} on {device_name} ({torch.get_num_threads()} torch threads, {len(os.sched_getaffinity(0))} cores); "
          f"{'tiny (--quick)' if args.quick else 'real-size'} random-weight models; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.metric, args, device_name, Path(folder))
    print(json.dumps(result, indent=1))
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
