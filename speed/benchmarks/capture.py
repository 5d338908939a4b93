"""CAPTURE: capeval's batched scorer against the released package's per-caption loop (capture-metric 0.1.13), each in
a fresh process on the same device, models, captions and stand-ins, cold (models loaded from disk, WordNet read) and
warm (capeval also keeps the phrase encodings and WordNet look-ups of its first call).

The real checkpoints cannot be downloaded here, so random weights stand in: a parser with flan-t5-base's architecture
(a word-level tokenizer of the captions' words) and an encoder with all-mpnet-base-v2's (MPNet-base, mean pooling);
``--quick`` uses the tiny test models of ``tests/assets/capture``. A random parser rarely emits ``</s>``, so almost
every beam search runs to its 128 tokens: the worst case, the same for both. Captions are detailed texts made of
Flickr8k test references (references 1-3 of an image joined are the candidate, 4-5 its reference). NLTK's punkt and
tagger data are downloads, so both sides get the same stand-ins (sentences split at full stops, every word tagged as
a noun); WordNet is real. The package runs as released except that its hub ids point at the random models and the
body of its per-caption loop (``sample_to_parse_results``, one beam search per caption) runs in its process instead
of its process pool (one worker per GPU)."""

from __future__ import annotations

import collections
import contextlib
import gzip
import io
import json
import re
from pathlib import Path

from harness import REPO, Benchmark, Compare, Side, side_device

PARSER_BASE = {"d_model": 768, "d_kv": 64, "d_ff": 2048, "num_layers": 12, "num_decoder_layers": 12, "num_heads": 12,
               "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}
ENCODER_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
STATE: dict = {}


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text.strip()) if s]


def words_of(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def tags_of(tokens) -> list[tuple[str, str]]:
    return [(word, "NN" if word[0].isalnum() else ".") for word in tokens]


def capture_data(folder: Path, quick: bool):
    corpus = json.loads(gzip.open(REPO / "shared" / "capeval" / "resources" / "flickr8k_references.json.gz").read())

    def join(sentences):
        return " ".join(s.strip().rstrip(" .") + "." for s in sentences)
    rows = corpus["references"][:4 if quick else 32]
    captions, references = [join(refs[:3]) for refs in rows], [[join(refs[3:5])] for refs in rows]
    if quick:
        parser, encoder = str(REPO / "tests" / "assets" / "capture" / "parser"), str(REPO / "tests" / "assets" / "capture" / "encoder")
    else:
        parser, encoder = build_models(folder, captions + [r for refs in references for r in refs])
    return ({"captions": captions, "references": references, "parser": parser, "encoder": encoder},
            {"description": "detailed captions (three Flickr8k test references of an image joined; two joined as its "
                            "reference); random weights at flan-t5-base's and all-mpnet-base-v2's sizes", "items": len(captions)})


def build_models(folder: Path, texts: list[str]) -> tuple[str, str]:
    import torch
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
    return str(parser), str(encoder)


def capeval_call(inputs: dict, label: str) -> dict:
    from capeval.scoring import capture

    if "scorer" not in STATE:
        capture.sent_tokenize = sentences_of
        capture.pos_tag_texts = lambda texts: [tags_of(words_of(text)) for text in texts]
        STATE["scorer"] = capture.CaptureScorer(parser_model=inputs["parser"], encoder_model=inputs["encoder"], device=side_device("cuda"))
    return {"capture": [float(s) for s in STATE["scorer"].score(inputs["captions"], inputs["references"])["capture"]]}


def package_call(inputs: dict, label: str) -> dict:
    import nltk
    from sentence_transformers import SentenceTransformer

    import capture_metric.capture as released
    from factual_scene_graph.parser.scene_graph_parser import SceneGraphParser

    gts = {str(i): refs for i, refs in enumerate(inputs["references"])}
    res = {str(i): [caption] for i, caption in enumerate(inputs["captions"])}
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        if "evaluator" not in STATE:  # the first call loads the models, as the package's first compute_score does
            released.sent_tokenize = sentences_of
            nltk.word_tokenize, nltk.pos_tag = words_of, tags_of

            class Placed(SentenceTransformer):
                def to(self, *args, **kwargs):  # the package moves its encoder to cuda:0; it is already on the device
                    return self

            released.SentenceTransformer = lambda name: Placed(inputs["encoder"], device=side_device("cuda"))
            STATE["evaluator"] = released.CAPTURE()
            STATE["evaluator"].parser = SceneGraphParser(inputs["parser"], device=side_device("cuda"))
        evaluator = STATE["evaluator"]
        parsed = {}
        for name, samples in (("cand", [(k, v[0]) for k, v in res.items()]), ("gt", [(k, g) for k, v in gts.items() for g in v])):
            grouped = collections.defaultdict(list)
            for sample in samples:  # the body of its per-caption loop (parse_samples)
                result = evaluator.sample_to_parse_results(sample)
                grouped[result[0]].append(result[1:])
            parsed[name] = grouped
        _, scores = evaluator.compute_score(gts, res, prev_gt_parsed=parsed["gt"], prev_cand_parsed=parsed["cand"])
    return {"capture": [float(s) for s in scores]}


def declare() -> list[Benchmark]:
    return [Benchmark("capture", "CAPTURE against capture-metric 0.1.13's per-caption loop", capture_data, device="cuda", cores=None,
                      sides=(Side("capeval", capeval_call, requires=("torch", "transformers", "nltk")),
                             Side("capture-metric", package_call, role="peer",
                                  requires=("capture_metric", "factual_scene_graph", "sentence_transformers", "nltk"))),
                      compare=(Compare("capeval", "capture-metric", tolerance=1e-6),))]
