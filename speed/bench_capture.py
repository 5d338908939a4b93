"""Speed of CAPTURE: capeval's batched scorer against the released package's per-caption loop (pip capture-metric
0.1.13), side by side on the same device, models, captions and stand-ins, cold and warm.

The real checkpoints cannot be downloaded here, so random-weight models stand in: with ``--size real`` (default) a
parser with flan-t5-base's architecture (d_model 768, 12+12 layers, 12 heads, gated-GELU d_ff 2048, vocabulary
32128; a word-level tokenizer of the captions' words) and an encoder with all-mpnet-base-v2's (MPNet-base, 768,
12 layers, mean pooling, normalised); ``--size tiny`` uses the test models of ``tests/assets/capture``. A random
parser rarely emits ``</s>``, so almost every beam search runs to its 128 tokens: the worst case, the same for both.
Captions are detailed, multi-sentence texts made of Flickr8k test references (the bundled reference corpus): per
image, references 1-3 joined are the candidate and 4-5 joined its reference. NLTK's punkt and tagger data are
downloads, so both sides get the same stand-ins (sentences split at full stops, every word tagged as a noun);
WordNet is real (NLTK's data or Debian's wordnet-base; set NLTK_DATA for the package).

The package runs as released except for what it loads: its hub ids point at the random models, and the body of its
per-caption loop (``sample_to_parse_results``, one beam search per caption) runs in this process instead of its
process pool (one worker per GPU; with one device that only adds a process start). Its scores come from its
``compute_score`` with those parses. capeval scores the same captions with one ``CaptureScorer.score`` call.

Each side runs in a fresh process of its own. **cold**: its first call, models loaded from disk, WordNet read;
**warm**: the same call again in that process, models in memory (capeval also keeps the phrase encodings and WordNet
look-ups of the first call).

Usage: python speed/bench_capture.py [--device cuda] [--size real|tiny] [--captions N] [--package-captions N]
                                     [--threads N] [--output result.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import torch  # noqa: E402
from timing import timed  # noqa: E402  (this folder is on sys.path when the script runs)

REPO = Path(__file__).resolve().parents[1]
PARSER_BASE = {"d_model": 768, "d_kv": 64, "d_ff": 2048, "num_layers": 12, "num_decoder_layers": 12, "num_heads": 12,
               "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}
ENCODER_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}


def detailed_captions(count: int) -> tuple[list[str], list[list[str]]]:
    """``count`` candidates (references 1-3 of a Flickr8k test image, joined) and their one reference (4-5)."""
    corpus = json.loads(gzip.open(REPO / "shared" / "capeval" / "resources" / "flickr8k_references.json.gz").read())
    def join(sentences):
        return " ".join(s.strip().rstrip(" .") + "." for s in sentences)
    rows = corpus["references"][:count]
    return [join(refs[:3]) for refs in rows], [[join(refs[3:5])] for refs in rows]


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text.strip()) if s]


def words_of(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def tags_of(tokens) -> list[tuple[str, str]]:
    return [(word, "NN" if word[0].isalnum() else ".") for word in tokens]


def build_models(folder: Path, size: str, texts: list[str]) -> tuple[str, str]:
    """The parser and encoder folders (random weights at the real sizes, or the tiny test models)."""
    if size == "tiny":
        return str(REPO / "tests" / "assets" / "capture" / "parser"), str(REPO / "tests" / "assets" / "capture" / "encoder")
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    from capeval.backbones.visual_t5 import save_random_t5

    words = sorted({w for t in texts for w in words_of(t)} | {"(", ")", ",", "is", "Generate", "Scene", "Graph"})
    parser = save_random_t5(folder / "parser", words, vocab_size=32128, seed=0, **PARSER_BASE)
    config_path = folder / "parser" / "tokenizer_config.json"  # transformers 4 cannot read the empty list transformers 5 writes
    config = json.loads(config_path.read_text())
    config.pop("extra_special_tokens", None)
    config_path.write_text(json.dumps(config))
    encoder = folder / "encoder"
    vocab = list(dict.fromkeys(["<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>", *(w.lower() for w in words)]))
    MPNetTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True, model_max_length=512).save_pretrained(encoder)
    torch.manual_seed(0)
    MPNetModel(MPNetConfig(vocab_size=30527, max_position_embeddings=514, pad_token_id=1, **ENCODER_BASE)).eval().save_pretrained(encoder)
    return parser, str(encoder)


def run_capeval(parser: str, encoder: str, device: str, captions, references) -> tuple[list[float], float, float]:
    from capeval.scoring import capture

    capture.split_sentences, capture.tag_words = sentences_of, lambda text: tags_of(words_of(text))
    capture.require_language_data = lambda: None
    scorer = capture.CaptureScorer(parser_model=parser, encoder_model=encoder, device=device)
    cold, t_cold = timed(lambda: scorer.score(captions, references))
    _, t_warm = timed(lambda: scorer.score(captions, references))
    return cold["capture"], t_cold, t_warm


def run_package(parser: str, encoder: str, device: str, captions, references) -> tuple[list[float], float, float]:
    import nltk
    from sentence_transformers import SentenceTransformer

    import capture_metric.capture as released
    from factual_scene_graph.parser.scene_graph_parser import SceneGraphParser

    released.sent_tokenize = sentences_of
    nltk.word_tokenize, nltk.pos_tag = words_of, tags_of
    class Placed(SentenceTransformer):
        def to(self, *args, **kwargs):  # the package moves its encoder to cuda:0; it is already on `device`
            return self

    released.SentenceTransformer = lambda name: Placed(encoder, device=device)
    gts = {str(i): refs for i, refs in enumerate(references)}
    res = {str(i): [caption] for i, caption in enumerate(captions)}

    loaded = {}

    def call():
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            if not loaded:  # the first call loads the models, as the package's first compute_score does
                loaded["evaluator"] = released.CAPTURE()
                loaded["evaluator"].parser = SceneGraphParser(parser, device=device)
            evaluator = loaded["evaluator"]
            parsed = {}
            for name, samples in (("cand", [(k, v[0]) for k, v in res.items()]), ("gt", [(k, g) for k, v in gts.items() for g in v])):
                grouped = collections.defaultdict(list)
                for sample in samples:  # the body of its per-caption loop (parse_samples)
                    result = evaluator.sample_to_parse_results(sample)
                    grouped[result[0]].append(result[1:])
                parsed[name] = grouped
            _, scores = evaluator.compute_score(gts, res, prev_gt_parsed=parsed["gt"], prev_cand_parsed=parsed["cand"])
        return scores

    cold, t_cold = timed(call)
    _, t_warm = timed(call)
    return [float(s) for s in cold], t_cold, t_warm


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("--device", default="cpu")
    arguments.add_argument("--size", choices=("real", "tiny"), default="real")
    arguments.add_argument("--captions", type=int, default=32, help="captions both sides score")
    arguments.add_argument("--threads", type=int, default=None)
    arguments.add_argument("--output", default=None, help="write the numbers as JSON here")
    arguments.add_argument("--side", nargs=3, metavar=("SIDE", "PARSER", "ENCODER"), help=argparse.SUPPRESS)
    args = arguments.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    captions, references = detailed_captions(args.captions)
    if args.side:
        side, parser, encoder = args.side
        run = run_capeval if side == "capeval" else run_package
        print(json.dumps(run(parser, encoder, args.device, captions, references)))
        return
    texts = captions + [r for refs in references for r in refs]
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({torch.get_num_threads()} threads)"

    def side(name: str, parser: str, encoder: str):
        command = [sys.executable, __file__, "--side", name, parser, encoder, "--device", args.device, "--captions", str(args.captions)]
        command += ["--threads", str(args.threads)] if args.threads else []
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"the {name} side failed:\n{done.stderr[-4000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as folder:
        parser, encoder = build_models(Path(folder), args.size, texts)
        ours, ours_cold, ours_warm = side("capeval", parser, encoder)
        theirs, theirs_cold, theirs_warm = side("package", parser, encoder)
    sentences = sum(len(sentences_of(t)) for t in texts)
    result = {"device": where, "size": args.size, "captions": len(captions), "sentences": sentences,
              "capeval_s": {"cold": ours_cold, "warm": ours_warm}, "package_s": {"cold": theirs_cold, "warm": theirs_warm},
              "speedup": {"cold": theirs_cold / ours_cold, "warm": theirs_warm / ours_warm},
              "max_abs_score_difference": max(abs(a - b) for a, b in zip(ours, theirs))}
    print(f"CAPTURE on {where}, {args.size}-size random models, {len(captions)} detailed captions ({sentences} sentences "
          "with their references)")
    print("\n| path | cold s | warm s |\n|---|---|---|")
    print(f"| capture-metric 0.1.13, per caption | {theirs_cold:.1f} | {theirs_warm:.1f} |")
    print(f"| capeval, batched | {ours_cold:.1f} | {ours_warm:.1f} |")
    print(f"\nspeed-up: cold {result['speedup']['cold']:.1f}x, warm {result['speedup']['warm']:.1f}x; "
          f"max |Δscore| = {result['max_abs_score_difference']:.1e}")
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    sys.exit(main())
