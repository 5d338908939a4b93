"""What an lmms-eval run does after generation for a COCO caption task, against capeval's lmms-eval task
(``lmms_coco``): lmms-eval's seven aggregations (``coco_bleu4`` … ``coco_cider`` of its ``tasks/coco_cap/utils.py``,
loaded from the installed lmms-eval and run unchanged) against the same seven metrics of ``capeval_coco2017_cap_val``
(:mod:`capeval.integrations.lmms_eval.caption_tasks`), on the same items: the dicts both tasks' ``process_results``
give (``answer``, ``pred``, ``image_id``, ``id``), for SMURF's 5,000 Karpathy-test captions of one system.

lmms-eval's each build a COCO index, run pycocoevalcap's Java PTB tokenizer on the references and on the captions (two
JVMs) and score their one metric (METEOR in a third JVM that loads its paraphrase table), so the split is tokenized
seven times; capeval's first aggregation scores the split once in one ``capeval.evaluate`` call (no Java) and the other
six read that result. A call is one pass of the seven: the warm one drops capeval's split result first, so the split is
scored again while the cross-call caches of tokens and reference n-grams hit, as when a second model is evaluated on
the same split (lmms-eval starts new JVMs, as in every run). Where lmms-eval does not import, the benchmark is skipped.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from types import SimpleNamespace

from data import karpathy_rows
from harness import Benchmark, Compare, Side

#: The seven COCO metrics, with lmms-eval's aggregation of each and capeval's of the same metric.
AGGREGATIONS = (("Bleu_4", "coco_bleu4", "bleu_4"), ("Bleu_3", "coco_bleu3", "bleu_3"), ("Bleu_2", "coco_bleu2", "bleu_2"),
                ("Bleu_1", "coco_bleu1", "bleu_1"), ("METEOR", "coco_meteor", "meteor"),
                ("ROUGE_L", "coco_rougel", "rouge_l"), ("CIDEr", "coco_cider", "cider"))


def karpathy_items(folder: Path, quick: bool) -> tuple[dict, dict]:
    """lmms-eval's per-document items of the first Karpathy-test captions of SMURF's system 0 (5,000; quick: 200),
    each caption its own image id."""
    rows = karpathy_rows(200 if quick else 5000)
    items = [{"answer": row["references"], "pred": row["candidate"], "image_id": 100000 + index, "id": index}
             for index, row in enumerate(rows)]
    return {"items": items}, {"description": "SMURF's Karpathy-test captions (system 0) as lmms-eval's per-document items "
                                             "of a COCO caption task", "items": len(items),
                              "references": sum(len(item["answer"]) for item in items)}


def lmms_eval_call(inputs: dict, label: str) -> dict:
    """lmms-eval's seven aggregations, from its installed ``coco_cap/utils.py`` (its submission file goes to a
    temporary folder)."""
    import lmms_eval

    path = Path(lmms_eval.__file__).parent / "tasks" / "coco_cap" / "utils.py"
    spec = importlib.util.spec_from_file_location("lmms_eval_coco_cap_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as folder:
        args = SimpleNamespace(output_path=folder)
        return {metric: getattr(module, theirs)(inputs["items"], args) for metric, theirs, _ in AGGREGATIONS}


def capeval_call(inputs: dict, label: str) -> dict:
    """``capeval_coco2017_cap_val``'s seven aggregations, its kept split result dropped first (the split is scored
    again; capeval's cross-call text caches stay, as between two models evaluated on the split)."""
    from capeval.integrations.lmms_eval import caption_tasks

    caption_tasks._RESULTS.clear()
    return {metric: getattr(caption_tasks, ours)(inputs["items"]) for metric, _, ours in AGGREGATIONS}


def declare() -> list[Benchmark]:
    return [Benchmark(
        "lmms_coco", "lmms-eval's seven COCO caption aggregations against capeval_coco2017_cap_val's, 5,000 "
        "Karpathy-test captions", karpathy_items, requires=("lmms_eval",),
        sides=(Side("capeval", capeval_call, label="capeval_coco2017_cap_val's seven"),
               Side("lmms-eval", lmms_eval_call, role="peer", requires=("pycocoevalcap", "pycocotools", "java"),
                    label="lmms-eval's seven aggregations")),
        compare=(Compare("capeval", "lmms-eval"),),
        note="lmms-eval's aggregations each tokenize the split with Java and start a JVM for METEOR; capeval's "
             "first aggregation scores the split once, without Java.")]
