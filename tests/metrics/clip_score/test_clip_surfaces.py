"""CLIP-S and RefCLIP-S through the surfaces other than the module: capeval.evaluate, the command line (images by
each row's file), the Trainer hook (images by eval-set index)."""

import json

import numpy as np
import pytest
from PIL import Image

import capeval
from capeval.integrations.trainer import CaptionEvaluator
from capeval.scoring.clip import ClipScoreScorer
from fixtures.commands import capeval as run_capeval

CAPTIONS = ["a red square", "a grey field"]
REFERENCES = [["a red box"], ["grey grass", "a field"]]


def images_in(folder):
    folder.mkdir(exist_ok=True)
    Image.new("RGB", (64, 48), "red").save(folder / "red.png")
    Image.new("L", (30, 90), 200).save(folder / "grey.png")
    return [str(folder / "red.png"), str(folder / "grey.png")]


@pytest.mark.slow
def test_evaluate_the_command_line_and_the_trainer_hook_equal_the_scorer(tiny_clip, tmp_path):
    images = images_in(tmp_path / "images")
    direct = ClipScoreScorer(model_name=tiny_clip, device="cpu").score(CAPTIONS, REFERENCES, images=images)

    result = capeval.evaluate(CAPTIONS, REFERENCES, images=images, metrics=[("clip_score", {"model_name": tiny_clip, "device": "cpu"})])
    np.testing.assert_allclose(result.columns["clip_s"], direct["clip_s"], atol=1e-6)
    np.testing.assert_allclose(result.columns["refclip_s"], direct["refclip_s"], atol=1e-6)

    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"candidate": c, "references": r, "image": name})
                              for c, r, name in zip(CAPTIONS, REFERENCES, ["red.png", "grey.png"])))
    target = tmp_path / "scores.json"
    code, out, err = run_capeval("score", "--input", rows, "--metric", f"clip_score:model_name={tiny_clip},device=cpu",
                                 "--images", tmp_path / "images", "--output", target)
    assert code == 0, err
    written = json.loads(target.read_text())
    np.testing.assert_allclose(written["scores"]["refclip_s"], direct["refclip_s"], atol=1e-6)
    assert written["system"]["clip_s"] == result.corpus["clip_s"]

    evaluator = CaptionEvaluator([("clip_score", {"model_name": tiny_clip, "device": "cpu"})], references=REFERENCES, images=images)
    second = evaluator.evaluate_texts([CAPTIONS[1]], indices=[1])  # the second eval example's image and references
    np.testing.assert_allclose(second["refclip_s"], direct["refclip_s"][1], atol=1e-6)
