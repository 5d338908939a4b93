"""CLIP-S with ViT-L/14 (``openai/clip-vit-large-patch14``): a small CLIP with its 14-pixel patch grid against the
released computation, and the real model where the HuggingFace cache holds it."""

import io

import numpy as np
import pytest
from PIL import Image

from capeval.samples import sample_image
from capeval.scoring.clip import ClipScoreScorer

from fixtures.clip import CAPTIONS, HEADS, image_zoo, random_openai_state, vocabulary_size
from fixtures.clip_released import SimpleTokenizer, clip_scores

from fixtures.clip_variants import with_weights

pytestmark = pytest.mark.models

VIT_L14 = "openai/clip-vit-large-patch14"


def test_a_14_pixel_patch_grid_scores_as_released(tmp_path, tiny_clip):
    from capeval.backbones.clip import save_random_clip

    folder = save_random_clip(tmp_path / "random", patch_size=14)
    state = random_openai_state(vocabulary_size(folder), patch=14, seed=3)
    assert state["visual.positional_embedding"].shape[0] == 16 * 16 + 1
    folder = with_weights(folder, state, tmp_path / "l14")
    zoo = image_zoo()
    images = list(zoo.values())
    captions = CAPTIONS[: len(images)]
    references = [[CAPTIONS[(i + 4) % len(CAPTIONS)]] for i in range(len(images))]
    scores = ClipScoreScorer(model_name=folder, device="cpu").score(captions, references, images=images)
    opened = [Image.open(io.BytesIO(item)) if isinstance(item, bytes) else item for item in images]
    per, ref = clip_scores(state, SimpleTokenizer(folder), opened, captions, references, heads=HEADS)
    np.testing.assert_allclose(scores["clip_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refclip_s"], ref, atol=1e-5)


def test_the_real_vit_l14_where_cached():
    from transformers import CLIPConfig

    try:
        config = CLIPConfig.from_pretrained(VIT_L14, local_files_only=True)
        ClipScoreScorer(model_name=VIT_L14, device="cpu").encoder()
    except OSError:
        pytest.skip(f"{VIT_L14} is not in the HuggingFace cache (hf download {VIT_L14})")
    assert (config.vision_config.patch_size, config.projection_dim, config.text_config.max_position_embeddings) == (14, 768, 77)
    scores = ClipScoreScorer(model_name=VIT_L14, device="cpu").score(["a man riding a horse", "a plate of food"],
                                                                      images=[str(sample_image())] * 2)
    assert 0 < scores["clip_s"][1] < scores["clip_s"][0] <= 2.5
