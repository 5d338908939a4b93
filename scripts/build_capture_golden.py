#!/usr/bin/env python
"""Build CAPTURE's test assets: the tiny parser and encoder models, and the released package's outputs on them.

Writes into ``tests/assets/capture/`` (read by ``tests/metrics/capture/``; CI never runs this script):

* ``parser/``: a tiny T5 (d_model 64, 2+2 layers) with a word-level tokenizer, trained for a few hundred steps on
  the fixture sentences and their hand-written scene graphs (``fixtures.json``), so that beam search gives graphs
  with structure: a stand-in for ``lizhuang144/flan-t5-base-VG-factual-sg``;
* ``encoder/``: a tiny random MPNet in sentence-transformers' folder layout (mean pooling, normalisation): a stand-in
  for ``sentence-transformers/all-mpnet-base-v2``;
* ``golden_<env>.json``: what ``capture-metric==0.1.13`` computes, stage by stage, in each package environment given
  with ``--package-env NAME=PYTHON`` (a Python with the package and its dependencies installed, never capeval's own
  environment): NLTK's sentences, tags and nouns, the parser's graphs, the extracted objects / attributes /
  relations (from the tiny parser and from the fixture graphs), the matches and the scores, for several option sets
  and several ``PYTHONHASHSEED`` values.

The package runs unchanged. Only what it loads is replaced: its two hub ids by the tiny models (its encoder kept on
the CPU where it asks for ``cuda:0``), and its parser by one that returns the fixture graphs when the stage is
"fixture parses". Its process pool is skipped (it needs one CUDA device per worker): each caption goes through the
body of its per-caption loop (``sample_to_parse_results``), and scores through ``compute_score`` with those parses.

    python scripts/build_capture_golden.py --package-env factual050=/tmp/capvenv/bin/python \\
        --package-env factual073=/tmp/capvenv07/bin/python --nltk-data /tmp/nltk_data [--skip-models]

``--nltk-data`` names a folder holding NLTK's ``corpora/wordnet``, ``tokenizers/punkt`` and
``taggers/averaged_perceptron_tagger`` data as NLTK 3.8.1 reads them (the goldens used WordNet 3.0 from Debian's
wordnet-base plus ``capeval.text.wordnet.lexnames_text()`` as ``lexnames``). The package environments need NumPy < 2:
with NumPy 2 the package's ``compute_score`` fails on captions with several references (see the card).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "tests" / "assets" / "capture"
#: PYTHONHASHSEED values the package runs under: it iterates Python sets, whose order follows the hash seed.
HASH_SEEDS = (0, 1, 2, 3, 4)
#: Option sets of the package's CAPTURE constructor scored on the fixture parses.
VARIANTS = {
    "default": {},
    "no_synonyms": {"synonym_matching": False},
    "no_soft": {"soft_matching": False},
    "no_stop_words": {"stop_words": False},
    "weights": {"alpha": 0.7, "beta": 0.3, "gamma": 0.5},
}
#: Decoded parser outputs, crafted to reach every branch of the package's clean-up and graph reading.
CLEANUP_INPUTS = (
    "", "( dog )", "( dog , on", "(dog,is,brown),(dog , on,grass)", "( sky , is , blue ) , ( dog , on , grass ) , ( sky , is , blue )",
    "( cat , is , black ) , ( cat , sleep on , sofa ) , ( dog , watch", "Generate Scene Graph: ( man , ride , horse )",
    "( a , b ) , ( c , d , e )", "(( tree , is , tall ))", "( man , is , 2 ) , ( man , is , 2nd ) , ( man , is , ² )",
    "dog , cat", "( dog , is , ) , ( , on , grass )", "  ( x , y , z )  ", "( man , hold , cup ) ,",
)
ENCODER_SIZE = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
PARSER_SIZE = {"d_model": 64, "d_kv": 16, "d_ff": 128, "num_layers": 2, "num_heads": 4}


# ----------------------------------------------------------------------------------------------- models (capeval's venv)

def fixture_words(fixtures: dict) -> list[str]:
    texts = [s["prediction"] for s in fixtures["samples"]] + [r for s in fixtures["samples"] for r in s["references"]]
    texts += list(fixtures["graphs"].values()) + ["Generate Scene Graph:"]
    return sorted({word.strip(".,:'") for text in texts for word in text.split()} - {""} | {"(", ")", ","})


def build_encoder(folder: Path, words: list[str]) -> None:
    """A random MPNet with a lower-casing WordPiece vocabulary of the fixture words, in sentence-transformers' layout."""
    import torch
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>"]
    letters = [chr(c) for c in range(97, 123)]
    vocab = list(dict.fromkeys(specials + [w.lower() for w in words] + letters + [f"##{c}" for c in letters] + list(".,'-:()")))
    # transformers 5 reads vocab= (vocab_file= would be silently ignored).
    tokenizer = MPNetTokenizer(vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=True, model_max_length=512)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = MPNetConfig(vocab_size=len(vocab), max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                         **ENCODER_SIZE)
    MPNetModel(config).eval().save_pretrained(folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2) + "\n")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 384, "do_lower_case": False}) + "\n")
    (folder / "1_Pooling").mkdir(exist_ok=True)
    pooling = {"word_embedding_dimension": ENCODER_SIZE["hidden_size"], "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2) + "\n")


def build_parser(folder: Path, fixtures: dict, words: list[str], *, steps: int = 600) -> None:
    """A tiny T5 trained to map ``"Generate Scene Graph: " + sentence`` to the sentence's fixture graph."""
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from capeval.backbones.visual_t5 import save_random_t5, tiny_t5_vocab

    pieces = [piece for piece, _ in tiny_t5_vocab(words, 10_000) if not piece.startswith("▁filler")]
    save_random_t5(folder, words, vocab_size=len(pieces), seed=0, **PARSER_SIZE)  # no filler pieces
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = T5ForConditionalGeneration.from_pretrained(folder)
    pairs = list(fixtures["graphs"].items())
    inputs = tokenizer(["Generate Scene Graph: " + sentence for sentence, _ in pairs], padding=True, return_tensors="pt")
    labels = tokenizer([graph for _, graph in pairs], padding=True, return_tensors="pt")["input_ids"]
    labels[labels == tokenizer.pad_token_id] = -100
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        loss = model(**inputs, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"parser step {step}: loss {loss.item():.4f}", file=sys.stderr)
    model.eval().save_pretrained(folder)
    drop_empty_extra_special_tokens(folder)


def drop_empty_extra_special_tokens(folder: Path) -> None:
    """transformers 5 writes ``"extra_special_tokens": []``, which transformers 4.57 cannot read (it expects a dict)."""
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    if config.get("extra_special_tokens") == []:
        del config["extra_special_tokens"]
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------ the package (its own venv)

def run_package(parser_folder: str, encoder_folder: str, fixtures_path: str) -> dict:
    """Every stage of capture-metric 0.1.13 on the fixtures (runs inside the package's environment)."""
    import contextlib
    import importlib.metadata
    import io

    import nltk
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    import capture_metric.capture as released
    from factual_scene_graph.parser.scene_graph_parser import SceneGraphParser

    class CpuSentenceTransformer(SentenceTransformer):
        def to(self, *args, **kwargs):  # the package asks for cuda:0
            return self

    released.SentenceTransformer = lambda name: CpuSentenceTransformer(encoder_folder, device="cpu")
    fixtures = json.loads(Path(fixtures_path).read_text(encoding="utf-8"))
    samples = fixtures["samples"]
    texts = list(dict.fromkeys([s["prediction"] for s in samples] + [r for s in samples for r in s["references"]]))
    quiet = contextlib.redirect_stderr(io.StringIO())
    parser = SceneGraphParser(parser_folder, device="cpu")

    class FixtureParser:
        """Returns, for each sentence, FACTUAL's graph object of its fixture graph text."""

        def parse(self, sentences, **kwargs):
            return [parser.graph_string_to_object(fixtures["graphs"][s]) for s in sentences]

    def graph_json(graph):
        return {"entities": [{**e, "attributes": sorted(e["attributes"])} for e in graph["entities"]], "relations": graph["relations"]}

    def parsed_json(parsed):
        objects, attributes, relations = parsed
        return {"objects": list(objects), "attributes": {k: list(v) for k, v in attributes.items()},
                "relations": [list(r) for r in relations]}

    def as_parsed(record):
        return (record["objects"], {k: set(v) for k, v in record["attributes"].items()}, {tuple(r) for r in record["relations"]})

    out: dict = {"versions": {name: importlib.metadata.version(name) for name in
                              ("capture-metric", "FactualSceneGraph", "transformers", "sentence-transformers", "torch",
                               "nltk", "numpy")},
                 "hash_seed": os.environ.get("PYTHONHASHSEED")}
    evaluator = released.CAPTURE()
    out["sentences"] = {t: released.sent_tokenize(t) for t in texts}
    out["tags"] = {t: nltk.pos_tag(nltk.word_tokenize(t)) for t in texts}
    out["nouns"] = {t: sorted(set(evaluator.get_all_lemmatized_nouns(t))) for t in texts}

    with quiet:
        out["parser_text"] = {t: parser.parse(out["sentences"][t], beam_size=5, return_text=True, max_output_len=128) for t in texts}
        out["parser_graphs"] = {t: [graph_json(g) for g in parser.parse(out["sentences"][t], beam_size=5, return_text=False,
                                                                         max_output_len=128)] for t in texts}
    # The package's clean-up of decoded text (what _parse_batch does after batch_decode) on crafted outputs.
    from factual_scene_graph.utils import clean_graph_string, space_out_symbols_in_graph

    out["cleanup"] = {text: clean_graph_string(space_out_symbols_in_graph(text.replace("Generate Scene Graph:", "").strip()))
                      for text in CLEANUP_INPUTS}
    out["fixture_graphs"] = {s: graph_json(parser.graph_string_to_object(g)) for s, g in fixtures["graphs"].items()}
    out["cleanup_graphs"] = {text: graph_json(parser.graph_string_to_object(cleaned)) for text, cleaned in out["cleanup"].items()}

    runs = {}
    for source, stand_in in (("fixture", FixtureParser()), ("parser", parser)):
        extracted = {}
        for variant, options in VARIANTS.items():
            evaluator = released.CAPTURE(**options)
            evaluator.parser = stand_in
            if variant in ("default", "no_stop_words"):
                with quiet:
                    extracted[variant] = {t: parsed_json(evaluator.sample_to_parse_results((0, t))[1:]) for t in texts}
            parses = extracted["no_stop_words" if variant == "no_stop_words" else "default"]
            gts = {s["id"]: s["references"] for s in samples}
            res = {s["id"]: [s["prediction"]] for s in samples}
            gt_parsed = {s["id"]: [as_parsed(parses[r]) for r in s["references"]] for s in samples}
            cand_parsed = {s["id"]: [as_parsed(parses[s["prediction"]])] for s in samples}
            with quiet, contextlib.redirect_stdout(io.StringIO()):
                score, scores, details = evaluator.compute_score(gts, res, prev_gt_parsed=gt_parsed, prev_cand_parsed=cand_parsed,
                                                                 return_parse_results=True)
                pairs = {s["id"]: [list(map(float, evaluator.compute_f_score(gt_parsed[s["id"]][j], cand_parsed[s["id"]][0])))
                                   for j in range(len(s["references"]))] for s in samples}
            runs[f"{source}/{variant}"] = {"score": float(score), "scores": dict(zip(gts, map(float, scores))), "pairs": pairs,
                                           "reported": {d["sample_key"]: {k: v for k, v in d.items() if k.endswith(("precision", "recall", "f1"))}
                                                        for d in details}}
        out[f"extracted_{source}"] = extracted["default"]
        out[f"extracted_{source}_no_stop_words"] = extracted["no_stop_words"]
    out["runs"] = runs

    # Matching stage alone: the package's compute_match on the lists compute_f_score builds (objects, attribute words).
    evaluator = released.CAPTURE()
    parses = out["extracted_fixture"]
    matches = []
    for s in samples:
        cand = parses[s["prediction"]]
        for ref in s["references"]:
            gt = parses[ref]
            for kind, c, g in (("objects", cand["objects"], gt["objects"]),
                               ("attributes", [w for v in cand["attributes"].values() for w in v],
                                [w for v in gt["attributes"].values() for w in v])):
                with quiet, contextlib.redirect_stdout(io.StringIO()):
                    found = evaluator.compute_match(c, g)
                matches.append({"sample": s["id"], "kind": kind, "candidates": c, "references": g,
                                "exact_and_synonym": int(found[0]), "candidate_match": float(found[1]), "reference_match": float(found[2])})
    out["matches"] = matches
    # Greedy matching depends on the order the package's sets happen to iterate in.
    out["order_probe"] = [{"candidates": c, "references": r, "exact_and_synonym": int(evaluator.compute_match(c, r)[0])}
                          for c in (["ball", "football"], ["football", "ball"]) for r in (["football field", "ballroom"],
                                                                                           ["ballroom", "football field"])]
    words = sorted({w for m in matches for w in m["candidates"] + m["references"]} | {"man", "woman", "automobile", "car", "bike",
                                                                                      "bicycle", "clock tower", "tower", "sofa", "couch"})
    out["synonym_scores"] = {f"{a}|{b}": float(evaluator.compute_synonyms_score(a, b)) for a in words for b in words}
    return out


# ----------------------------------------------------------------------------------------------------------------- main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package-env", action="append", default=[], metavar="NAME=PYTHON")
    parser.add_argument("--nltk-data", required=False)
    parser.add_argument("--skip-models", action="store_true", help="keep the models already in tests/assets/capture")
    parser.add_argument("--run-package", nargs=4, metavar=("PARSER", "ENCODER", "FIXTURES", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_package:
        *inputs, output = args.run_package
        Path(output).write_text(json.dumps(run_package(*inputs)), encoding="utf-8")
        return

    fixtures = json.loads((ASSETS / "fixtures.json").read_text(encoding="utf-8"))
    if not args.skip_models:
        import torch

        torch.set_num_threads(1)
        words = fixture_words(fixtures)
        build_encoder(ASSETS / "encoder", words)
        build_parser(ASSETS / "parser", fixtures, words)
    for spec in args.package_env:
        name, python = spec.split("=", 1)
        by_seed = {}
        for seed in HASH_SEEDS:
            output = ASSETS / f".golden_{name}_{seed}.json"
            # Loopback only: the package's import-time nltk.download finds its data in --nltk-data and never runs.
            env = {**os.environ, "PYTHONHASHSEED": str(seed), "NLTK_DATA": args.nltk_data or "", "HF_HUB_OFFLINE": "1",
                   "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
            subprocess.run([python, __file__, "--run-package", str(ASSETS / "parser"), str(ASSETS / "encoder"),
                            str(ASSETS / "fixtures.json"), str(output)], check=True, env=env)
            by_seed[seed] = json.loads(output.read_text(encoding="utf-8"))
            output.unlink()
        golden = by_seed[HASH_SEEDS[0]]
        golden["scores_by_hash_seed"] = {str(seed): {run: values["scores"] for run, values in result["runs"].items()}
                                         for seed, result in by_seed.items()}
        (ASSETS / f"golden_{name}.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote golden_{name}.json ({golden['versions']})")


if __name__ == "__main__":
    main()
