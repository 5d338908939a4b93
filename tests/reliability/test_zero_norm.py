"""Zero vectors in, error out: a checkpoint whose projection (or every weight) is zero, or whose integer weights
truncate to zero, gives vectors of norm 0; every metric that normalises embeddings (CLIP-S, PAC-S, BERTScore,
BERT-TBR, CAPTURE's phrase encoder, ViLBERTScore) raises ZeroNormError naming the caption and the checkpoint
instead of scoring the NaN that dividing by 0 gives."""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from capeval.finite import NonFiniteError, ZeroNormError, unit_rows

CAPTIONS = ["a dog runs on the grass", "a man rides a bicycle"]
REFERENCES = [["a dog running on grass", "the dog runs"], ["a man on a bike"]]
IMAGE = Image.new("RGB", (64, 48), (200, 40, 90))


def zeroed(state: dict, key_part: str = "", dtype=None) -> dict:
    """``state`` with every floating tensor whose name contains ``key_part`` set to 0 (or, with ``dtype``, cast to
    it: random weights in (-1, 1) cast to int64 are all 0)."""
    return {key: (value.to(dtype) if dtype is not None else torch.zeros_like(value))
            if key_part in key and value.is_floating_point() else value for key, value in state.items()}


def zeroed_folder(source: str, target: Path, key_part: str = "", dtype=None) -> str:
    """A copy of a transformers checkpoint folder with the matching weights zeroed (or cast to ``dtype``)."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(source, target)
    weights = target / "model.safetensors"
    save_file(zeroed(load_file(weights), key_part, dtype), weights, metadata={"format": "pt"})
    return str(target)


def test_unit_rows_refuses_zero_and_overflowing_norms_and_keeps_the_dtype():
    assert unit_rows(np.array([[3.0, 4.0]], np.float32), items=["a"], what="w", model="m").dtype == np.float32
    np.testing.assert_allclose(unit_rows(torch.tensor([[[0.0, 2.0]], [[1.0, 0.0]]]), items=["a", "b"], what="w", model="m"),
                               [[[0.0, 1.0]], [[1.0, 0.0]]])
    for values, norm in ((np.zeros((1, 3)), "0.0"), (np.full((1, 2), 3e38, np.float32), "inf"), (torch.tensor([[1e-30, 0.0]]), "0.0")):
        with pytest.raises(ZeroNormError, match=rf"^the CLIP features of 'a cat' from tiny have an L2 norm of {norm} and cannot be normalised"):
            unit_rows(values, items=lambda row: "a cat", what="CLIP features", model="tiny")
    # The first bad row is named, on any axis layout; the error is a NonFiniteError (every surface reports those).
    tokens = torch.ones(3, 4, 2)
    tokens[2, 1] = 0
    with pytest.raises(NonFiniteError, match="^the token embeddings of 'third' from m have an L2 norm of 0.0"):
        unit_rows(tokens, items=["first", "second", "third"], what="token embeddings", model="m")


@pytest.mark.models
@pytest.mark.parametrize("key_part, dtype, named", [("text_projection", None, "a dog runs on the grass"),
                                                     ("visual_projection", None, "the image of 'a dog runs on the grass'"),
                                                     ("text_projection", torch.int64, "a dog runs on the grass")])
def test_clip_score_refuses_a_zero_projection(tiny_clip, tmp_path, key_part, dtype, named):
    from capeval.scoring.clip import ClipScoreScorer

    model = zeroed_folder(tiny_clip, tmp_path / "zero-clip", key_part, dtype)
    with pytest.raises(ZeroNormError, match=f"^the CLIP features of {re.escape(repr(named))} from {re.escape(model)} have an L2 norm of 0.0"):
        ClipScoreScorer(model_name=model, device="cpu").score(CAPTIONS, REFERENCES, images=[IMAGE, IMAGE])


@pytest.mark.models
def test_pac_score_refuses_a_checkpoint_with_a_zero_projection(tiny_clip, openai_state, tmp_path):
    from capeval.scoring.clip import PacScoreScorer

    checkpoint = tmp_path / "clip_ViT-B-32.pth"
    torch.save({"state_dict": zeroed(openai_state, "text_projection")}, checkpoint)
    scorer = PacScoreScorer(checkpoint=str(checkpoint), model_name=tiny_clip, device="cpu")
    with pytest.raises(ZeroNormError, match=f"^the CLIP features of 'a dog runs on the grass' from {re.escape(str(checkpoint))} have an L2 norm of 0.0"):
        scorer.score(CAPTIONS, images=[IMAGE, IMAGE])


@pytest.mark.models
@pytest.mark.parametrize("metric", ["bertscore", "bert_tbr"])
def test_token_matching_refuses_an_all_zero_encoder(tiny_bert_path, tmp_path, metric):
    from capeval.scoring.bert_tbr import BertTbrScorer
    from capeval.scoring.bertscore import BERTScorer

    model = zeroed_folder(tiny_bert_path, tmp_path / "zero-bert")
    scorer = (BERTScorer(model_name=model, layer=2, device="cpu") if metric == "bertscore"
              else BertTbrScorer(model_name=model, layer=2, beta=0.4, device="cpu"))
    with pytest.raises(ZeroNormError, match=f"^the token embeddings of '(a dog runs on the grass|a man rides a bicycle|.*)' from {re.escape(model)} have an L2 norm of 0.0"):
        scorer.score(CAPTIONS, REFERENCES)


@pytest.mark.models
def test_capture_phrase_encoder_refuses_an_all_zero_encoder(tmp_path):
    from capeval.scoring.capture import PhraseEncoder
    from fixtures.capture import ASSETS

    model = zeroed_folder(str(ASSETS / "encoder"), tmp_path / "zero-encoder")
    with pytest.raises(ZeroNormError, match=f"^the phrase embeddings of 'dog' from {re.escape(model)} have an L2 norm of 0.0"):
        PhraseEncoder(model, device="cpu").embed(["dog", "grass"])


def test_vilbertscore_refuses_an_all_zero_checkpoint(tiny_checkpoints, tiny_vilbert_config_path, vilbert_tokenizer_dir,
                                                     random_vilbert_features, tmp_path):
    from capeval.scoring.vilbertscore import VilbertScoreScorer

    checkpoint = tmp_path / "zero-vilbert.bin"
    torch.save(zeroed(torch.load(tiny_checkpoints["multi_task"], weights_only=True)), checkpoint)
    scorer = VilbertScoreScorer(str(checkpoint), config=tiny_vilbert_config_path, tokenizer=vilbert_tokenizer_dir, device="cpu")
    with pytest.raises(ZeroNormError, match=f"^the ViLBERT states of '.*' from {re.escape(str(checkpoint))} have an L2 norm of 0.0"):
        scorer.score(CAPTIONS, REFERENCES, region_features=[random_vilbert_features] * 2)
