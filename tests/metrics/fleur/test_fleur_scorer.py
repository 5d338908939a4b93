"""FLEUR end to end on the scripted tiny Llava, saved to disk and loaded as a user's checkpoint: deterministic,
batched equal to one at a time, every option changing the output, unscorable answers named."""

import json
import math
import shutil
import warnings

import pytest

import capeval
from capeval.scoring.fleur import FleurScorer, UnscoredAnswerWarning

from fixtures.llava import CAPTIONS, REFERENCES

pytestmark = [pytest.mark.models, pytest.mark.usefixtures("llava_answer_cache")]


def fleur(model, **options):
    """The scorer without the answer cache, so that every call generates."""
    return FleurScorer(model, device="cpu", **{"cache": False, **options})


@pytest.mark.slow
def test_fleur_runs_end_to_end_through_the_module(scripted_llava, judge_images):
    module = capeval.load("fleur", model=scripted_llava, device="cpu")
    results = module.compute(predictions=CAPTIONS, images=judge_images)
    assert results["answer"] == ["0.7"] * 4 and results["unscored"] == [False] * 4
    assert all(0 < s < 1 for s in results["scores"]) and len(set(results["scores"])) == 4
    assert results["fleur"] == pytest.approx(sum(results["scores"]) / 4)


@pytest.mark.slow
def test_fleur_is_deterministic_and_batched_equals_one_at_a_time(scripted_llava, judge_images):
    scorer = fleur(scripted_llava)
    batched = scorer.score(CAPTIONS, images=judge_images, batch_size=4)["fleur"]
    again = scorer.score(CAPTIONS, images=judge_images, batch_size=4)["fleur"]
    alone = [scorer.score([c], images=[i], batch_size=1)["fleur"][0] for c, i in zip(CAPTIONS, judge_images)]
    assert batched == again
    assert batched == pytest.approx(alone, abs=1e-5)


@pytest.mark.slow
def test_the_caption_and_the_image_each_move_the_score(scripted_llava, judge_images):
    scorer = fleur(scripted_llava)
    base = scorer.score([CAPTIONS[0]], images=[judge_images[0]])["fleur"][0]
    assert scorer.score([CAPTIONS[1]], images=[judge_images[0]])["fleur"][0] != base
    assert scorer.score([CAPTIONS[0]], images=[judge_images[1]])["fleur"][0] != base


@pytest.mark.slow
def test_captions_are_read_with_whitespace_collapsed_as_released(scripted_llava, judge_images):
    scorer = fleur(scripted_llava)
    assert scorer.score(["a  dog\n runs "], images=judge_images[:1])["fleur"] == scorer.score(["a dog runs"], images=judge_images[:1])["fleur"]


@pytest.mark.slow
def test_every_option_changes_the_output(scripted_llava, other_scripted_llava, judge_images):
    def run(**options):
        scorer = fleur(options.pop("model", scripted_llava), **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnscoredAnswerWarning)
            out = scorer.score(CAPTIONS, REFERENCES, images=judge_images)
        return out["fleur"], out.details, scorer.hashcode()

    base = run()
    for options in ({"model": other_scripted_llava}, {"reference_based": True}, {"max_new_tokens": 3}, {"dtype": "bfloat16"}):
        values, _, hashcode = run(**options)
        assert hashcode != base[2], options
        assert [v for v in values if not math.isnan(v)] != base[0], options
    values, details, hashcode = run(explain=True)
    assert values == base[0] and "explanation" not in base[1]
    assert len(details["explanation"]) == 4 and all(isinstance(text, str) for text in details["explanation"])


@pytest.mark.slow
def test_an_answer_cut_before_its_end_token_is_nan_named_and_left_out(scripted_llava, judge_images):
    # Three new tokens give " 0." then nothing: the released code cuts the last four characters and finds no rating.
    with pytest.warns(UnscoredAnswerWarning, match=r"FLEUR: the judge's answer to 2 caption\(s\).*predictions\[0\] answered '0\.'"):
        out = fleur(scripted_llava, max_new_tokens=3).score(CAPTIONS[:2], images=judge_images[:2])
    assert all(math.isnan(v) for v in out["fleur"]) and out.details["unscored"] == [True, True]
    assert math.isnan(out.corpus["fleur"])


@pytest.mark.slow
def test_reffleur_needs_references(scripted_llava, judge_images):
    module = capeval.load("fleur", model=scripted_llava, device="cpu", reference_based=True)
    with pytest.raises(ValueError, match="references"):
        module.compute(predictions=CAPTIONS[:1], images=judge_images[:1])
    assert not math.isnan(module.compute(predictions=CAPTIONS[:1], references=REFERENCES[:1], images=judge_images[:1])["fleur"])


def test_fleur_needs_images(scripted_llava):
    with pytest.raises(ValueError, match="image"):
        capeval.load("fleur", model=scripted_llava, device="cpu").compute(predictions=["a dog"])


def test_a_4bit_checkpoint_is_refused_in_one_line(scripted_llava, tmp_path, judge_images):
    folder = tmp_path / "llava-4bit"
    shutil.copytree(scripted_llava, folder)
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"^\S+ holds 4-bit quantized weights \(bitsandbytes\), which the in-process LLaVA "
                                         r"backend does not load: [^\n]*$"):
        fleur(str(folder)).score(["a dog"], images=judge_images[:1])


def test_llavas_original_layout_is_refused_naming_the_conversion(scripted_llava, tmp_path, judge_images):
    folder = tmp_path / "llava-original"
    shutil.copytree(scripted_llava, folder)
    config = json.loads((folder / "config.json").read_text())
    config["architectures"] = ["LlavaLlamaForCausalLM"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="original layout .*llava-hf/llava-1.5-13b-hf"):
        fleur(str(folder)).score(["a dog"], images=judge_images[:1])


@pytest.mark.slow
def test_a_rerun_reads_every_answer_from_the_cache_without_loading_the_judge(scripted_llava, judge_images, llava_answer_cache,
                                                                            monkeypatch):
    import capeval.scoring.fleur as fleur_module
    from capeval.models import clear_cache

    first = FleurScorer(scripted_llava, device="cpu", explain=True)
    out = first.score(CAPTIONS, images=judge_images)
    assert first.provenance()["usage"] == {"generated": 8, "answers_from_cache": 0}
    assert len(list(llava_answer_cache.rglob("*.json"))) == 8

    clear_cache()
    monkeypatch.setattr(fleur_module, "load_llava", lambda *args, **kwargs: pytest.fail("the judge was loaded"))
    again = FleurScorer(scripted_llava, device="cpu", explain=True)
    rerun = again.score(CAPTIONS, images=judge_images)
    assert again.provenance()["usage"] == {"generated": 0, "answers_from_cache": 8}
    assert rerun["fleur"] == out["fleur"] and rerun.details == out.details
    assert again.hashcode() == first.hashcode()


@pytest.mark.slow
def test_the_cache_keys_the_prompt_the_image_and_the_decoding(scripted_llava, judge_images, llava_answer_cache):
    FleurScorer(scripted_llava, device="cpu").score(CAPTIONS[:1], images=judge_images[:1])
    for scorer, caption, image in ((FleurScorer(scripted_llava, device="cpu"), CAPTIONS[1], judge_images[0]),
                                   (FleurScorer(scripted_llava, device="cpu"), CAPTIONS[0], judge_images[1]),
                                   (FleurScorer(scripted_llava, device="cpu", max_new_tokens=20), CAPTIONS[0], judge_images[0]),
                                   (FleurScorer(scripted_llava, device="cpu", dtype="bfloat16"), CAPTIONS[0], judge_images[0])):
        scorer.score([caption], images=[image])
        assert scorer.provenance()["usage"] == {"generated": 1, "answers_from_cache": 0}
    scorer = FleurScorer(scripted_llava, device="cpu", cache=False)
    scorer.score(CAPTIONS[:1], images=judge_images[:1])
    assert scorer.provenance()["usage"] == {"generated": 1, "answers_from_cache": 0}
    assert len(list(llava_answer_cache.rglob("*.json"))) == 5
