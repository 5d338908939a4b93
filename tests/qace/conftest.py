"""Fixtures for the QACE tests: tiny random T5 question generator, text QA model and Visual-T5 with a word-level
T5 tokenizer (saved to disk and loaded through ``from_pretrained``, as users load real checkpoints), the tiny
BERT of the root conftest for BERTScore, the real spaCy pipeline, and the QACE sample's real BUTD features."""

from pathlib import Path

import pytest

from capeval.backbones.visual_t5 import save_random_t5

ASSETS = Path(__file__).resolve().parents[1] / "assets"

CAPTIONS = [
    "Two men are riding horses on the ground",
    "a man riding a red bike down the street",
    "A dog is running through the grass in New York",
]
REFERENCES = [
    ["two people ride horses in a dirt arena", "riders on horseback in a field"],
    ["a man rides a bicycle on the street"],
    ["a dog runs on the grass", "a brown dog playing outside", "a dog in a park"],
]
#: Words the tiny T5 tokenizer knows as whole pieces (others fall back to characters).
T5_WORDS = sorted({w.strip(".,").lower() for text in [*CAPTIONS, *(r for refs in REFERENCES for r in refs)] for w in text.split()}
                  | {"answer", "context", "question", "visual", "what", "where", "how", "many", "who", "is", "are", "do"})


def tiny_t5(folder: Path, *, seed: int, visual: bool = False) -> str:
    # A wide initialisation makes the outputs depend on the input (the default one repeats one token everywhere).
    return save_random_t5(folder, T5_WORDS, visual=visual, seed=seed, initializer_factor=5.0)


@pytest.fixture(scope="session")
def tiny_qg(tmp_path_factory) -> str:
    return tiny_t5(tmp_path_factory.mktemp("tiny-qg"), seed=1)


@pytest.fixture(scope="session")
def tiny_qa(tmp_path_factory) -> str:
    return tiny_t5(tmp_path_factory.mktemp("tiny-qa"), seed=2)


@pytest.fixture(scope="session")
def tiny_visual_t5(tmp_path_factory) -> str:
    return tiny_t5(tmp_path_factory.mktemp("tiny-visual-t5"), seed=3, visual=True)


@pytest.fixture(scope="session")
def unsure_qa(tmp_path_factory) -> str:
    """A tiny QA T5 with T5's own initialisation: its first-step probability of token 73 is about 1/1100, where the
    wide initialisation of the other tiny T5s rounds it to 0 in float32 (answerability exactly 1, which would let any
    answerability arithmetic pass)."""
    return save_random_t5(tmp_path_factory.mktemp("unsure-qa"), T5_WORDS, seed=2)


@pytest.fixture(scope="session")
def unsure_visual_t5(tmp_path_factory) -> str:
    """The Visual-T5 counterpart of :func:`unsure_qa`."""
    return save_random_t5(tmp_path_factory.mktemp("unsure-visual-t5"), T5_WORDS, visual=True, seed=3)


@pytest.fixture(scope="session")
def qace_options(tiny_qg, tiny_qa, tiny_visual_t5, tiny_bert_path) -> dict:
    """Constructor options of a QaceScorer with every model replaced by a tiny random one."""
    return {"qg_model": tiny_qg, "qa_model": tiny_qa, "visual_t5": tiny_visual_t5, "visual_t5_tokenizer": tiny_visual_t5,
            "bertscore_model": tiny_bert_path, "device": "cpu"}


@pytest.fixture(scope="session")
def sample_features() -> Path:
    return ASSETS / "qace_butd_sample.npz"
