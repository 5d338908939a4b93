"""The functions capeval's lmms-eval task configs name (``!function capeval.integrations.lmms_eval.caption_tasks.…``).

Three kinds:

* **documents** — ``*_doc_to_visual``, ``*_doc_to_text``, ``*_doc_to_target``: the same as lmms-eval 0.7's own caption
  tasks (its ``utils.py`` of ``coco_cap``, ``nocaps``, ``flickr30k``, ``textcaps``, ``coco_cap_chair``, ``amber_g``,
  ``detailcaps``), written here so the configs need neither lmms-eval's task modules nor their imports (pycocotools,
  Java's toolkit, ``capture_metric``); the tests compare each with lmms-eval's on the same documents.
* **per-document results** — ``*_process_result``: what the split's scoring needs of each document, as lmms-eval's
  own process functions return it (``{"answer", "pred", "image_id"}`` under every metric name), so capeval's
  aggregations and lmms-eval's take the same items. CHAIR and AMBER keep the caption itself (lmms-eval keeps the words
  it found), so their words are found for the whole split at once. The ``*_extra`` variants also score each caption with
  the image metrics (CLIP-S / RefCLIP-S, PAC-S / RefPAC-S, Polos) and the judge, where the document's image is at hand.
* **aggregations** — one function per metric. The first aggregation of a split scores the whole split in one
  :func:`capeval.evaluate` call (BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, and SPICE where Stanford CoreNLP is installed)
  and keeps the result; the other six read it (:func:`split_result`). lmms-eval's seven aggregations each
  re-tokenize and re-score the split, with Java.

Environment (read when a split is scored):

* ``CAPEVAL_LMMS_SPECS`` — capeval metric specs, ``;``-separated, replacing the default of the metric of the same name,
  e.g. ``pac_score:variant=pac-s,checkpoint=/w/clip_ViT-B-32.pth;clip_score:device=cuda``;
* ``CAPEVAL_LMMS_JUDGE`` — the judge of the ``*_judge`` metric, as a spec (``clair:base_url=http://127.0.0.1:8000/v1,model=…``);
  without it the judge metric is NaN and says so once;
* ``AMBER_BASE_DIR`` — lmms-eval's AMBER folder: its ``metadata/`` (relation.json, safe_words.txt, annotations.json,
  metrics.txt) is AMBER's data; without it capeval reads the released files (downloaded once).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
from collections import OrderedDict
from typing import Any, Callable, Mapping, Sequence

logger = logging.getLogger("capeval.lmms_eval")

# --------------------------------------------------------------------------------------------- documents

#: The prompts of lmms-eval's caption tasks.
COCO_PROMPT = "Provide a one-sentence caption for the provided image."
KARPATHY_PROMPT = "Describe the image briefly."
CHAIR_PROMPT = "Please describe this image in detail."
AMBER_PROMPT = "Describe this image"


def coco_doc_to_visual(doc: Mapping[str, Any]) -> list:
    return [doc["image"].convert("RGB")]


def coco_doc_to_visual_karpathy(doc: Mapping[str, Any]) -> list:
    """The Karpathy split's image, fetched from the document's ``url`` (as lmms-eval's ``coco_karpathy`` tasks do)."""
    import requests
    from PIL import Image

    response = requests.get(doc["url"])
    return [Image.open(io.BytesIO(response.content)).convert("RGB")]


def coco_doc_to_text(doc: Mapping[str, Any]) -> str:
    return COCO_PROMPT


def prompt_doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """The prompt of the config's ``lmms_eval_specific_kwargs`` (nocaps, textcaps, detailcaps)."""
    return lmms_eval_specific_kwargs["prompt"]  # type: ignore[index]


def num_image_doc_to_visual(doc: Mapping[str, Any]) -> list:
    """The image once, or twice with ``NUM_IMAGE=2`` (lmms-eval's ``coco_cap_chair`` and ``amber_g``)."""
    num_image = int(os.environ.get("NUM_IMAGE", "1"))
    if num_image == 1:
        return [doc["image"].convert("RGB")]
    if num_image == 2:
        return [doc["image"].convert("RGB"), doc["image"].convert("RGB")]
    raise ValueError(f"num_image must be 1 or 2, got {num_image}")


def chair_doc_to_text(doc: Mapping[str, Any]) -> str:
    return CHAIR_PROMPT


def amber_g_doc_to_text(doc: Mapping[str, Any]) -> str:
    return AMBER_PROMPT if doc.get("task_type", "generative") == "generative" else doc.get("text", "")


def detailcaps_doc_to_visual(doc: Mapping[str, Any]) -> list:
    from PIL import Image

    return [Image.open(io.BytesIO(doc["binary"])).convert("RGB")]


def detailcaps_doc_to_target(doc: Mapping[str, Any]) -> list[str]:
    return [doc["GT_Caption_GPT4O"], doc["GT_Caption_GPT4V"], doc["GT_Caption_Gemini15Pro"]]


# --------------------------------------------------------------------------------------------- per-document results

#: The metric names of the toolkit metrics, as lmms-eval's tasks name them after their prefix (``coco_Bleu_4``, ...).
TEXT_METRICS = ("Bleu_4", "Bleu_3", "Bleu_2", "Bleu_1", "METEOR", "ROUGE_L", "CIDEr", "SPICE")
#: The per-caption metrics of the ``*_extra`` tasks: name -> (capeval metric, its default spec, corpus key).
EXTRA_METRICS: dict[str, tuple[str, str, str]] = {
    "CLIP-S": ("clip_score", "clip_score", "clip_s"),
    "RefCLIP-S": ("clip_score", "clip_score", "refclip_s"),
    "PAC-S": ("pac_score", "pac_score:variant=pac-s++", "pac_s"),
    "RefPAC-S": ("pac_score", "pac_score:variant=pac-s++", "refpac_s"),
    "Polos": ("polos", "polos", "polos"),
}
JUDGE = "judge"


def prediction(result: Sequence[str]) -> str:
    return result[0] if len(result) > 0 else ""


def coco_image_id(name: str) -> int:
    """A COCO image id from a question id or file name (``COCO_val2014_000000391895.jpg`` -> 391895)."""
    return int(name.split("_")[-1].split(".")[0])


def caption_item(prefix: str, fields: Callable[[Mapping[str, Any]], dict], names: Sequence[str], *, extra: bool = False):
    """A process function: ``fields(doc)`` plus the prediction under each ``prefix_name``; with ``extra``, the image
    metrics and the judge scored on this document too (one float each)."""
    def process_result(doc: Mapping[str, Any], result: Sequence[str]) -> dict:
        item = {**fields(doc), "pred": prediction(result)}
        out: dict[str, Any] = {f"{prefix}_{name}": item for name in names}
        if extra:
            out.update({f"{prefix}_{name}": value for name, value in extra_values(doc, item).items()})
        return out

    return process_result


def coco_fields(doc):
    return {"answer": doc["answer"], "image_id": coco_image_id(doc["question_id"]), "id": doc["id"]}


def karpathy_fields(doc):
    return {"answer": doc["sentences"], "image_id": coco_image_id(doc["filename"]), "id": doc["imgid"]}


def nocaps_fields(doc):
    return {"answer": doc["annotations_captions"], "image_id": doc["image_id"]}


def flickr_fields(doc):
    return {"answer": doc["caption"], "image_id": int(doc["img_id"])}


def textcaps_fields(doc):
    return {"answer": doc["caption_str"], "image_id": doc["image_id"]}


def detailcaps_fields(doc):
    return {"answer": detailcaps_doc_to_target(doc), "image_id": doc["image"]}


coco_process_result = caption_item("coco", coco_fields, TEXT_METRICS)
coco_process_result_extra = caption_item("coco", coco_fields, TEXT_METRICS, extra=True)
coco_process_result_karpathy = caption_item("coco", karpathy_fields, TEXT_METRICS)
coco_process_result_karpathy_extra = caption_item("coco", karpathy_fields, TEXT_METRICS, extra=True)
nocaps_process_result = caption_item("nocaps", nocaps_fields, TEXT_METRICS)
nocaps_process_result_extra = caption_item("nocaps", nocaps_fields, TEXT_METRICS, extra=True)
flickr_process_result = caption_item("flickr", flickr_fields, TEXT_METRICS)
flickr_process_result_extra = caption_item("flickr", flickr_fields, TEXT_METRICS, extra=True)
textcaps_process_result = caption_item("textcaps", textcaps_fields, TEXT_METRICS)
textcaps_process_result_extra = caption_item("textcaps", textcaps_fields, TEXT_METRICS, extra=True)
detailcaps_process_result = caption_item("detailcaps", detailcaps_fields, ("CAPTURE", *TEXT_METRICS))
for _name, _function in list(globals().items()):  # the names lmms-eval's config dumps show
    if getattr(_function, "__qualname__", "") == "caption_item.<locals>.process_result":
        _function.__name__ = _function.__qualname__ = _name


def coco_cap_chair_process_result(doc, result):
    """The caption and the image's ground-truth objects (``gt_object``): the words are found for the whole split."""
    item = {"answer": list(doc["gt_object"]), "pred": prediction(result), "image_id": int(doc["question_id"])}
    return {f"coco_cap_{name}": item for name in ("chair_s", "chair_i", "recall")}


def amber_g_process_result(doc, result):
    """The description and its AMBER id (the generative questions are AMBER images 1..1004)."""
    item = {"pred": prediction(result), "question_id": doc.get("question_id", 0), "task_type": doc.get("task_type", "generative")}
    return {f"amber_{name}": item for name in ("chair", "cover", "hal", "cog")}


# --------------------------------------------------------------------------------------------- configuration


def spec_overrides() -> dict[str, str]:
    """``CAPEVAL_LMMS_SPECS``: metric name -> the spec replacing its default."""
    from ...registry import spec_options

    specs = {}
    for spec in filter(None, (part.strip() for part in os.environ.get("CAPEVAL_LMMS_SPECS", "").split(";"))):
        name, _ = spec_options(spec)
        specs[name] = spec
    return specs


def spec_of(metric: str, default: str) -> str:
    return spec_overrides().get(metric, default)


def spice_available() -> bool:
    """Whether SPICE can run here: Stanford CoreNLP installed (``capeval download spice``) and Java on PATH."""
    import shutil

    from ...models import ModelUnavailableError
    from ...scoring.spice import corenlp_jars

    try:
        corenlp_jars()
    except ModelUnavailableError:
        return False
    return shutil.which("java") is not None


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logger.warning(message)


# --------------------------------------------------------------------------------------------- split results

#: The latest splits' results, by a digest of their items and the metrics asked: the seven aggregations of one split
#: score it once.
_RESULTS: "OrderedDict[str, Any]" = OrderedDict()
_KEEP = 8


def split_digest(kind: str, items: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> str:
    digest = hashlib.sha256(kind.encode())
    for item in items:
        digest.update(json.dumps([item.get(field) for field in fields], default=str, ensure_ascii=False).encode())
    return digest.hexdigest()


def split_result(kind: str, items: Sequence[Mapping[str, Any]], fields: Sequence[str], score: Callable[[], Any]) -> Any:
    """``score()`` for these items once: later calls with the same items (the split's other aggregations) get the same
    result."""
    key = split_digest(kind, items, fields)
    if key not in _RESULTS:
        _RESULTS[key] = score()
        while len(_RESULTS) > _KEEP:
            _RESULTS.popitem(last=False)
    _RESULTS.move_to_end(key)
    return _RESULTS[key]


def text_metric_specs() -> list[str]:
    specs = [spec_of(name, name) for name in ("bleu", "meteor", "rouge", "cider")]
    if spice_available():
        specs.append(spec_of("spice", "spice"))
    else:
        warn_once("capeval: SPICE is left out (NaN): it needs Stanford CoreNLP (capeval download spice) and Java on PATH")
    return specs


def text_result(items: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """BLEU-1..4, METEOR, ROUGE-L, CIDEr-D (and SPICE where it runs) of the split, in one :func:`capeval.evaluate`."""
    def score() -> dict[str, float]:
        from ...evaluation import evaluate

        predictions = [item["pred"] for item in items]
        references = [list(item["answer"]) for item in items]
        return dict(evaluate(predictions, references, metrics=text_metric_specs(), show_progress=False).corpus)

    return split_result("text", items, ("pred", "answer"), score)


def text_aggregation(key: str, name: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
    def aggregate(results):
        return text_result(results).get(key, math.nan)

    aggregate.__name__ = aggregate.__qualname__ = name
    return aggregate


bleu_4 = text_aggregation("bleu_4", "bleu_4")
bleu_3 = text_aggregation("bleu_3", "bleu_3")
bleu_2 = text_aggregation("bleu_2", "bleu_2")
bleu_1 = text_aggregation("bleu_1", "bleu_1")
meteor = text_aggregation("meteor", "meteor")
rouge_l = text_aggregation("rouge_l", "rouge_l")
cider = text_aggregation("cider", "cider")
spice = text_aggregation("spice", "spice")


def capture(results) -> float:
    """CAPTURE of the split (detailcaps), one :func:`capeval.evaluate` call over the raw captions."""
    def score() -> float:
        from ...evaluation import evaluate

        predictions = [item["pred"] for item in results]
        references = [list(item["answer"]) for item in results]
        return float(evaluate(predictions, references, metrics=[spec_of("capture", "capture")], show_progress=False).corpus["capture"])

    return split_result("capture", results, ("pred", "answer"), score)


# --------------------------------------------------------------------------------------------- CHAIR

def chair_result(items: Sequence[Mapping[str, Any]], variant: str) -> dict[str, float]:
    """CHAIR_s, CHAIR_i and recall of the split in percent (lmms-eval's scale), each caption against its document's
    ground-truth objects."""
    def score() -> dict[str, float]:
        from ...evaluation import evaluate
        from ...scoring.chair import ChairScorer

        objects: Any = {f"doc-{index}": list(dict.fromkeys(item["answer"])) for index, item in enumerate(items)}
        scorer = ChairScorer(variant=variant, objects=objects)  # a mapping as well as a JSON file
        result = evaluate([item["pred"] for item in items], images=list(objects), metrics=[scorer], show_progress=False)
        return {key: 100 * result.corpus[key] for key in ("chair_s", "chair_i", "chair_recall")}

    return split_result(f"chair:{variant}", items, ("pred", "answer"), score)


def named_aggregation(split_values, key: str, variant: str, name: str):
    """lmms-eval's aggregation ``name``: ``key`` of ``split_values(results, variant)`` (the split scored once)."""
    def aggregate(results):
        return split_values(results, variant)[key]

    aggregate.__name__ = aggregate.__qualname__ = name
    return aggregate


# Named so that lmms-eval does not bootstrap them (it bootstraps functions named like its own CHAIR ones).
chair_s = named_aggregation(chair_result, "chair_s", "opera", "chair_s")
chair_i = named_aggregation(chair_result, "chair_i", "opera", "chair_i")
chair_recall = named_aggregation(chair_result, "chair_recall", "opera", "chair_recall")
original_chair_s = named_aggregation(chair_result, "chair_s", "original", "original_chair_s")
original_chair_i = named_aggregation(chair_result, "chair_i", "original", "original_chair_i")
original_chair_recall = named_aggregation(chair_result, "chair_recall", "original", "original_chair_recall")


# --------------------------------------------------------------------------------------------- AMBER

#: The spaCy pipelines lmms-eval's ``amber_g`` tries, in its order (the original uses en_core_web_lg alone).
LMMS_SPACY_MODELS = ("en_core_web_md", "en_core_web_sm", "en_core_web_lg")


def amber_data_dir() -> str | None:
    base = os.environ.get("AMBER_BASE_DIR")
    return os.path.join(base, "metadata") if base else None


def lmms_spacy_model() -> str:
    """The pipeline lmms-eval's ``amber_g`` would load here: the first of :data:`LMMS_SPACY_MODELS` installed."""
    import spacy.util

    for name in LMMS_SPACY_MODELS:
        if spacy.util.is_package(name):
            return name
    return LMMS_SPACY_MODELS[-1]


def amber_result(items: Sequence[Mapping[str, Any]], variant: str) -> dict[str, float]:
    """CHAIR, Cover, Hal and Cog of the split's generative descriptions.

    ``"original"``: AMBER's ``inference.py`` (spaCy ``en_core_web_lg``; the counters summed over the split from
    ``metrics.txt``'s initial values; one decimal, as it prints them). ``"lmms"``: lmms-eval's ``amber_g`` (the first
    of en_core_web_md, _sm, _lg installed; each description's counters start from the initial values, so the sums
    carry them once per description; not rounded). The matching of words is the same (:mod:`capeval.scoring.amber`)."""
    def score() -> dict[str, float]:
        from ...evaluation import evaluate
        from ...scoring.amber import DEFAULT_SPACY_MODEL, AmberScorer, corpus_values

        generative = [item for item in items if item.get("task_type", "generative") == "generative"]
        spacy_model = lmms_spacy_model() if variant == "lmms" else DEFAULT_SPACY_MODEL
        scorer = AmberScorer(data_dir=amber_data_dir(), spacy_model=spacy_model, rounded=variant == "original")
        result = evaluate([item["pred"] for item in generative], images=[item["question_id"] for item in generative],
                          metrics=[scorer], show_progress=False)
        if variant == "original":
            return dict(result.corpus)
        statistics = next(iter(result.scores.values())).sufficient_statistics
        sums = [sum(column) for column in zip(*statistics)] if statistics else [0.0] * 8
        # lmms-eval starts every document's counters (a discriminative one's too) from metrics.txt's initial values.
        initial = {name: value * len(items) for name, value in scorer.data().initial.items()}
        return corpus_values(sums, initial, rounded=False)

    return split_result(f"amber:{variant}", items, ("pred", "question_id", "task_type"), score)


# Named so that lmms-eval does not bootstrap them (it bootstraps functions whose names hold "amber_").
chair_of_amber = named_aggregation(amber_result, "amber_chair", "original", "chair_of_amber")
cover_of_amber = named_aggregation(amber_result, "amber_cover", "original", "cover_of_amber")
hal_of_amber = named_aggregation(amber_result, "amber_hal", "original", "hal_of_amber")
cog_of_amber = named_aggregation(amber_result, "amber_cog", "original", "cog_of_amber")
lmms_chair_of_amber = named_aggregation(amber_result, "amber_chair", "lmms", "lmms_chair_of_amber")
lmms_cover_of_amber = named_aggregation(amber_result, "amber_cover", "lmms", "lmms_cover_of_amber")
lmms_hal_of_amber = named_aggregation(amber_result, "amber_hal", "lmms", "lmms_hal_of_amber")
lmms_cog_of_amber = named_aggregation(amber_result, "amber_cog", "lmms", "lmms_cog_of_amber")


# --------------------------------------------------------------------------------------------- extra metrics

_SCORERS: dict[str, Any] = {}


def scorer_of(spec: str):
    """One scorer per spec for the process (its models load once)."""
    if spec not in _SCORERS:
        from ...registry import resolve

        _SCORERS[spec] = resolve(spec)
    return _SCORERS[spec]


def extra_values(doc: Mapping[str, Any], item: Mapping[str, Any]) -> dict[str, float]:
    """The image metrics and the judge of one document's caption (NaN, said once, where one cannot run)."""
    from ...evaluation import evaluate

    image = doc.get("image")
    if image is None and "binary" in doc:
        image = detailcaps_doc_to_visual(doc)[0]
    values: dict[str, float] = {}
    by_metric: dict[str, list[str]] = {}
    for name, (metric, default, _) in EXTRA_METRICS.items():
        by_metric.setdefault(metric, []).append(name)
    for metric, names in by_metric.items():
        spec = spec_of(metric, EXTRA_METRICS[names[0]][1])
        try:
            if image is None:
                raise ValueError("the document has no image")
            corpus = evaluate([item["pred"]], [list(item["answer"])], images=[image.convert("RGB")],
                              metrics=[scorer_of(spec)], show_progress=False).corpus
            values.update({name: float(corpus[EXTRA_METRICS[name][2]]) for name in names})
        except Exception as error:  # noqa: BLE001 - one metric that cannot run leaves the others
            warn_once(f"capeval: {spec} is NaN: {type(error).__name__}: {error}")
            values.update({name: math.nan for name in names})
    judge = os.environ.get("CAPEVAL_LMMS_JUDGE", "").strip()
    if not judge:
        warn_once("capeval: the judge metric is NaN: set CAPEVAL_LMMS_JUDGE to a judge spec "
                  "(e.g. clair:base_url=http://127.0.0.1:8000/v1,model=...)")
        values[JUDGE] = math.nan
    else:
        try:
            scorer = scorer_of(judge)
            images = [image.convert("RGB")] if scorer.needs_images and image is not None else None
            result = evaluate([item["pred"]], [list(item["answer"])], images=images, metrics=[scorer], show_progress=False)
            values[JUDGE] = float(result.columns[next(iter(result.primary.values()))][0])
        except Exception as error:  # noqa: BLE001
            warn_once(f"capeval: the judge {judge} is NaN: {type(error).__name__}: {error}")
            values[JUDGE] = math.nan
    return values
