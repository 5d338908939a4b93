"""The COCO text metrics at COCO scale against pycocoevalcap 1.2 (its Java PTB tokenizer, its METEOR jar) and
aac-metrics where it imports: BLEU-1..4 + ROUGE-L + CIDEr-D (``coco``), the whole COCO table with METEOR
(``coco_table``), and METEOR alone on PTB-tokenized captions (``meteor``: capeval's Java-free engine, whose first use
on a machine builds its paraphrase table, against the jar, which loads it at every start), on SMURF's Karpathy-test
caption sets (5,000 captions: one system; 20,000: all four)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from data import karpathy_inputs
from harness import Benchmark, Compare, Side

TEXT = ("bleu", "rouge", "cider")
TABLE = ("bleu", "meteor", "rouge", "cider")


def capeval_side(metrics: tuple[str, ...]):
    def call(inputs: dict, label: str) -> dict:
        import capeval

        result = capeval.evaluate(inputs["candidates"], inputs["references"], metrics=list(metrics))
        outputs = {"bleu_4": result.columns["bleu"], "rouge_l": result.columns["rouge_l"], "cider": result.columns["cider"],
                   "corpus_bleu": [result.corpus[f"bleu_{k}"] for k in range(1, 5)]}
        if "meteor" in metrics:
            outputs.update(meteor=result.columns["meteor"], corpus_meteor=result.corpus["meteor"])
        return outputs
    return call


def pycocoevalcap_side(metrics: tuple[str, ...]):
    def call(inputs: dict, label: str) -> dict:
        from pycocoevalcap.bleu.bleu import Bleu
        from pycocoevalcap.cider.cider import Cider
        from pycocoevalcap.rouge.rouge import Rouge
        from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

        tokenizer = PTBTokenizer()
        gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(inputs["references"])})
        res = tokenizer.tokenize({i: [{"caption": c}] for i, c in enumerate(inputs["candidates"])})
        corpus_bleu, bleu = Bleu(4).compute_score(gts, res, verbose=0)
        outputs = {"bleu_4": list(bleu[3]), "corpus_bleu": list(corpus_bleu)}
        if "meteor" in metrics:
            from pycocoevalcap.meteor.meteor import Meteor

            corpus_meteor, meteor = Meteor().compute_score(gts, res)
            outputs.update(meteor=list(meteor), corpus_meteor=corpus_meteor)
        outputs["rouge_l"] = list(map(float, Rouge().compute_score(gts, res)[1]))
        outputs["cider"] = list(map(float, Cider().compute_score(gts, res)[1]))
        return outputs
    return call


def aac_metrics_call(inputs: dict, label: str) -> dict:
    from aac_metrics.functional import bleu_4, cider_d, rouge_l
    from aac_metrics.utils.tokenization import preprocess_mono_sents, preprocess_mult_sents

    cands, refs = preprocess_mono_sents(inputs["candidates"]), preprocess_mult_sents(inputs["references"])
    corpus, sentences = bleu_4(cands, refs, return_all_scores=True)
    return {"bleu_4": sentences["bleu_4"].tolist(), "rouge_l": rouge_l(cands, refs)[1]["rouge_l"].tolist(),
            "cider": cider_d(cands, refs)[1]["cider_d"].tolist()}


def capeval_meteor_call(inputs: dict, label: str) -> dict:
    from capeval.scoring.coco import MeteorScorer

    scores = MeteorScorer(tokenizer="none").score(inputs["tokens"]["candidates"], inputs["tokens"]["references"])
    return {"meteor": scores["meteor"], "corpus_meteor": scores.corpus["meteor"]}


def jar_meteor_call(inputs: dict, label: str) -> dict:
    from pycocoevalcap.meteor.meteor import Meteor

    tokens = inputs["tokens"]
    corpus, scores = Meteor().compute_score(dict(enumerate(tokens["references"])),
                                            {i: [candidate] for i, candidate in enumerate(tokens["candidates"])})
    return {"meteor": list(scores), "corpus_meteor": corpus}


def capeval_score_command(metrics: tuple[str, ...]):
    """``capeval score`` on the captions as a JSON-lines file: the whole process a user runs."""
    def command(inputs: Path, output: Path) -> list[str]:
        lines = inputs.with_name("captions.jsonl")
        if not lines.exists():
            data = json.loads(inputs.read_text())
            lines.write_text("".join(json.dumps({"candidate": c, "references": r}) + "\n"
                                     for c, r in zip(data["candidates"], data["references"])))
        return [str(Path(sys.executable).with_name("capeval")), "score", "--input", str(lines),
                *(flag for metric in metrics for flag in ("--metric", metric)), "--output", str(output)]
    return command


def rows_data(rows: int, quick_rows: int, *, tokens: bool = False):
    def data(folder: Path, quick: bool):
        return karpathy_inputs(quick_rows if quick else rows, tokens=tokens)
    return data


def declare() -> list[Benchmark]:
    benchmarks = []
    cold_machine = (("cold machine", "cold process"), ("cold process", "cold process"), ("warm", "warm"))
    for suffix, rows in (("", 5000), ("_20k", 20000)):
        benchmarks.append(Benchmark(
            f"coco{suffix}", f"BLEU-1..4 + ROUGE-L + CIDEr-D, {rows:,} Karpathy-test captions, against pycocoevalcap",
            rows_data(rows, 300), whole_process=True, quick=not suffix,
            sides=(Side("capeval", capeval_side(TEXT), command=capeval_score_command(TEXT)),
                   Side("pycocoevalcap", pycocoevalcap_side(TEXT), role="peer", requires=("pycocoevalcap", "java")),
                   Side("aac-metrics", aac_metrics_call, role="peer", requires=("aac_metrics",))),
            compare=(Compare("capeval", "pycocoevalcap",
                             (("cold process", "cold process"), ("warm", "warm"), ("whole process", "whole process"))),
                     Compare("capeval", "aac-metrics", tolerance=1e-6, check=False)),
            note="pycocoevalcap's PTB tokenizer starts a JVM at every call; capeval's whole process is `capeval score`."))
        benchmarks.append(Benchmark(
            f"coco_table{suffix}", f"The COCO table (BLEU-1..4 + METEOR + ROUGE-L + CIDEr-D), {rows:,} Karpathy-test "
            "captions, against pycocoevalcap", rows_data(rows, 300), whole_process=True,
            sides=(Side("capeval", capeval_side(TABLE), machine_cache=True, command=capeval_score_command(TABLE)),
                   Side("pycocoevalcap", pycocoevalcap_side(TABLE), role="peer", requires=("pycocoevalcap", "java"))),
            compare=(Compare("capeval", "pycocoevalcap", cold_machine + (("whole process", "whole process"),)),),
            note="Cold machine: capeval's cache folder empty, so its first call builds METEOR's paraphrase table; the jar "
                 "loads that table at every start, so its cold machine is its cold process."))
    for suffix, rows in (("_1k", 1000), ("", 5000), ("_20k", 20000)):
        benchmarks.append(Benchmark(
            f"meteor{suffix}", f"METEOR alone, {rows:,} PTB-tokenized Karpathy-test captions, against pycocoevalcap's jar",
            rows_data(rows, 200, tokens=True),
            sides=(Side("capeval", capeval_meteor_call, machine_cache=True, label="capeval METEOR (Python engine)"),
                   Side("jar", jar_meteor_call, role="peer", requires=("pycocoevalcap", "java"),
                        label="pycocoevalcap's METEOR 1.5 jar")),
            compare=(Compare("capeval", "jar", cold_machine),),
            note="Cold machine: capeval's cache folder empty (its first call builds the paraphrase table); the jar starts a "
                 "JVM that loads the table at every call."))
    return benchmarks
