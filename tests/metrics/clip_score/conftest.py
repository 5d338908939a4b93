"""Fixtures of the CLIP-S tests beyond ViT-B/32's 77 ids: small CLIPs with LongCLIP's 248 text positions (in
transformers' layout and in LongCLIP's released checkpoint layout) and with ViT-L/14's patch grid."""


import pytest
import torch

from capeval.backbones.clip import save_random_clip
from fixtures.clip import random_openai_state, vocabulary_size
from fixtures.clip_variants import LONG_CONTEXT, with_weights

@pytest.fixture(scope="session")
def long_state(tiny_clip) -> dict[str, torch.Tensor]:
    """Random OpenAI-layout weights with 248 text positions and LongCLIP's second position table."""
    state = random_openai_state(vocabulary_size(tiny_clip), positions=LONG_CONTEXT, seed=5)
    state["positional_embedding_res"] = torch.randn(LONG_CONTEXT, state["positional_embedding"].shape[1],
                                                    generator=torch.Generator().manual_seed(6)) * 0.1
    return state


@pytest.fixture(scope="session")
def longclip_checkpoint(tmp_path_factory, long_state) -> str:
    """``long_state`` saved as LongCLIP releases longclip-B.pt: the bare state dict."""
    path = tmp_path_factory.mktemp("longclip") / "longclip-tiny.pt"
    torch.save(long_state, path)
    return str(path)


@pytest.fixture(scope="session")
def long_clip(tmp_path_factory, long_state) -> str:
    """The same LongCLIP in transformers' layout: a CLIP folder with 248 positions."""
    root = tmp_path_factory.mktemp("long-clip")
    folder = save_random_clip(root / "random", context_length=LONG_CONTEXT)
    return with_weights(folder, long_state, root / "weights")
