"""The LLaVA judges: capeval's FLEUR (captions batched, each image's prompt prefix run once per batch) against a
transcription of the released loop (Yebin46/FLEUR ``fleur.py``: per caption the image opened and padded, the whole
prompt and the image through one batch-1 ``model.generate`` with the step scores, the rating smoothed), on
Flickr8k-Expert's candidates (about 5.7 per image, in the dataset's order).

No LLaVA weights can be downloaded here: a scripted Llava stands in
(:func:`capeval.backbones.llava.save_scripted_llava`: random weights whose greedy answer is " 0.7" then the end
token, so both sides decode an answer's length and smooth digit probabilities that depend on the caption and image),
small enough for a CPU (``fleur``) or at LLaVA-1.5-13B's sizes in bfloat16 (``fleur_gpu``). Its tokenizer has one token
per character: the caption's end of the prompt is longer against the image prefix than with LLaVA's tokenizer, which
understates what sharing the prefix saves."""

from __future__ import annotations

from pathlib import Path

from data import flickr8k_expert
from harness import Benchmark, Compare, Side, side_device

#: A Llava a CPU runs: a 4-layer Llama of width 256, a 4-layer CLIP tower at 336 px (576 image positions, as LLaVA-1.5).
SMALL = ({"hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 4, "num_attention_heads": 4,
          "num_key_value_heads": 4},
         {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 4,
          "image_size": 336, "patch_size": 14, "projection_dim": 256})
#: llava-hf/llava-1.5-13b-hf's sizes: Vicuna-13B and CLIP ViT-L/14 at 336 px.
LLAVA_15_13B = ({"vocab_size": 32064, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
                 "num_attention_heads": 40, "num_key_value_heads": 40},
                {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
                 "image_size": 336, "patch_size": 14, "projection_dim": 768})
#: Tokens either side may generate: the stand-in's answer takes 5 (the released 512 would bound nothing more).
MAX_NEW_TOKENS = 8


def fleur_data(rows: int, quick_rows: int, sizes: tuple[dict, dict], build_on: str):
    """Flickr8k-Expert's first candidates, a synthetic JPEG per image, and the stand-in judge at ``sizes`` (the
    small one with ``--quick``), built in bfloat16 on ``build_on`` when that is CUDA."""
    def data(folder: Path, quick: bool):
        from bench_karpathy import synthetic_jpegs

        from capeval.backbones.llava import save_scripted_llava

        chosen = flickr8k_expert(self_captions=False)[:quick_rows if quick else rows]
        names = list(dict.fromkeys(row["image_file"] for row in chosen))
        for name, jpeg in zip(names, synthetic_jpegs(len(names))):
            (folder / name).write_bytes(jpeg)
        text, vision = SMALL if quick else sizes
        on_gpu = build_on == "cuda" and not quick
        save_scripted_llava(folder / "llava", text_sizes=text, vision_sizes=vision,
                            dtype="bfloat16" if on_gpu else "float32", device="cuda" if on_gpu else "cpu")
        if on_gpu:
            import torch

            torch.cuda.empty_cache()  # the sides' processes load their own copy
        layers = f"{text['num_hidden_layers']}-layer Llama of width {text['hidden_size']}"
        return ({"captions": [row["candidate"] for row in chosen], "images": [str(folder / row["image_file"]) for row in chosen],
                 "model": str(folder / "llava")},
                {"description": f"Flickr8k-Expert candidates of {len(names)} images (synthetic 500 × 375 JPEGs); a scripted "
                                f"Llava ({layers}, CLIP tower at 336 px: 576 image positions) answering \" 0.7\"",
                 "items": len(chosen)})
    return data


def capeval_side(dtype: str, batch_size: int):
    """FleurScorer (its judge loaded once per process, by the first call), the answer cache off."""
    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.fleur import FleurScorer

        scorer = FleurScorer(inputs["model"], max_new_tokens=MAX_NEW_TOKENS, cache=False, device=side_device("cpu"), dtype=dtype)
        out = scorer.score(inputs["captions"], images=inputs["images"], batch_size=batch_size)
        return {"fleur": [float(value) for value in out["fleur"]], "answers": out.details["answer"]}
    return call


def released_loop(dtype: str):
    """Per caption, as the released fleur.py: the image opened and padded, the prompt rendered and tokenized, one
    ``generate`` of the whole prompt with its image (batch 1, greedy, stopped at ``</s>``, step scores kept), the
    answer's last four characters cut and its rating smoothed (capeval's :func:`smoothed_score`, equal to the
    released arithmetic)."""
    def call(inputs: dict, label: str) -> dict:
        import torch

        from capeval.backbones.llava import load_llava, render_prompt
        from capeval.models import resolve_device
        from capeval.scoring.fleur import FLEUR_PROMPT, collapse_whitespace, fleur_answer_text, smoothed_score
        from capeval.vision.images import open_image

        llava = load_llava(inputs["model"], adapter=None, device=resolve_device(side_device("cpu")), dtype=dtype)
        scores, answers = [], []
        for caption, image in zip(inputs["captions"], inputs["images"]):
            prompt = render_prompt("llava_v1", [(FLEUR_PROMPT.format(candidate=collapse_whitespace(caption)), None)])
            pixels = llava.pixels([open_image(image).convert("RGB")]).to(llava.device, getattr(torch, dtype))
            input_ids = torch.tensor([llava.prompt_ids(prompt)], device=llava.device)
            with torch.inference_mode():
                out = llava.model.generate(input_ids=input_ids, pixel_values=pixels, do_sample=False, num_beams=1,
                                           max_new_tokens=MAX_NEW_TOKENS, use_cache=True, stop_strings=["</s>"],
                                           tokenizer=llava.tokenizer, output_scores=True, return_dict_in_generate=True)
            generated = out.sequences[0, input_ids.shape[1]:].tolist()
            decoded = llava.tokenizer.decode(generated).strip()
            rating = smoothed_score(fleur_answer_text(decoded), generated, torch.stack(out.scores, 1)[0].float().cpu(),
                                    llava.digit_ids)
            scores.append(float("nan") if rating is None else rating)
            answers.append(llava.tokenizer.decode(generated, skip_special_tokens=True).strip())
        return {"fleur": scores, "answers": answers}
    return call


def declare() -> list[Benchmark]:
    pair = (("cold process", "cold process"), ("warm", "warm"))
    models = ("torch", "transformers")
    benchmarks = []
    for name, device_kind, sizes, rows, dtype, batch_size, tolerance in (
            ("fleur", "cpu", SMALL, 48, "float32", 8, 1e-5),
            ("fleur_gpu", "cuda", LLAVA_15_13B, 160, "bfloat16", 32, 2e-2)):
        size = "a small Llava on the CPU" if device_kind == "cpu" else "LLaVA-1.5-13B's sizes in bfloat16"
        benchmarks.append(Benchmark(
            name, f"FLEUR, batched with each image's prompt prefix run once, against the released one-caption loop ({size})",
            fleur_data(rows, 12, sizes, device_kind), device=device_kind, cores=2 if device_kind == "cpu" else None,
            sides=(Side("capeval", capeval_side(dtype, batch_size), requires=models, label=f"capeval (batch {batch_size})"),
                   Side("released loop", released_loop(dtype), role="peer", requires=models,
                        label="released loop (one generate per caption)")),
            compare=(Compare("capeval", "released loop", pair, tolerance=tolerance),),
            note=f"Random weights scripted to answer \" 0.7\" (both sides generate at most {MAX_NEW_TOKENS} tokens); "
                 "the answer cache is off, so the warm call generates again; the answers must be equal and the "
                 f"scores within {tolerance:g}."))
    return benchmarks
