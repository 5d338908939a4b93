"""A CLIP checkpoint whose text positions cannot hold a text is refused by the layout check, naming the checkpoint
and the tensor, before transformers builds a model from it."""

import re

import pytest
import torch

from capeval.models import ModelUnavailableError


@pytest.mark.models
@pytest.mark.parametrize("shape", [(0, 32), (1, 32), (32,)])
def test_a_checkpoint_without_text_positions_is_refused_by_the_layout_check(tiny_clip, openai_state, tmp_path, shape):
    from capeval.scoring.clip import ClipScoreScorer

    checkpoint = tmp_path / f"positions-{len(shape)}.pt"
    torch.save({**openai_state, "positional_embedding": torch.zeros(shape)}, checkpoint)
    scorer = ClipScoreScorer(model_name=tiny_clip, checkpoint=str(checkpoint), device="cpu")
    with pytest.raises(ModelUnavailableError, match=re.escape(f"positional_embedding has shape {shape}: the text tower needs one row per position, at least 2")):
        scorer.encoder
