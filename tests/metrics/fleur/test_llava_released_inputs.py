"""What the LLaVA judges feed the model, against the released scripts' own (``scripts/build_llava_judge_goldens.py``):
the prompts FLEUR, RefFLEUR, FLEUR's explanation turn and EXPERT render, exactly, and LLaVA's ``pad`` squares,
pixel for pixel."""

import json

import numpy as np
import pytest
import torch
from PIL import Image

from capeval.backbones.llava import OPENAI_CLIP_MEAN, TEMPLATES, pad_to_square, render_prompt
from capeval.scoring.expert import EXPERT_EXPLANATION_PROMPT, EXPERT_PROMPT, parse_explanation
from capeval.scoring.fleur import (FLEUR_EXPLANATION_PROMPT, FLEUR_PROMPT, REFFLEUR_PROMPT, collapse_whitespace,
                                   smoothed_score)

from fixtures import ASSETS

GOLDEN = json.loads((ASSETS / "llava_judges" / "goldens.json").read_text())
PROMPTS = GOLDEN["prompts"]
CAPTION = collapse_whitespace(GOLDEN["caption"])  # the released scripts read captions so


def first_turn_value(record: dict, text: str, search_start: int) -> float:
    answer = record["first_answer"]
    return smoothed_score(text, answer["generated_ids"], torch.tensor(answer["step_logits"]), GOLDEN["digit_ids"],
                          search_start=search_start)


def test_fleur_prompt_is_the_released_one():
    assert render_prompt("llava_v1", [(FLEUR_PROMPT.format(candidate=CAPTION), None)]) == PROMPTS["fleur"]


def test_reffleur_prompt_joins_the_references_by_newlines_as_released():
    text = REFFLEUR_PROMPT.format(references="\n".join(GOLDEN["references"]), candidate=CAPTION)
    assert render_prompt("llava_v1", [(text, None)]) == PROMPTS["reffleur"]


def test_fleur_explanation_turn_carries_the_printed_score_and_two_end_tokens():
    record = PROMPTS["fleur_explanation"]
    value = first_turn_value(record, "0.75", 0)
    first = FLEUR_PROMPT.format(candidate=CAPTION)
    assert render_prompt("llava_v1", [(first, None)]) == record["turns"][0]
    assert render_prompt("llava_v1", [(first, f"{value}</s>"), (FLEUR_EXPLANATION_PROMPT, None)]) == record["turns"][1]


def test_expert_prompt_is_the_released_llava_v0_one():
    assert render_prompt("llava_v0", [(EXPERT_PROMPT.format(caption=CAPTION), None)]) == PROMPTS["expert"]
    assert "###Human: <image>\n" in PROMPTS["expert"] and PROMPTS["expert"].endswith("###Assistant:")


def test_expert_explanation_turn_and_score_are_the_released_ones():
    record = PROMPTS["expert_explanation"]
    value = first_turn_value(record, "0.55", 1)
    assert value == pytest.approx(record["result"]["expert_score"], abs=1e-6)
    first = EXPERT_PROMPT.format(caption=CAPTION)
    turns = [(first, f"{value}</s>"), (EXPERT_EXPLANATION_PROMPT.format(caption=CAPTION), None)]
    assert render_prompt("llava_v0", turns) == record["turns"][1]


@pytest.mark.parametrize("index", range(len(GOLDEN["explanations"])))
def test_expert_explanation_parse_is_the_released_one(index):
    text, parsed = GOLDEN["explanations"][index]
    assert parse_explanation(text) == parsed


def test_the_stop_strings_are_the_released_separators():
    assert TEMPLATES["llava_v1"].stop == "</s>" and TEMPLATES["llava_v0"].stop == "###"


@pytest.mark.parametrize("name", GOLDEN["images"])
def test_pad_to_square_is_llava_expand2square_pixel_for_pixel(name):
    image = Image.fromarray(np.array(GOLDEN["images"][name], dtype=np.uint8))
    padded = np.asarray(pad_to_square(image, GOLDEN["clip_mean"]))
    assert padded.shape == np.array(GOLDEN["padded"][name]).shape
    assert (padded == np.array(GOLDEN["padded"][name], dtype=np.uint8)).all()


def test_the_released_scripts_padded_their_images_as_pad_to_square_does():
    for key, name in (("fleur wide.png", "wide.png"), ("expert tall.png", "tall.png")):
        image = Image.fromarray(np.array(GOLDEN["images"][name], dtype=np.uint8))
        assert (np.asarray(pad_to_square(image)) == np.array(GOLDEN["padded_in_runs"][key], dtype=np.uint8)).all()


def test_the_pad_colour_is_clips_mean_not_the_images():
    assert tuple(int(x * 255) for x in OPENAI_CLIP_MEAN) == (122, 116, 104)
    padded = pad_to_square(Image.new("RGB", (6, 2), (255, 255, 255)))
    assert padded.getpixel((0, 0)) == (122, 116, 104)
