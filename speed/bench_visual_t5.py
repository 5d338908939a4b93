"""Speed and arithmetic of Visual-T5 (QACE-Img's answerer) alone: transformers' fused SDPA attention against the
eager path, and the forward passes in float32 against bfloat16 / float16 under torch.autocast.

A random Visual-T5 with T5-small's architecture (the released model's; T5's own initialisation) and a word-level
vocabulary of 32,128 pieces stands in for the released checkpoint; every question is asked about the QACE sample's
real 36-box BUTD features. Needs neither spaCy nor BERTScore, so it runs where only torch and transformers are.

Printed per configuration (each after a warm-up batch): questions/s and seconds for --questions questions, and
against float32 with eager attention: the largest difference of the first decoding step's log-probabilities, the
largest answerability difference and the share of answers that differ (random weights make the greedy tokens
near-ties, so this share is an upper bound on what a trained model shows).

Usage: python speed/bench_visual_t5.py [--questions N] [--batch-size N] [--device cuda] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import torch  # noqa: E402
from bench_qace import SAMPLE_FEATURES, T5_SIZES  # noqa: E402  (this folder is on sys.path when the script runs)
from bench_umic import timed  # noqa: E402

from capeval.backbones.precision import autocast_forward  # noqa: E402
from capeval.backbones.visual_t5 import VisualT5Answerer, save_random_t5  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.vision.regions import as_region_features  # noqa: E402

QUESTION_FORMS = ("what is {}?", "where is the {}?", "how many {} are there?", "what color is the {}?")


def first_step_log_probabilities(answerer: VisualT5Answerer, questions, regions, dtype: str) -> torch.Tensor:
    input_ids, mask, features = (t.to(answerer.device) for t in answerer.encoder_inputs(questions, regions))
    model = answerer.model
    with torch.inference_mode(), autocast_forward(answerer.device, dtype):
        logits = model.t5(inputs_embeds=model.encoder_embeddings(input_ids, features), attention_mask=mask,
                          decoder_input_ids=torch.zeros(len(questions), 1, dtype=torch.long, device=answerer.device)).logits
    return logits[:, 0].float().log_softmax(-1).cpu()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=64, help="questions answered per configuration")
    parser.add_argument("--batch-size", type=int, default=None, help="questions per batch (default: the answerer's)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    words = sorted({w.strip(".,").lower() for row in load_benchmark("flickr8k_expert") for w in row["candidate"].split()})
    questions = [QUESTION_FORMS[i % len(QUESTION_FORMS)].format(words[(7 * i) % len(words)]) for i in range(args.questions)]
    regions = [as_region_features(SAMPLE_FEATURES)] * len(questions)
    with tempfile.TemporaryDirectory() as folder:
        model = save_random_t5(Path(folder), [*words, "visual", "answer"], visual=True, vocab_size=32128, **T5_SIZES["small"])
        answerers = {(attention, dtype): VisualT5Answerer(model, model, device=args.device, dtype=dtype, attention=attention)
                     for attention in ("eager", "sdpa") for dtype in ("float32", "bfloat16", "float16")}
        where = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
        print(f"Visual-T5 (T5-small sizes, random weights) on {where}: {len(questions)} questions, "
              f"batch size {args.batch_size or 'default'}; torch threads = {torch.get_num_threads()}\n")
        print("| attention | dtype | questions/s | seconds | max |Δ log p| step 1 | max |Δ answerability| | answers changed |")
        print("|---|---|---|---|---|---|---|")
        reference_answers, reference_log_p = None, None
        for (attention, dtype), answerer in answerers.items():
            answerer.answer(questions[:4], regions[:4], batch_size=args.batch_size)  # warm-up
            answers, seconds = timed(lambda: answerer.answer(questions, regions, batch_size=args.batch_size))
            log_p = first_step_log_probabilities(answerer, questions[:16], regions[:16], dtype)
            if reference_answers is None:
                reference_answers, reference_log_p = answers, log_p
            changed = sum(a != b for (a, _), (b, _) in zip(answers, reference_answers))
            gap = max(abs(a - b) for (_, a), (_, b) in zip(answers, reference_answers))
            print(f"| {attention} | {dtype} | {len(questions) / seconds:.1f} | {seconds:.2f} | "
                  f"{(log_p - reference_log_p).abs().max().item():.1e} | {gap:.1e} | {changed}/{len(questions)} |")


if __name__ == "__main__":
    main()
