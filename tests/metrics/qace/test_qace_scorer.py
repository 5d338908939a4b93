"""QaceScorer end to end with tiny random models: the protocol, options, both variants, the reference reductions,
batching and the edge cases."""

import numpy as np
import pytest

import capeval

from capeval.scoring.protocol import CaptionScorer
from capeval.scoring.qace import (DEFAULT_BERTSCORE_MODEL, DEFAULT_QA_MODEL, DEFAULT_QG_MODEL, QaceScorer, aggregate,
                                  reduce_references)
from capeval.vision.extractors import RegionExtractor
from capeval.vision.regions import as_region_features

from fixtures.qace import CAPTIONS, REFERENCES

LONG_CAPTION = " ".join(("a man in a red shirt rides a bike past two dogs near the old bridge over the river "
                         "while children play on the green grass ").split() * 10)


@pytest.fixture(scope="module")
def ref_scores(qace_options):
    return QaceScorer("ref", **qace_options).score(CAPTIONS, REFERENCES)


def test_defaults_construct_offline_and_follow_the_protocol():
    ref, img = QaceScorer(), QaceScorer("img")
    assert isinstance(ref, CaptionScorer) and ref.name == ref.primary == "qace"
    assert (ref.needs_references, ref.needs_images, img.needs_references, img.needs_images) == (True, False, False, True)
    options = ref.options()
    assert options["qg_model"] == DEFAULT_QG_MODEL and options["qa_model"] == DEFAULT_QA_MODEL
    assert options["bertscore_model"] == DEFAULT_BERTSCORE_MODEL and options["bertscore_layer"] == 9
    assert (options["qg_format"], options["qa_format"], options["multi_ref"], options["answerability"]) == ("demo", "questeval", "max", True)
    assert img.options()["visual_t5"].endswith("t5vqa/ckpt.zip") and img.options()["visual_prompt"] == "'visual answer: '"
    assert "qa_model" not in img.options() and "visual_t5" not in options
    assert QaceScorer(qa_format="demo").options()["answerability"] is False
    assert ref.provenance()["versions"]["spacy"].startswith("3.8")


@pytest.mark.parametrize("option, value", [("variant", "text"), ("span_order", "random"), ("qg_format", "t5"),
                                           ("qa_format", "squad"), ("multi_ref", "min"), ("answerability", "yes"),
                                           ("bertscore_layer", -1), ("visual_prompt", None)])
def test_invalid_options_name_themselves(option, value):
    with pytest.raises(ValueError, match=option):
        QaceScorer(**{option: value})
    with pytest.raises(TypeError, match="RegionExtractor"):
        QaceScorer("img", extractor="butd")


def check_consistent(scores, scorer, captions):
    """Every column value is recomputable from the per-question details."""
    assert set(scores) == {"qace", "qace_f1", "qace_bertscore", "qace_answerability"}
    assert all(len(values) == len(captions) for values in scores.values())
    assert all(0.0 <= v <= 1.0 for values in scores.values() for v in values)
    for i, records in enumerate(scores.details["questions"]):
        by_context = {}
        for record in records:
            assert set(record) >= {"question", "answer", "predicted_answer", "f1", "bertscore", "answerability"}
            by_context.setdefault(record.get("reference", 0), []).append(record)
        if not records:
            assert all(scores[name][i] == 0.0 for name in scores)
            continue
        per_context = [aggregate([r["f1"] for r in rs], [r["bertscore"] for r in rs], [r["answerability"] for r in rs])
                       for _, rs in sorted(by_context.items())]
        mode = scorer.multi_ref if scorer.variant == "ref" else "concat"
        expected, _ = reduce_references(per_context, mode)
        assert {name: scores[name][i] for name in scores} == pytest.approx(expected, abs=1e-12)
    assert scores.corpus["qace"] == pytest.approx(np.mean(scores["qace"]))


def test_ref_scores_are_consistent_with_their_details(ref_scores, qace_options):
    scorer = QaceScorer("ref", **qace_options)
    check_consistent(ref_scores, scorer, CAPTIONS)
    for i, records in enumerate(ref_scores.details["questions"]):
        assert {r["reference"] for r in records} == set(range(len(REFERENCES[i])))
        assert ref_scores.details["note"][i].startswith("best reference: ")
        spans = [r["answer"] for r in records if r["reference"] == 0]
        assert spans == sorted(spans) and all(s == s.lower() for s in spans)


@pytest.mark.slow
def test_reference_reductions(ref_scores, qace_options):
    mean = QaceScorer("ref", multi_ref="mean", **qace_options).score(CAPTIONS, REFERENCES)
    concat = QaceScorer("ref", multi_ref="concat", **qace_options).score(CAPTIONS, REFERENCES)
    check_consistent(mean, QaceScorer("ref", multi_ref="mean", **qace_options), CAPTIONS)
    check_consistent(concat, QaceScorer("ref", multi_ref="concat", **qace_options), CAPTIONS)
    assert all(m <= x + 1e-12 for m, x in zip(mean["qace"], ref_scores["qace"]))
    assert all("reference" not in r for records in concat.details["questions"] for r in records)
    # with a single reference the three reductions agree
    single = [[refs[0]] for refs in REFERENCES]
    values = {mode: QaceScorer("ref", multi_ref=mode, **qace_options).score(CAPTIONS, single)["qace"] for mode in ("max", "mean", "concat")}
    assert values["max"] == pytest.approx(values["mean"])
    assert values["max"] == pytest.approx(values["concat"])


@pytest.mark.slow
def test_batching_and_determinism(ref_scores, qace_options):
    scorer = QaceScorer("ref", **qace_options)
    one_by_one = scorer.score(CAPTIONS, REFERENCES, batch_size=1)
    assert one_by_one["qace"] == pytest.approx(ref_scores["qace"], abs=1e-6)
    assert [[r["predicted_answer"] for r in rs] for rs in one_by_one.details["questions"]] == \
           [[r["predicted_answer"] for r in rs] for rs in ref_scores.details["questions"]]
    single = [scorer.score([c], [r])["qace"][0] for c, r in zip(CAPTIONS, REFERENCES)]
    assert single == pytest.approx(ref_scores["qace"], abs=1e-6)


def test_edge_cases_ref(qace_options):
    scorer = QaceScorer("ref", **qace_options)
    scores = scorer.score(["", "   ", "running quickly", "They are here", LONG_CAPTION],
                          [["a man"], ["a man"], ["a man runs"], ["people"], ["a man rides a bike near a river"]])
    assert scores["qace"][:4] == [0.0] * 4
    assert scores.details["questions"][:4] == [[], [], [], []]
    assert scores.details["note"][0] == scores.details["note"][1] == "empty caption: no questions, score 0"
    assert scores.details["note"][2].startswith("no noun phrase or named entity")
    # the long caption has 9 distinct spans; the random generator asks some of them the same question
    assert scores.details["questions"][4] and 0.0 < scores["qace"][4] <= 1.0
    with pytest.raises(ValueError, match="references"):
        scorer.score(CAPTIONS, None)


def test_ref_answerability_is_one_minus_the_first_step_probability_of_unanswerable(qace_options, unsure_qa):
    """Each record's answerability is 1 − P(token 73) at the QA model's first decoding step on its (question,
    reference) input, and the column aggregates them (a QA model whose answerabilities are not all 1)."""
    import torch

    from capeval.backbones.visual_t5 import UNANSWERABLE_TOKEN_ID
    from capeval.scoring.qace import QA_FORMATS, T5TextGenerator

    options = {**qace_options, "qa_model": unsure_qa}
    scorer = QaceScorer("ref", **options)
    scores = scorer.score(CAPTIONS, REFERENCES)
    check_consistent(scores, scorer, CAPTIONS)
    generator = T5TextGenerator(unsure_qa, QA_FORMATS["questeval"], device="cpu")
    seen = []
    for i, records in enumerate(scores.details["questions"]):
        for record in records:
            fields = {"question": record["question"], "context": REFERENCES[i][record["reference"]]}
            with torch.inference_mode():
                logits = generator.model(input_ids=torch.tensor(generator.input_ids([fields])),
                                         decoder_input_ids=torch.tensor([[0]])).logits[0, -1]
            expected = 1 - logits.softmax(-1)[UNANSWERABLE_TOKEN_ID].item()
            assert record["answerability"] == pytest.approx(expected, abs=1e-6)
            seen.append(expected)
    assert len(seen) > 5 and max(seen) < 0.9999 and len(set(np.round(seen, 9))) > 3
    assert all(value < 1.0 for value in scores["qace_answerability"] if value > 0)


def test_without_answerability(qace_options):
    scores = QaceScorer("ref", qa_format="demo", **qace_options).score(CAPTIONS[:2], REFERENCES[:2])
    assert set(scores) == {"qace", "qace_f1", "qace_bertscore"}
    for i in range(2):
        records = [r for r in scores.details["questions"][i] if r["reference"] == 0]
        assert all(r["answerability"] is None for r in records)
    forced = QaceScorer("ref", qa_format="demo", answerability=True, **qace_options).score(CAPTIONS[:1], REFERENCES[:1])
    assert "qace_answerability" in forced


class SampleExtractor(RegionExtractor):
    """Stands in for a detector: every image gets the QACE sample's real BUTD features."""

    name = "sample"

    def __init__(self, path):
        self.path, self.calls = path, 0

    def config(self):
        return {"features": "qace_butd_sample"}

    def extract(self, image):
        self.calls += 1
        return as_region_features(self.path)


@pytest.mark.slow
def test_img_with_features_and_with_images(qace_options, sample_features, tmp_path):
    from fixtures import ASSETS

    scorer = QaceScorer("img", **qace_options)
    scores = scorer.score(CAPTIONS, region_features=[sample_features] * 3)
    check_consistent(scores, scorer, CAPTIONS)
    assert scorer.hashcode(scores).endswith(f"features=butd:precomputed)_capeval={capeval.__version__}")
    assert all("reference" not in r for records in scores.details["questions"] for r in records)
    assert all(note is None for note in scores.details["note"])

    extractor = SampleExtractor(sample_features)
    from_images = QaceScorer("img", extractor=extractor, feature_cache_dir=tmp_path, **qace_options)
    image = ASSETS / "qace_sample.jpg"
    extracted = from_images.score(CAPTIONS, images=[image] * 3)
    assert extracted["qace"] == pytest.approx(scores["qace"]) and extractor.calls == 1
    assert from_images.hashcode(extracted).endswith('features=butd:sample({"features": "qace_butd_sample"}))_capeval=' + capeval.__version__)
    from_images.score(CAPTIONS[:1], images=[image])
    assert extractor.calls == 1  # read back from the feature cache


@pytest.mark.slow
def test_edge_cases_img(qace_options, sample_features):
    scorer = QaceScorer("img", **qace_options)
    with pytest.raises(ValueError, match="region_features"):
        scorer.score(CAPTIONS)
    scores = scorer.score(["", "running quickly", LONG_CAPTION], region_features=[sample_features] * 3)
    assert scores["qace"][:2] == [0.0, 0.0] and 0.0 < scores["qace"][2] <= 1.0
    batched_one = scorer.score(CAPTIONS, region_features=[sample_features] * 3, batch_size=1)
    assert batched_one["qace"] == pytest.approx(scorer.score(CAPTIONS, region_features=[sample_features] * 3)["qace"], abs=1e-6)
