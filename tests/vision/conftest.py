"""Fixtures for the vision-language tests: the QACE sample image and its BUTD features (copied into
tests/assets, see tests/assets/PROVENANCE.md) and a tiny random UNITER with a cased WordPiece vocabulary."""

from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[1] / "assets"

CAPTION_WORDS = ["a", "two", "men", "man", "riding", "ride", "horse", "horses", "on", "the", "ground", "in", "field",
                 "dirt", "arena", "calf", "Two", "Men", "A"]


def tiny_cased_vocab() -> dict[str, int]:
    """A cased WordPiece vocabulary: specials, some caption words, single characters and their ## forms."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CAPTION_WORDS, *".,!?'-", *letters, *("##" + c for c in letters), "##s"]
    return {token: i for i, token in enumerate(dict.fromkeys(tokens))}


@pytest.fixture(scope="session")
def sample_image() -> Path:
    return ASSETS / "qace_sample.jpg"


@pytest.fixture(scope="session")
def sample_features() -> Path:
    return ASSETS / "qace_butd_sample.npz"


@pytest.fixture(scope="session")
def cased_tokenizer_dir(tmp_path_factory) -> str:
    from transformers import BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cased-tokenizer")
    # transformers 5: vocab= (vocab_file= would be ignored and every token become [UNK]).
    BertTokenizer(vocab=tiny_cased_vocab(), do_lower_case=False, model_max_length=512).save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_uniter_config():
    from capeval.backbones.uniter import uniter_config

    return uniter_config(vocab_size=len(tiny_cased_vocab()), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)


@pytest.fixture(scope="session")
def tiny_umic_checkpoint(tmp_path_factory, tiny_uniter_config) -> str:
    from capeval.backbones.uniter import save_random_checkpoint

    return save_random_checkpoint(tmp_path_factory.mktemp("tiny-umic") / "umic-tiny.pt", tiny_uniter_config, seed=0)


@pytest.fixture(scope="session")
def tiny_umic(tiny_umic_checkpoint, cased_tokenizer_dir):
    """Constructor options of a UMIC scorer or module with the tiny random model."""
    return {"checkpoint": tiny_umic_checkpoint, "tokenizer": cased_tokenizer_dir, "num_attention_heads": 4, "device": "cpu"}
