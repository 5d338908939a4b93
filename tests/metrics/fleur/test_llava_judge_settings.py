"""What the LLaVA judges (FLEUR, RefFLEUR, EXPERT) make of their options before any model is loaded: the released
prompts with the caption and references in place, the precision by device, and the options that name a run."""

import torch

from capeval.scoring.expert import ExpertScorer
from capeval.scoring.fleur import FleurScorer, collapse_whitespace

JUDGE = "llava-hf/llava-1.5-13b-hf"  # a hub id: named as it is, never loaded here


def test_refleur_asks_with_the_references_one_per_line_and_the_candidate():
    instruction = FleurScorer(JUDGE, reference_based=True).instruction("a dog runs", ["a dog", "a running dog"])
    assert instruction.endswith("Reference Captions: a dog\na running dog\n\nCandidate Caption: a dog runs\n\n"
                                "Score(Choose a rating from 0.0 to 1.0):")
    assert "Reference Captions: \n\nCandidate Caption: a cat" in FleurScorer(JUDGE, reference_based=True).instruction("a cat", None)
    assert FleurScorer(JUDGE).instruction("a cat", ["a dog"]).endswith("Caption: a cat\n\nScore(Choose a rating from 0.0 to 1.0):")


def test_expert_asks_with_the_caption_in_both_turns():
    scorer = ExpertScorer(JUDGE, adapter=None)
    assert scorer.instruction("a dog runs", None) == ("Evaluate the caption and assign a score on a scale of 0.0 to 1.0.\n\n"
                                                      "Caption: a dog runs\n\nScore (0.0~1.0):")
    assert "\n\nCaption: a dog runs\n\nEvaluation Criteria:\n" in scorer.explanation_prompt("a dog runs")


def test_the_weights_are_float16_on_cuda_and_float32_elsewhere_unless_named(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the device check passes; nothing touches CUDA here
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for scorer_class in (FleurScorer, ExpertScorer):
        assert (scorer_class(JUDGE, device="cuda").dtype, scorer_class(JUDGE, device="cuda").device) == ("float16", torch.device("cuda"))
        assert (scorer_class(JUDGE, device="cpu").dtype, scorer_class(JUDGE, device="cpu").device) == ("float32", torch.device("cpu"))
        assert scorer_class(JUDGE, device="cuda", dtype="bfloat16").dtype == "bfloat16"


def test_the_options_name_the_judge_and_what_differs_from_the_released_run():
    assert FleurScorer(JUDGE, device="cpu").options() == {"model": JUDGE, "dtype": "float32"}
    assert FleurScorer(JUDGE, device="cpu", reference_based=True, max_new_tokens=3).options() == {
        "model": JUDGE, "dtype": "float32", "reference_based": True, "max_new_tokens": 3}
    assert ExpertScorer(JUDGE, adapter="hjkim811/EXPERT-llava-13b-lora", device="cpu").options() == {
        "model": JUDGE, "dtype": "float32", "adapter": "hjkim811/EXPERT-llava-13b-lora"}
    assert "adapter" not in ExpertScorer(JUDGE, adapter=None, device="cpu").options()


def test_answers_are_cached_by_default_and_nothing_is_counted_before_a_call():
    for scorer_class in (FleurScorer, ExpertScorer):
        assert scorer_class(JUDGE).cache is True and scorer_class(JUDGE, cache=False).cache is False
        assert scorer_class(JUDGE).provenance()["usage"] == {}


def test_captions_are_read_with_runs_of_whitespace_as_one_space():
    assert collapse_whitespace("  a  dog\n\truns ") == "a dog runs"


def test_an_answer_is_cached_under_the_judge_the_prompt_the_image_the_decoding_and_the_reading():
    # The cache key hashes this request: what it holds decides which kept answers a rerun may reuse.
    assert FleurScorer(JUDGE, device="cpu", max_new_tokens=7).request("PROMPT", "DIGEST") == {
        "adapter": None, "dtype": "float32", "prompt": "PROMPT", "image": "DIGEST",
        "decoding": {"do_sample": False, "num_beams": 1, "max_new_tokens": 7, "stop": "</s>"},
        "read": {"metric": "fleur", "search_start": 0}}
    assert ExpertScorer(JUDGE, adapter="hjkim811/EXPERT-llava-13b-lora", device="cpu").request("PROMPT", "DIGEST") == {
        "adapter": "hjkim811/EXPERT-llava-13b-lora", "dtype": "float32", "prompt": "PROMPT", "image": "DIGEST",
        "decoding": {"do_sample": False, "num_beams": 1, "max_new_tokens": 512, "stop": "###"},
        "read": {"metric": "expert", "search_start": 1}}
