"""Every metric on the COCO Karpathy test split: seconds per metric for 5,000 captions with ~5 references each.

The captions are one system's 5,000 Karpathy-test captions and their references, bundled with capeval (SMURF's
golden set). Each metric runs alone through ``capeval.evaluate``, the one-call API a user takes, on --device. The
paper checkpoints cannot be downloaded here, so random weights at each paper model's real sizes stand in for them
(their scores mean nothing; their cost is the real models'):

* BERT-TBR: BERT-base (12 × 768), layer 8; BERTScore: RoBERTa-large (24 × 1024), layer 17;
* SMURF: SPARCS, plus SPURTS on a DistilRoBERTa (6 × 768) and MIMA on a DistilBERT (6 × 768);
* CLIP-S + RefCLIP-S: CLIP ViT-B/32 (PAC-S runs the same computation with other weights, so its time is CLIP-S's);
* Polos: RoBERTa-base + CLIP ViT-B/32 + the released head (6144 → 2304 → 1152 → 1);
* UMIC: UNITER-base (12 × 768); ViLBERTScore: ViLBERT bert_base_6layer_6conect (12 text + 6 image layers);
* QACE-Ref and QACE-Img: T5-small question generation, question answering and Visual-T5 (the released Visual-T5's
  size; the demo's QG/QA models are T5-base), BERTScore on a BERT-base. Random T5 weights rarely emit ``</s>``, so
  nearly every question and answer runs to its maximum length: the worst case, real models stop sooner.

Tokenizers are built from the captions' words (a caption costs about one token per word, as with the real
vocabularies). Every caption gets its own synthetic 500 × 375 JPEG (CLIP-S, Polos: 5,000 distinct images, decoded
by the scorer) and region features (UMIC: 36 boxes, ViLBERTScore and QACE-Img: 100 boxes; drawn from a pool of 64).

Per metric: ``cold`` is the first call (models loaded from disk onto the device, every cache empty); ``warm`` the
same call again in the same process (models loaded, and capeval's cross-call caches hit: BERT-TBR, BERTScore and
CLIP-S find every sentence encoded, CLIP-S and Polos also every image's CLIP features, so the first three's warm
time is a cache's, not a forward pass's or JPEG decoding's); captions/s is the
cold call's, model loading included. A call that
runs past --limit seconds is stopped; then a --probe-caption call (models loaded by then) measures its rate and the full split's time is
projected from it (labelled "projected"; the encodings the stopped call had cached are emptied first, so the probe
encodes and decodes as a cold call does). QACE finds its answer spans with spaCy; where spaCy is not installed
(e.g. a bare GPU machine) ``--spans FILE`` gives the spans spaCy found for these captions, written beforehand with
``--write-spans FILE`` on a machine that has it (the same spans, so the same work).

``--dtype bfloat16`` runs every model metric that declares a ``dtype`` option in that precision (the others in
float32, as the table's dtype column says).

Usage: python speed/bench_karpathy.py [--device cuda] [--rows 5000] [--metrics bleu,umic,...] [--limit 120]
       [--dtype bfloat16] [--quick] [--spans FILE | --write-spans FILE] [--output JSON]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from timing import timed  # noqa: E402  (this folder is on sys.path when the script runs)

#: Every metric this script times, in order (text metrics first: they need no model).
METRICS = ("bleu", "rouge", "cider", "meteor", "smurf", "bert_tbr", "bertscore", "clip_score", "polos", "umic",
           "vilbertscore", "qace_ref", "qace_img")
#: Sizes of the stand-in models; --quick shrinks every one (a CPU check of this script, not a measurement).
FULL = {"bert": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
        "roberta_large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
        "roberta_base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
        "distilroberta": dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072),
        "distilbert": dict(dim=768, n_layers=6, n_heads=12, hidden_dim=3072),
        "clip": dict(hidden_size=512, vision_width=768, layers=12, heads=8, projection_dim=512),
        "t5": dict(d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8),
        "vilbert": {}, "uniter_layers": 12, "polos_head": (2304, 1152), "bert_tbr_layer": 8, "bertscore_layer": 17}
QUICK = {"bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
         "roberta_large": dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64),
         "roberta_base": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
         "distilroberta": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
         "distilbert": dict(dim=32, n_layers=2, n_heads=2, hidden_dim=64),
         "clip": dict(hidden_size=32, layers=2, heads=4, projection_dim=16),
         "t5": dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
         "vilbert": dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, v_hidden_size=32, v_num_attention_heads=2,
                         v_intermediate_size=64, bi_hidden_size=32, bi_num_attention_heads=2),
         "uniter_layers": 1, "polos_head": (64, 32), "bert_tbr_layer": 2, "bertscore_layer": 2}


class Overrun(BaseException):
    """A call ran past --limit seconds (a BaseException, so that no error handling on the way converts it)."""


def karpathy_rows(rows: int) -> tuple[list[str], list[list[str]]]:
    """The first ``rows`` captions of system 0 of the bundled Karpathy-test sets, with their references."""
    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden[golden.system == golden.system.min()].head(rows)
    return list(golden.candidate), [list(refs) for refs in golden.references]


def synthetic_jpegs(count: int) -> list[bytes]:
    """``count`` distinct 500 × 375 JPEGs (smooth random colour fields, so they encode like photographs)."""
    from PIL import Image

    def jpeg(seed: int) -> bytes:
        small = np.random.default_rng(seed).integers(0, 256, (12, 16, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(small).resize((500, 375), Image.BILINEAR).save(buffer, format="JPEG", quality=90)
        return buffer.getvalue()

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(jpeg, range(count)))


def synthetic_image(seed: int, boxes: int = 100, feature_size: int = 2048):
    """``boxes`` regions of a 640 × 480 image with float32 features, as the ViLBERT extractor stores them."""
    from capeval.vision.regions import RegionFeatures

    rng = np.random.default_rng(seed)
    x1, y1 = rng.random(boxes) * 400, rng.random(boxes) * 300
    corners = np.stack([x1, y1, x1 + 1 + rng.random(boxes) * 239, y1 + 1 + rng.random(boxes) * 179], axis=1)
    return RegionFeatures.from_pixel_boxes(rng.random((boxes, feature_size), dtype=np.float32) * 4, corners, 640, 480)


def region_pool(boxes: int, size: int = 64) -> list:
    """``size`` synthetic images (:func:`synthetic_image`) of ``boxes`` boxes, to cycle through."""
    return [synthetic_image(seed, boxes) for seed in range(size)]


def write_vilbert_config(path: Path, sizes: dict) -> Path:
    """The released bert_base_6layer_6conect config with ``sizes`` (e.g. ``QUICK["vilbert"]``) written over it."""
    released = json.loads(resources.files("capeval").joinpath("resources", "vilbert_bert_base_6layer_6conect.json").read_text())
    path.write_text(json.dumps({**released, **sizes}))
    return path


def caption_words(texts: list[str], *, cased: bool = False) -> list[str]:
    """The words of ``texts`` as BERT's basic tokenizer splits them (lower-cased unless ``cased``)."""
    from tokenizers.pre_tokenizers import BertPreTokenizer

    split = BertPreTokenizer().pre_tokenize_str
    return sorted({word for text in texts for word, _ in split(text if cased else text.lower())})


def save_wordpiece_tokenizer(folder: Path, words: list[str], *, cased: bool = False) -> str:
    """A BERT tokenizer whose vocabulary is ``words``, their characters and the characters' ``##`` forms."""
    from transformers import BertTokenizer

    chars = sorted({c for w in words for c in w})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *chars, *("##" + c for c in chars)]
    BertTokenizer(vocab={t: i for i, t in enumerate(dict.fromkeys(vocab))}, do_lower_case=not cased,
                  model_max_length=512).save_pretrained(folder)
    return str(folder)


def save_bert(folder: Path, words: list[str], *, cased: bool = False, distil: bool = False, **sizes) -> str:
    """A random BERT (or DistilBERT) with bert-base's vocabulary size and a WordPiece vocabulary of ``words``."""
    from transformers import BertConfig, BertModel, DistilBertConfig, DistilBertModel

    save_wordpiece_tokenizer(folder, words, cased=cased)
    config = DistilBertConfig(vocab_size=30522, **sizes) if distil else BertConfig(vocab_size=30522, **sizes)
    torch.manual_seed(0)  # the same weights whenever a folder is built again (tests/properties/test_cuda_parity.py)
    (DistilBertModel if distil else BertModel)(config).eval().save_pretrained(folder)
    return str(folder)


def save_roberta(folder: Path, texts: list[str], **sizes) -> str:
    """A random RoBERTa with a byte-level BPE vocabulary trained on ``texts``."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=4000, min_frequency=1, show_progress=False,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    tokenizer = RobertaTokenizerFast(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"), model_max_length=512)
    config = RobertaConfig(vocab_size=50265, max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2, **sizes)
    torch.manual_seed(0)
    RobertaModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


class PrecomputedSpans:
    """Stands in for QACE's spaCy span extractor with the spans spaCy found for these captions (``--write-spans``)."""

    def __init__(self, table: dict[str, list[str]], spacy_model: str, order: str):
        self.table, self.spacy_model, self.order = table, spacy_model, order

    def __call__(self, captions):
        return [self.table[caption] for caption in captions]


def with_precision(metric: str, options: dict, dtype: str) -> dict:
    """``options`` with ``dtype`` added where the metric declares that option and it is not float32."""
    from capeval.declaration import declared_options
    from capeval.registry import entry

    declared = {option.name for option in declared_options(entry(metric).scorer_class())}
    return {**options, "dtype": dtype} if dtype != "float32" and "dtype" in declared else options


def build_runs(name: str, folder: Path, captions, references, sizes: dict, device: str, spans: dict | None,
               dtype: str = "float32"):
    """The ``capeval.evaluate`` specs and inputs of one metric, its stand-in models saved under ``folder``; model
    metrics that declare ``dtype`` run in ``dtype``."""
    spec, inputs = stand_in_runs(name, folder, captions, references, sizes, device, spans, dtype)
    if isinstance(spec, tuple):
        spec = (spec[0], with_precision(spec[0], spec[1], dtype))
    return spec, inputs


def stand_in_runs(name: str, folder: Path, captions, references, sizes: dict, device: str, spans: dict | None, dtype: str):
    import capeval
    from capeval.backbones.clip import save_random_clip

    texts = captions + [r for refs in references for r in refs]
    words = caption_words(texts)
    inputs: dict = {"references": references}
    if name in ("bleu", "rouge", "cider", "meteor"):
        return name, inputs
    if name == "smurf":
        spurts = save_roberta(folder / "distilroberta", texts, **sizes["distilroberta"])
        mima = save_bert(folder / "distilbert", words, distil=True, **sizes["distilbert"])
        return ("smurf", {"spurts_model": spurts, "mima_model": mima, "device": device}), inputs
    if name == "bert_tbr":
        model = save_bert(folder / "bert", words, **sizes["bert"])
        return ("bert_tbr", {"model_name": model, "layer": sizes["bert_tbr_layer"], "beta": 0.4, "device": device}), inputs
    if name == "bertscore":
        model = save_roberta(folder / "roberta-large", texts, **sizes["roberta_large"])
        return ("bertscore", {"model_name": model, "layer": sizes["bertscore_layer"], "device": device}), inputs
    if name in ("clip_score", "polos"):
        inputs["images"] = synthetic_jpegs(len(captions))
        clip = save_random_clip(folder / "clip", words=words, **sizes["clip"])
        if name == "clip_score":
            return ("clip_score", {"model_name": clip, "device": device}), inputs
        from capeval.backbones.polos import save_random_polos

        roberta = save_roberta(folder / "roberta-base", texts, **sizes["roberta_base"])
        checkpoint = save_random_polos(folder / "reprod", roberta, clip, hidden_sizes=sizes["polos_head"])
        return ("polos", {"checkpoint": checkpoint, "clip_model": clip, "device": device}), inputs
    if name == "umic":
        from capeval.backbones.uniter import save_random_checkpoint, uniter_config

        tokenizer = save_wordpiece_tokenizer(folder / "bert-cased", caption_words(texts, cased=True), cased=True)
        checkpoint = save_random_checkpoint(folder / "umic.pt", uniter_config(num_hidden_layers=sizes["uniter_layers"]), std=0.02)
        pool = region_pool(36)
        return ("umic", {"checkpoint": checkpoint, "tokenizer": tokenizer, "device": device}), \
            {"region_features": [pool[i % len(pool)] for i in range(len(captions))]}
    if name == "vilbertscore":
        from capeval.backbones.vilbert import read_vilbert_config, save_random_checkpoint

        tokenizer = save_wordpiece_tokenizer(folder / "bert-uncased", words)
        config_path = write_vilbert_config(folder / "vilbert.json", sizes["vilbert"])
        config = read_vilbert_config(config_path)
        checkpoint = save_random_checkpoint(folder / "vilbert.bin", config, std=0.02)
        pool = region_pool(100)
        inputs["region_features"] = [pool[i % len(pool)] for i in range(len(captions))]
        return ("vilbertscore", {"checkpoint": checkpoint, "config": str(config_path), "tokenizer": tokenizer, "device": device}), inputs
    # QACE: build the scorer here so that precomputed spans can stand in for spaCy.
    from capeval.backbones.visual_t5 import save_random_t5

    t5_words = [*words, "answer", "context", "question", "visual"]
    models = {part: save_random_t5(folder / part, t5_words, visual=part == "visual_t5", vocab_size=32128, seed=seed,
                                   initializer_factor=5.0, **sizes["t5"])
              for seed, part in enumerate(("qg", "qa", "visual_t5"))}
    bert = save_bert(folder / "bert-multilingual", words, cased=True, **sizes["bert"])
    variant = name.removeprefix("qace_")
    options = {"variant": variant, "qg_model": models["qg"], "qa_model": models["qa"], "visual_t5": models["visual_t5"],
               "visual_t5_tokenizer": models["visual_t5"], "bertscore_model": bert, "bertscore_layer": sizes["bert_tbr_layer"],
               "device": device}
    scorer = capeval.resolve(("qace", with_precision("qace", options, dtype)))
    if spans is not None:
        scorer.spans = PrecomputedSpans(spans, scorer.spans.spacy_model, scorer.spans.order)
    if variant == "img":
        pool = region_pool(100)
        inputs = {"region_features": [pool[i % len(pool)] for i in range(len(captions))]}
    return scorer, inputs


def timed_call(captions, spec, inputs, limit: float | None = None) -> float:
    """Seconds of one ``capeval.evaluate`` call; with ``limit``, :class:`Overrun` once it runs past that many seconds."""
    import capeval

    def stop(signum, frame):
        raise Overrun

    previous = signal.signal(signal.SIGALRM, stop)
    if limit is not None:
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return timed(lambda: capeval.evaluate(captions, metrics=[spec], batch_size=None, show_progress=False, **inputs))[1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def spec_dtype(spec) -> str:
    """The forward-pass precision a :func:`build_runs` spec runs in (float32 where the metric declares no ``dtype``)."""
    options = spec[1] if isinstance(spec, tuple) else {} if isinstance(spec, str) else spec.options()
    return options.get("dtype", "float32")


def measure(name: str, captions, references, args, sizes: dict, spans: dict | None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        spec, inputs = build_runs(name, Path(folder), captions, references, sizes, args.device, spans, args.dtype)
        row = {"metric": name, "dtype": spec_dtype(spec), "captions": len(captions),
               "build_s": round(time.perf_counter() - start, 1)}
        try:
            cold = timed_call(captions, spec, inputs, args.limit)
        except Overrun:
            # The probe runs to its end: it is what the projection stands on. It starts from the encodings the stopped
            # call left behind emptied, so that it encodes its captions (and images) as the full call would.
            from capeval.models import clear_feature_caches

            clear_feature_caches()
            k = min(args.probe, len(captions))
            probe = timed_call(captions[:k], spec, {key: value[:k] for key, value in inputs.items()})
            row.update({"cold_s": f"> {args.limit:g}", "probe_captions": k, "probe_s": round(probe, 2),
                        "captions_per_s": round(k / probe, 1), "projected_s": round(probe * len(captions) / k, 1)})
            return row
        warm = timed_call(captions, spec, inputs)  # no limit: the cold call, which loaded the models, fitted in it
        row.update({"cold_s": round(cold, 2), "warm_s": round(warm, 2), "captions_per_s": round(len(captions) / cold, 1)})
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--rows", type=int, default=5000, help="captions (5000: the whole Karpathy test split)")
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated, from: " + ", ".join(METRICS))
    parser.add_argument("--limit", type=float, default=120, help="seconds one call may take before it is stopped and projected")
    parser.add_argument("--probe", type=int, default=500, help="captions of the probe call after an overrun")
    parser.add_argument("--quick", action="store_true", help="tiny stand-in models: checks the script, measures nothing")
    parser.add_argument("--spans", help="QACE answer spans written by --write-spans (where spaCy is not installed)")
    parser.add_argument("--write-spans", help="write QACE's spaCy answer spans of these captions to this JSON and exit")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"),
                        help="forward-pass precision of every model metric that declares a dtype option")
    parser.add_argument("--output", help="also write the rows as JSON here")
    args = parser.parse_args()
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # the "Loading weights" bars of every stand-in model
    metrics = [m for m in args.metrics.split(",") if m]
    if unknown := sorted(set(metrics) - set(METRICS)):
        parser.error(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
    captions, references = karpathy_rows(args.rows)
    if args.write_spans:
        from capeval.text.spans import SpanExtractor

        Path(args.write_spans).write_text(json.dumps(dict(zip(captions, SpanExtractor()(captions)))))
        return
    spans = json.loads(Path(args.spans).read_text()) if args.spans else None
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({torch.get_num_threads()} torch threads)"
    print(f"{len(captions)} Karpathy-test captions, {sum(map(len, references))} references, on {where}; "
          f"{'tiny (--quick)' if args.quick else 'real-size'} random-weight models; load average {os.getloadavg()[0]:.1f}")
    print("\n| metric | dtype | captions | cold s | warm s | captions/s (cold) | projected s |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for name in metrics:
        row = measure(name, captions, references, args, QUICK if args.quick else FULL, spans)
        rows.append(row)
        print(f"| {name} | {row['dtype']} | {row['captions']} | {row['cold_s']} | {row.get('warm_s', '—')} | {row['captions_per_s']} | "
              f"{row.get('projected_s', '—')} |", flush=True)
        if args.output:  # after every metric, so a run stopped part-way keeps what it measured
            Path(args.output).write_text(json.dumps({"device": where, "quick": args.quick, "rows": rows}, indent=1))
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
