"""The LLaVA judges' shared prompt prefix: captions of one image run the prompt up to the caption (the image's
positions included) once, and give what the whole prompts give: the same answers, per-step logits to float rounding
(float32), scores for FLEUR, RefFLEUR and the explanation turn at every batch size and order (EXPERT's scores:
tests/metrics/expert/test_expert_prefix_sharing.py)."""

import pytest
import torch
from PIL import Image

from capeval.backbones.llava import render_prompt, save_scripted_llava
from capeval.scoring.expert import ExpertScorer
from capeval.scoring.fleur import FleurScorer

from fixtures.llava import (CAPTIONS, IMAGE_OF, ITEM_REFERENCES, ITEMS, assert_sharing_changes_no_score, judge_of,
                            whole_prompts)

pytestmark = [pytest.mark.models, pytest.mark.usefixtures("llava_answer_cache")]


def prompts_of(scorer, explain: bool) -> list[str]:
    """The prompts the scorer renders for ITEMS: the first turn, or the explanation turn after a printed rating."""
    instructions = [scorer.instruction(c, refs) for c, refs in zip(ITEMS, ITEM_REFERENCES)]
    if not explain:
        return [render_prompt(scorer.template, [(text, None)]) for text in instructions]
    return [render_prompt(scorer.template, [(text, "0.55</s>"), (scorer.explanation_prompt(c), None)])
            for text, c in zip(instructions, ITEMS)]


SCORERS = {"fleur": lambda m: FleurScorer(m, device="cpu", cache=False),
           "reffleur": lambda m: FleurScorer(m, reference_based=True, device="cpu", cache=False),
           "expert": lambda m: ExpertScorer(m, adapter=None, device="cpu", cache=False)}


@pytest.mark.slow
@pytest.mark.parametrize("explain", [False, True], ids=["rating", "explanation turn"])
@pytest.mark.parametrize("metric", list(SCORERS))
def test_shared_prefixes_give_the_whole_prompts_answers_and_step_logits(scripted_llava, judge_images, monkeypatch,
                                                                        metric, explain):
    scorer = SCORERS[metric](scripted_llava)
    judge = judge_of(scripted_llava)
    prompts = prompts_of(scorer, explain)
    images = [Image.open(judge_images[i]).convert("RGB") for i in IMAGE_OF]
    groups = judge.shared_prefixes([judge.prompt_ids(p) for p in prompts], judge.pixels(images))
    assert groups is not None and groups[0] == [0, 0, 1, 0, 2, 1, 0, 0]
    assert len(set(groups[1])) > 1  # prefixes of several lengths: the padding before them differs
    shared = judge.generate(prompts, images, stop="</s>", max_new_tokens=8, dtype=torch.float32)
    whole_prompts(monkeypatch, judge)
    whole = judge.generate(prompts, images, stop="</s>", max_new_tokens=8, dtype=torch.float32)
    for ours, theirs in zip(shared, whole):
        assert ours.ids == theirs.ids and ours.text == theirs.text
        torch.testing.assert_close(ours.logits, theirs.logits, rtol=0, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, {"reference_based": True}, {"explain": True}], ids=["fleur", "reffleur", "explain"])
def test_fleur_scores_with_shared_prefixes_equal_whole_prompts_at_every_batch_size_and_order(
        scripted_llava, judge_images, monkeypatch, options):
    assert_sharing_changes_no_score(FleurScorer(scripted_llava, device="cpu", cache=False, **options), judge_images, monkeypatch)


class Counted:
    """What the judge's forward passes receive: images the vision tower encodes and image positions in the input ids."""

    def __init__(self, judge):
        self.pixel_rows = self.image_positions = 0
        self.judge = judge
        self.hooks = [judge.model.register_forward_pre_hook(self.positions, with_kwargs=True),
                      judge.model.model.vision_tower.register_forward_pre_hook(self.pixels, with_kwargs=True)]

    def positions(self, module, args, kwargs):
        if kwargs.get("input_ids") is not None:
            self.image_positions += int((kwargs["input_ids"] == self.judge.image_token_id).sum())

    def pixels(self, module, args, kwargs):
        self.pixel_rows += (args[0] if args else kwargs["pixel_values"]).shape[0]

    def remove(self):
        for hook in self.hooks:
            hook.remove()


@pytest.mark.slow
def test_each_images_prefix_runs_once_per_batch(scripted_llava, judge_images, monkeypatch):
    judge = judge_of(scripted_llava)
    scorer = FleurScorer(scripted_llava, device="cpu", cache=False)
    counted = Counted(judge)
    try:
        # Eight captions of three images in one batch: three images encoded, each image's positions run once.
        scorer.score(ITEMS, images=[judge_images[i] for i in IMAGE_OF], batch_size=8)
        assert (counted.pixel_rows, counted.image_positions) == (3, 3 * judge.image_positions)
        # The whole prompts: every caption encodes its image and runs its positions.
        whole_prompts(monkeypatch, judge)
        counted.pixel_rows = counted.image_positions = 0
        scorer.score(ITEMS, images=[judge_images[i] for i in IMAGE_OF], batch_size=8)
        assert (counted.pixel_rows, counted.image_positions) == (8, 8 * judge.image_positions)
    finally:
        counted.remove()


@pytest.mark.slow
def test_captions_of_one_image_are_batched_together_whatever_their_order(scripted_llava, judge_images):
    judge = judge_of(scripted_llava)
    counted = Counted(judge)
    try:
        # Images 0, 1, 0, 1 in batches of two: generated as (0, 0) and (1, 1), two images encoded, not four.
        FleurScorer(scripted_llava, device="cpu", cache=False).score(
            CAPTIONS, images=[judge_images[i] for i in (0, 1, 0, 1)], batch_size=2)
        assert counted.pixel_rows == 2
    finally:
        counted.remove()


def test_a_sliding_window_cache_is_not_shared():
    from transformers import LlavaConfig, LlavaForConditionalGeneration, MistralConfig

    from capeval.backbones.llava import LlavaJudge

    def judge(sliding_window):
        text = MistralConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                             num_key_value_heads=2, sliding_window=sliding_window)
        model = LlavaForConditionalGeneration(LlavaConfig(text_config=text, image_token_index=5))
        return LlavaJudge(model, None, None, torch.device("cpu"))

    assert not judge(16).shares_prefixes
    assert judge(None).shares_prefixes


@pytest.mark.slow
def test_the_scripted_llava_at_other_sizes_keeps_its_answer_and_shares_its_prefix(tmp_path, judge_images, monkeypatch):
    # The speed benchmarks' stand-ins: more and wider layers, a vision tower of 16 patches.
    model = save_scripted_llava(tmp_path, text_sizes={"hidden_size": 512, "num_hidden_layers": 3},
                                vision_sizes={"image_size": 56, "num_hidden_layers": 1})
    judge = judge_of(model)
    assert judge.image_positions == 16 and judge.model.config.text_config.num_hidden_layers == 3
    scorer = FleurScorer(model, device="cpu", cache=False)
    shared = scorer.score(CAPTIONS[:3], images=[judge_images[0]] * 3)
    whole_prompts(monkeypatch, judge)
    whole = scorer.score(CAPTIONS[:3], images=[judge_images[0]] * 3)
    assert shared.details["answer"] == whole.details["answer"] == ["0.7"] * 3
    assert shared["fleur"] == pytest.approx(whole["fleur"], abs=1e-6) and len(set(shared["fleur"])) == 3
    # What attention adds is scaled with the width: the digits' probabilities weigh as at the default width (about 0.55).
    assert all(0.4 < value < 0.7 for value in shared["fleur"])
