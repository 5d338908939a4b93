"""CHAIR against the released code's outputs on the fixture COCO folder and 40 captions (tests/assets/chair/):
LisaAnne/Hallucination's utils/chair.py (one caption per image per run, as its input format allows), Maxlinn's
standalone port (the same words, adds recall) and OPERA's chair.py (WordNet lemmas by POS tag)."""

import pytest

from capeval.scoring.chair import ChairScorer

from fixtures.chair import ANNOTATIONS


def assert_caption_equal(scores, i, sentence, metrics):
    """Caption ``i`` of ``scores`` against the released code's record of it."""
    truth = set(sentence["mscoco_gt_words"])
    assert scores.details["mentioned_objects"][i] == sentence["mscoco_generated_words"]
    assert scores.details["ground_truth_objects"][i] == sorted(truth)
    hallucinated = [(word, category) for word, category in zip(scores.details["mentioned_words"][i], scores.details["mentioned_objects"][i])
                    if category not in truth]
    assert hallucinated == [tuple(pair) for pair in sentence["mscoco_hallucinated_words"]]
    assert scores.details["hallucinated_objects"][i] == [category for _, category in hallucinated]
    for column, key in metrics.items():
        assert scores[column][i] == sentence["metrics"][key]


def test_the_original_variant_equals_the_released_chair_py(released):
    scorer = ChairScorer(variant="original", annotations=str(ANNOTATIONS))
    captions = released["captions"]
    assert len(released["original"]) == 5  # 40 captions of 9 images, at most one caption per image in a run
    for run in released["original"]:
        scores = scorer.score([captions[i]["caption"] for i in run["indices"]], images=[captions[i]["image_id"] for i in run["indices"]])
        for i, sentence in enumerate(run["sentences"]):
            assert sentence["image_id"] == captions[run["indices"][i]]["image_id"]
            assert_caption_equal(scores, i, sentence, {"chair_s": "CHAIRs", "chair_i": "CHAIRi"})
        assert scores.corpus["chair_s"] == run["overall"]["CHAIRs"]
        assert scores.corpus["chair_i"] == run["overall"]["CHAIRi"]


@pytest.mark.parametrize("port, variant", [("maxlinn", "original"), ("opera", "opera")])
def test_every_caption_of_one_call_equals_the_python3_ports(released, recorded_nltk, port, variant):
    """All 40 captions in one call, several per image, with the recall the ports add."""
    captions = released["captions"]
    scores = ChairScorer(variant=variant, annotations=str(ANNOTATIONS)).score(
        [c["caption"] for c in captions], images=[f"COCO_val2014_{c['image_id']:012d}.jpg" for c in captions])
    output = released[port]
    for i, sentence in enumerate(output["sentences"]):
        assert_caption_equal(scores, i, sentence, {"chair_s": "CHAIRs", "chair_i": "CHAIRi", "recall": "Recall"})
    assert scores.corpus == {"chair_s": output["overall"]["CHAIRs"], "chair_i": output["overall"]["CHAIRi"],
                             "recall": output["overall"]["Recall"]}


def test_the_two_variants_differ_where_pattern_and_wordnet_do(released, recorded_nltk):
    """Pattern turns a singular "bus" into "bu", so the original misses it; WordNet's lemma keeps it."""
    original, opera = (released[port]["sentences"] for port in ("maxlinn", "opera"))
    differing = [i for i, (a, b) in enumerate(zip(original, opera)) if a["mscoco_generated_words"] != b["mscoco_generated_words"]]
    assert [released["captions"][i]["caption"] for i in differing] == [
        "A bus stops at a traffic light.", "A city bus drives past a motor bike, a motor cycle and a parked truck.",
        "Birds, geese and sheep near the benches.", "An air plane and a passenger train near a bus."]


def test_the_opera_variant_with_the_wordnet_installed_here(released, recorded_tags):
    """The whole opera path on this machine's WordNet (NLTK's data or Debian's wordnet-base), tags as recorded."""
    captions = released["captions"]
    scores = ChairScorer(annotations=str(ANNOTATIONS)).score([c["caption"] for c in captions], images=[c["image_id"] for c in captions])
    assert scores.details["mentioned_objects"] == [s["mscoco_generated_words"] for s in released["opera"]["sentences"]]
    assert scores.corpus["chair_i"] == released["opera"]["overall"]["CHAIRi"]


def test_ground_truth_equals_the_released_code(released, recorded_nltk):
    """Each image's objects: its instance categories plus what its five reference captions mention."""
    for port, variant in (("maxlinn", "original"), ("opera", "opera")):
        scorer = ChairScorer(variant=variant, annotations=str(ANNOTATIONS))
        images = sorted(released[port]["gt_objects"], key=int)
        truths = scorer.image_truths(scorer.caption_objects(), images)
        assert {image: sorted(truth) for image, truth in zip(images, truths)} == released[port]["gt_objects"]
