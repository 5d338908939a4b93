"""Fixtures of the PAC-S / PAC-S++ tests: small CLIPs with ViT-B/32's and ViT-L/14's patch grids, their PAC-S++
checkpoints (rank-4 LoRA factors) saved both ways the released model saves them, and what aimagelab/pacscore's
released loading path computed from those checkpoints (tests/assets/pac_plus_plus_goldens.json, PROVENANCE.md)."""

from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from capeval.backbones.clip import save_random_clip, with_random_lora
from fixtures.clip import random_openai_state, vocabulary_size
from fixtures.clip_variants import GOLDENS, SAVINGS, SIZES


@dataclass
class LoraClip:
    """A small CLIP folder (config and tokenizer), the base weights and its PAC-S++ checkpoints by saving."""

    name: str
    folder: str
    base: dict
    states: dict
    checkpoints: dict
    golden: dict


def small_clip_folder(root: Path, patch: int) -> str:
    return save_random_clip(root, hidden_size=SIZES["width"], vision_width=SIZES["vision_width"], heads=1, patch_size=patch,
                            projection_dim=SIZES["embed"])


@pytest.fixture(scope="session", params=list(GOLDENS["configs"]))
def lora_clip(request, tmp_path_factory) -> LoraClip:
    golden = GOLDENS["configs"][request.param]
    root = tmp_path_factory.mktemp(request.param)
    folder = small_clip_folder(root / "clip", golden["patch"])
    base = random_openai_state(vocabulary_size(folder), width=SIZES["width"], vision_width=SIZES["vision_width"],
                               layers=SIZES["layers"], embed=SIZES["embed"], patch=golden["patch"], seed=golden["seed"])
    states, checkpoints = {}, {}
    for saving in SAVINGS:
        states[saving] = with_random_lora(base, mlp_merged=saving == "eval", seed=golden["lora_seed"])
        checkpoints[saving] = str(root / f"PAC++_{saving}.pth")
        torch.save({"state_dict": states[saving]}, checkpoints[saving])
    return LoraClip(request.param, folder, base, states, checkpoints, golden)
