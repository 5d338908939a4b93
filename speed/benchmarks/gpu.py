"""The GPU benchmarks: every metric on the COCO Karpathy test split (5,000 captions, 20,010 references), the batch-size
sweeps, UMIC with precomputed features at GPU scale, and step 21's goals (``bash speed/gpu_suite.sh`` runs those with
the CUDA parity tests). Each is declared for CUDA: it runs where a GPU is, and elsewhere is recorded as skipped, with
why (``--device cpu --quick`` checks a declaration on the CPU with tiny models: a check, not a figure).

The stand-in models (random weights at the paper models' real sizes, tokenizers from the captions' words) are built by
``speed/bench_karpathy.py``, whose timing with a time limit and a projection from a probe the GPU suite uses too; the
goals' measurements (MFU from ``speed/flops.py``) are ``speed/bench_gpu_targets.py``'s."""

from __future__ import annotations

from pathlib import Path

from harness import Benchmark, Side, side_device

#: The metrics of the Karpathy split benchmark, in order (bench_karpathy.METRICS).
KARPATHY = ("bleu", "rouge", "cider", "meteor", "smurf", "bert_tbr", "bertscore", "clip_score", "polos", "umic",
            "vilbertscore", "qace_ref", "qace_img")
TITLES = {"bleu": "BLEU-1..4", "rouge": "ROUGE-L", "cider": "CIDEr-D", "meteor": "METEOR", "smurf": "SMURF",
          "bert_tbr": "BERT-TBR", "bertscore": "BERTScore", "clip_score": "CLIP-S + RefCLIP-S", "polos": "Polos",
          "umic": "UMIC", "vilbertscore": "ViLBERTScore", "qace_ref": "QACE-Ref", "qace_img": "QACE-Img"}


def karpathy_data(rows: int):
    def data(folder: Path, quick: bool):
        count = 8 if quick else rows
        return {"rows": count, "quick": quick}, {
            "description": "SMURF's Karpathy-test captions (system 0) with their references, a synthetic 500 × 375 JPEG "
                           "or synthetic region features per caption; random weights at the paper models' real sizes",
            "items": count}
    return data


def karpathy_side(metric: str, dtype: str, batch_size: int | None = None):
    """``capeval.evaluate`` of one metric: built (untimed) in the side's process, then cold (models loaded from disk,
    every cache empty) and warm (the same call again). With a ``batch_size`` (the sweeps), every call starts with
    capeval's cross-call feature caches emptied, so that each encodes everything in batches of that size (the models
    stay loaded)."""
    state: dict = {}

    def prepare(inputs: dict) -> dict:
        import tempfile

        from bench_karpathy import FULL, QUICK, build_runs, karpathy_rows

        captions, references = karpathy_rows(inputs["rows"])
        folder = Path(tempfile.mkdtemp(prefix="karpathy_"))
        state["spec"], state["inputs"] = build_runs(metric, folder, captions, references, QUICK if inputs["quick"] else FULL,
                                                    side_device("cuda"), None, dtype)
        state["captions"] = captions
        return inputs

    def call(inputs: dict, label: str) -> dict:
        import capeval
        from capeval.models import clear_feature_caches

        if batch_size is not None:
            clear_feature_caches()
        result = capeval.evaluate(state["captions"], metrics=[state["spec"]], batch_size=batch_size, show_progress=False,
                                  **state["inputs"])
        return {"corpus": {key: float(value) for key, value in result.corpus.items()}}
    return prepare, call


def target_side(metric: str):
    """One of step 21's goals (bench_gpu_targets): its own figures (rows with captions/s, MFU, the goal)."""
    def call(inputs: dict, label: str) -> dict:
        import argparse
        import tempfile

        import bench_gpu_targets

        args = argparse.Namespace(device=side_device("cuda"), quick=inputs["quick"], rows=None, dtype="bfloat16", spans=None,
                                  probe=None, full_limit=80, compile_limit=150, output=None)
        name = "CPU" if args.device == "cpu" else __import__("torch").cuda.get_device_name()
        with tempfile.TemporaryDirectory() as folder:
            return {"figures": bench_gpu_targets.measure(metric, args, name, Path(folder))}
    return call


def declare() -> list[Benchmark]:
    benchmarks = []
    for name, dtype, metrics in (("karpathy", "float32", KARPATHY), ("karpathy_bf16", "bfloat16", ("umic", "vilbertscore"))):
        sides = []
        for metric in metrics:
            prepare, call = karpathy_side(metric, dtype)
            sides.append(Side(metric, call, prepare=prepare, label=TITLES[metric], requires=("torch", "transformers")))
        benchmarks.append(Benchmark(
            name, f"Every metric on the COCO Karpathy test split, one `capeval.evaluate` call each ({dtype})" if name == "karpathy"
            else f"UMIC and ViLBERTScore on the Karpathy test split in {dtype}", karpathy_data(5000), device="cuda",
            cores=None, sides=tuple(sides),
            note="Cold: the first call of the metric's process, models loaded from disk, every cache empty; warm: the same "
                 "call again (BERT-TBR, BERTScore, CLIP-S and Polos find their texts or images encoded)."))
    for name, rows, runs in (("batch_sizes", 2000, (("vilbertscore", "float32", (64, 128, 256)), ("vilbertscore", "bfloat16", (64, 128, 256)),
                                                      ("umic", "float32", (128, 512)), ("umic", "bfloat16", (128, 512)))),
                             ("batch_sizes_qace", 1000, (("qace_ref", "float32", (256, 512, 1024)),))):
        sides = []
        for metric, dtype, sizes in runs:
            for size in sizes:
                prepare, call = karpathy_side(metric, dtype, size)
                sides.append(Side(f"{metric} {dtype} {size}", call, prepare=prepare, calls=("warm-up", "warm"),
                                  label=f"{TITLES[metric]}, {dtype}, batch {size}", requires=("torch", "transformers")))
        benchmarks.append(Benchmark(name, f"Warm captions/s by forward-pass precision and batch size, {rows:,} Karpathy-test "
                                    "captions", karpathy_data(rows), device="cuda", cores=None, sides=tuple(sides),
                                    note="What a batch holds is the metric's own: captions (UMIC), (caption, image) pairs "
                                         "(ViLBERTScore), sequences per generation batch (QACE)."))
    for metric, goal in (("vilbertscore", "warm captions/s in bfloat16 >= 1,000 on 2,000 captions"),
                         ("qace_ref", "the Karpathy test split (5,000 captions) in < 60 s"),
                         ("clip_score", "cold captions/s >= 1,500 on the split")):
        benchmarks.append(Benchmark(
            f"gpu_{metric}", f"Step 21's goal for {TITLES[metric]}: {goal}, with the card's name and MFU",
            karpathy_data(5000), device="cuda", cores=None,
            sides=(Side(metric, target_side(metric), calls=("cold process",), label=TITLES[metric],
                        requires=("torch", "transformers")),),
            note="Its figures (each labelled warm or cold, measured or projected, with MFU) are bench_gpu_targets.py's; "
                 "`bash speed/gpu_suite.sh` runs the three with the CUDA parity tests."))
    return benchmarks
