"""PAC-S's ViT-L/14 checkpoint (openClip_ViT-L-14.pth) sits on OpenCLIP's ViT-L/14 (laion2b_s32b_b82k): GELU towers,
and images normalised with open_clip's mean = std = 0.5, as pacscore's compute_metrics.py loads it. A small CLIP with
GELU stands in for laion/CLIP-ViT-L-14-laion2B-s32B-b82K."""

import io

import numpy as np
import pytest
import torch
from PIL import Image

from capeval.backbones.clip import save_random_clip
from capeval.scoring.clip import OPEN_CLIP_PIXELS, PacScoreScorer, is_open_clip

from fixtures.clip import CAPTIONS, HEADS, image_zoo
from fixtures.clip_released import SimpleTokenizer, clip_scores

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def open_clip_folder(tmp_path_factory):
    return save_random_clip(tmp_path_factory.mktemp("open-clip"), patch_size=14, hidden_act="gelu")


def test_pac_s_on_an_open_clip_architecture_normalises_with_half(open_clip_folder, tiny_clip, tmp_path):
    from fixtures.clip import random_openai_state, vocabulary_size

    state = random_openai_state(vocabulary_size(open_clip_folder), patch=14, seed=4)
    torch.save({"state_dict": state}, tmp_path / "openClip_ViT-L-14.pth")
    assert is_open_clip(open_clip_folder) and not is_open_clip(tiny_clip)
    images = list(image_zoo().values())
    captions = CAPTIONS[: len(images)]
    references = [[CAPTIONS[(i + 3) % len(CAPTIONS)]] for i in range(len(images))]
    scorer = PacScoreScorer(checkpoint=str(tmp_path / "openClip_ViT-L-14.pth"), model_name=open_clip_folder, device="cpu")
    assert scorer.encoder().pixel_statistics == OPEN_CLIP_PIXELS
    scores = scorer.score(captions, references, images=images)
    opened = [Image.open(io.BytesIO(item)) if isinstance(item, bytes) else item for item in images]
    per, ref = clip_scores(state, SimpleTokenizer(open_clip_folder), opened, captions, references, heads=HEADS, w=2.0,
                           gelu=True, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    np.testing.assert_allclose(scores["pac_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refpac_s"], ref, atol=1e-5)
    assert max(per) > 0.1
    with_clip_statistics, _ = clip_scores(state, SimpleTokenizer(open_clip_folder), opened, captions, heads=HEADS, w=2.0, gelu=True)
    assert np.abs(with_clip_statistics - per).max() > 1e-3  # the normalisation matters
