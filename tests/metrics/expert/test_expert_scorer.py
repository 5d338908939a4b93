"""EXPERT end to end on the scripted tiny Llava with a LoRA in LLaVA's released layout: the merge under transformers'
names, the llava_v0 conversation, the explanation turn, every option changing the output."""

import math
import warnings

import pytest
import torch

import capeval
from capeval.backbones.llava import lora_target, merge_llava_lora
from capeval.scoring.expert import ExpertScorer
from capeval.scoring.fleur import FleurScorer, UnscoredAnswerWarning

from fixtures.llava import CAPTIONS, save_llava_lora

pytestmark = [pytest.mark.models, pytest.mark.usefixtures("llava_answer_cache")]


def expert(model, **options):
    """The scorer without the answer cache, so that every call generates."""
    return ExpertScorer(model, device="cpu", **{"cache": False, **options})


def test_the_lora_merges_into_transformers_names_as_llavas_loader_merges_it(scripted_llava, llava_lora):
    from transformers import LlavaForConditionalGeneration

    base = LlavaForConditionalGeneration.from_pretrained(scripted_llava)
    merged = LlavaForConditionalGeneration.from_pretrained(scripted_llava)
    merge_llava_lora(merged, llava_lora)
    adapter = torch.load(f"{llava_lora}/adapter_model.bin")
    trainables = torch.load(f"{llava_lora}/non_lora_trainables.bin")
    q = "model.language_model.layers.0.self_attn.q_proj.weight"
    down = adapter["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"]
    up = adapter["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]
    expected = base.state_dict()[q] + (4 / 2) * up @ down
    assert torch.allclose(merged.state_dict()[q], expected, atol=1e-6)
    assert torch.equal(merged.state_dict()["model.multi_modal_projector.linear_1.weight"],
                       trainables["base_model.model.model.mm_projector.0.weight"])
    assert torch.equal(merged.state_dict()["model.multi_modal_projector.linear_2.bias"],
                       trainables["base_model.model.model.mm_projector.2.bias"])
    untouched = "model.language_model.layers.0.self_attn.k_proj.weight"
    assert torch.equal(merged.state_dict()[untouched], base.state_dict()[untouched])


def test_a_lora_module_the_model_lacks_is_named(scripted_llava, tmp_path):
    from transformers import LlavaForConditionalGeneration

    folder = save_llava_lora(tmp_path / "bad", scripted_llava, extra_key="model.layers.7.self_attn.q_proj")
    with pytest.raises(ValueError, match=r"model\.layers\.7\.self_attn\.q_proj maps to model\.language_model\.layers\.7"):
        merge_llava_lora(LlavaForConditionalGeneration.from_pretrained(scripted_llava), folder)


def test_lora_names_map_to_transformers_llava():
    assert lora_target("model.embed_tokens") == "model.language_model.embed_tokens"
    assert lora_target("model.norm") == "model.language_model.norm"
    assert lora_target("model.mm_projector.0") == "model.multi_modal_projector.linear_1"


@pytest.mark.slow
def test_expert_runs_end_to_end_with_its_lora(scripted_llava, llava_lora, judge_images):
    results = capeval.load("expert", model=scripted_llava, adapter=llava_lora, device="cpu").compute(
        predictions=CAPTIONS, images=judge_images)
    assert len(results["scores"]) == 4 and results["unscored"] == [False] * 4
    assert all(0 <= s <= 1 for s in results["scores"])


@pytest.mark.slow
def test_expert_batched_equals_one_at_a_time_and_differs_from_fleur(scripted_llava, judge_images):
    scorer = expert(scripted_llava, adapter=None)
    batched = scorer.score(CAPTIONS, images=judge_images, batch_size=4)["expert"]
    alone = [scorer.score([c], images=[i], batch_size=1)["expert"][0] for c, i in zip(CAPTIONS, judge_images)]
    assert batched == pytest.approx(alone, abs=1e-5)
    # Another conversation, prompt and digit step: not FLEUR's numbers on the same judge.
    assert batched != pytest.approx(FleurScorer(scripted_llava, device="cpu", cache=False).score(CAPTIONS, images=judge_images)["fleur"], abs=1e-3)


@pytest.mark.slow
def test_every_option_changes_the_output(scripted_llava, other_scripted_llava, llava_lora, judge_images):
    def run(**options):
        scorer = expert(options.pop("model", scripted_llava), **{"adapter": None, **options})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnscoredAnswerWarning)
            out = scorer.score(CAPTIONS, images=judge_images)
        return out["expert"], out.details, scorer.hashcode()

    base = run()
    for options in ({"model": other_scripted_llava}, {"adapter": llava_lora}, {"max_new_tokens": 3}, {"dtype": "bfloat16"}):
        values, _, hashcode = run(**options)
        assert hashcode != base[2], options
        assert [v for v in values if not math.isnan(v)] != base[0], options
    values, details, _ = run(explain=True)
    assert values == base[0] and "explanation" not in base[1]
    # The scripted judge does not answer in the Fluency/Relevance/Descriptiveness format: the released parse gives None.
    assert details["explanation"] == [None] * 4
