"""capeval's CLIP-S / RefCLIP-S and PAC-S / RefPAC-S against an independent transcription of the released code
(tests/fixtures/clip_released.py) on small random weights: token ids, pixels, features and scores."""

import io

import numpy as np
import pytest
import torch
from PIL import Image

from capeval.backbones.clip import ImagePixels, clean_text, load_clip_encoder, openai_to_transformers, released_pixels, released_token_ids, transformers_to_openai
from capeval.scoring.clip import ClipScoreScorer, PacScoreScorer

from fixtures.clip import CAPTIONS, HEADS, image_zoo
from fixtures.clip_released import SimpleTokenizer, clip_scores, encode_image, encode_text, preprocess


def as_opened(item):
    """What the released code's ``Image.open`` gives for an input."""
    return Image.open(io.BytesIO(item)) if isinstance(item, bytes) else item


@pytest.fixture(scope="module")
def released_tokenizer(tiny_clip):
    return SimpleTokenizer(tiny_clip)


@pytest.fixture(scope="module")
def hf_state(tiny_clip):
    from transformers import CLIPModel

    return transformers_to_openai(CLIPModel.from_pretrained(tiny_clip, dtype=torch.float32).state_dict())


def test_token_ids_equal_clip_tokenize(tiny_clip, released_tokenizer):
    texts = ["A photo depicts " + caption for caption in CAPTIONS]
    expected = released_tokenizer.tokenize(texts)
    encoder = load_clip_encoder(tiny_clip, device="cpu")
    ids, cut = encoder.token_ids(texts, "code")
    assert [len(row) for row in ids][7] == 77  # the long caption is cut, ending in <|endoftext|>
    assert cut == [i == 7 for i in range(len(texts))]
    assert ids == [row[: int((row != 0).sum())].tolist() for row in expected]
    assert [len(row) for row in released_token_ids(texts, encoder.tokenizer)][7] > 77  # uncut before the encoder's cut


def test_clean_text_skips_ftfy_only_where_ftfy_and_html_change_nothing():
    """Printable ASCII without "&" bypasses ftfy and HTML unescaping; on every text the result is the released one."""
    import gzip
    import html
    import json
    import string
    from importlib import resources

    import ftfy
    import regex

    def released(text: str) -> str:
        text = html.unescape(html.unescape(ftfy.fix_text(text))).strip()
        return regex.sub(r"\s+", " ", text).strip().lower()

    references = json.loads(gzip.decompress(resources.files("capeval").joinpath("resources", "flickr8k_references.json.gz").read_bytes()))
    texts = [ref for refs in references["references"] for ref in refs][:3000]
    rng = np.random.default_rng(0)
    alphabet = np.array(list(string.printable + "\x00\x1b\x85\u00a0\u2019\ufb01\u00c3\u00a9"))
    texts += ["".join(rng.choice(alphabet, size=rng.integers(0, 40))) for _ in range(3000)]
    texts += CAPTIONS + ["<b>bold</b> text;", "a `quoted' \\ back-slash", "fish &chips", "line\r\nbreak", "bell\x07"]
    assert any(t.isascii() and t.isprintable() and "&" not in t for t in texts) and any("&" in t for t in texts)
    assert [clean_text(t) for t in texts] == [released(t) for t in texts]


def test_pixels_equal_torchvision_preprocessing():
    for name, item in image_zoo().items():
        np.testing.assert_array_equal(released_pixels(as_opened(item)), preprocess(as_opened(item)).numpy(), err_msg=name)


def test_mapped_weights_give_the_openai_forward(tiny_clip, openai_state, pac_checkpoint, released_tokenizer):
    """Weights written in OpenAI's layout, loaded through the PAC-S checkpoint path, encode as OpenAI's forward does."""
    encoder = load_clip_encoder(tiny_clip, checkpoint=pac_checkpoint, device="cpu")
    texts = ["A photo depicts " + caption for caption in CAPTIONS]
    expected = encode_text(openai_state, released_tokenizer.tokenize(texts), HEADS)
    np.testing.assert_allclose(encoder.text_features(texts, mode="code", batch_size=4), expected, atol=2e-6)
    images = list(image_zoo().values())
    expected = encode_image(openai_state, torch.stack([preprocess(as_opened(item)) for item in images]), HEADS)
    np.testing.assert_allclose(encoder.image_features(images, mode="code", batch_size=4), expected, atol=2e-6)


def test_layouts_round_trip(hf_state, openai_state):
    assert set(hf_state) == set(openai_state)
    assert all(hf_state[key].shape == openai_state[key].shape for key in openai_state)
    back = transformers_to_openai(openai_to_transformers(openai_state))
    assert all(torch.equal(back[key], openai_state[key]) for key in openai_state)


@pytest.mark.parametrize("weights", ["transformers-initialised", "spread"])
def test_clip_s_and_refclip_s_equal_the_released_code(weights, request, released_tokenizer):
    """transformers' initialisation gives mostly CLIP-S = 0 (cosines below 0), the wider weights positive values."""
    if weights == "spread":
        folder, state = request.getfixturevalue("spread_clip"), request.getfixturevalue("openai_state")
    else:
        folder, state = request.getfixturevalue("tiny_clip"), request.getfixturevalue("hf_state")
    zoo = image_zoo()
    images = [*zoo.values(), zoo["RGB"], zoo["png-bytes"]]  # repeated images are encoded once
    captions = [*CAPTIONS, CAPTIONS[0], CAPTIONS[1], CAPTIONS[0]][: len(images)]
    references = [[CAPTIONS[(i + 3) % len(CAPTIONS)], CAPTIONS[(i + 5) % len(CAPTIONS)]] for i in range(len(images))]
    per, ref = clip_scores(state, released_tokenizer, [as_opened(item) for item in images], captions, references, heads=HEADS)
    scores = ClipScoreScorer(model_name=folder, device="cpu").score(captions, references, images=images, batch_size=3)
    np.testing.assert_allclose(scores["clip_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refclip_s"], ref, atol=1e-5)
    assert (per == 0).sum() == {"transformers-initialised": 9, "spread": 0}[weights]


def test_pac_s_and_refpac_s_equal_the_released_code(tiny_clip, openai_state, pac_checkpoint, released_tokenizer):
    zoo = image_zoo()
    images = list(zoo.values())
    captions = CAPTIONS[: len(images)]
    references = [[CAPTIONS[(i + 2) % len(CAPTIONS)]] for i in range(len(images))]
    per, ref = clip_scores(openai_state, released_tokenizer, [as_opened(item) for item in images], captions, references,
                           heads=HEADS, w=2.0)
    scores = PacScoreScorer(checkpoint=pac_checkpoint, model_name=tiny_clip, device="cpu").score(captions, references, images=images)
    np.testing.assert_allclose(scores["pac_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refpac_s"], ref, atol=1e-5)
    assert max(per) > 0.1


def test_hf_mode_differs_where_the_released_preprocessing_does(tiny_clip):
    """transformers' processor composites RGBA on white and its tokenizer skips ftfy and HTML unescaping."""
    code = ClipScoreScorer(model_name=tiny_clip, device="cpu")
    hf = ClipScoreScorer(model_name=tiny_clip, device="cpu", mode="hf")
    for scorer in (code, hf):  # other tests' calls encoded these images in other batches (other rounding)
        scorer.encoder().clear_caches()
    zoo = image_zoo()
    rgba = zoo["RGBA"]
    same = dict(images=[zoo["RGB"]] * 2)
    assert code.score(["a dog", "a cat"], **same)["clip_s"] == hf.score(["a dog", "a cat"], **same)["clip_s"]
    assert code.score(["a dog"], images=[rgba])["clip_s"] != hf.score(["a dog"], images=[rgba])["clip_s"]
    entities = [CAPTIONS[3]]
    assert code.score(entities, images=[zoo["RGB"]])["clip_s"] != hf.score(entities, images=[zoo["RGB"]])["clip_s"]


def test_rgb_first_converts_before_the_released_preprocessing():
    # Polos' released usage passes Image.open(path).convert("RGB") to CLIP's preprocess.
    zoo = image_zoo()
    names = ["RGBA", "P", "CMYK"]

    def pixels(rgb_first):  # what the image DataLoader's workers hand the vision tower
        items = ImagePixels([zoo[name] for name in names], names, mode="code", rgb_first=rgb_first)
        return np.stack([items[i] for i in range(len(names))])

    stored, converted = pixels(False), pixels(True)
    expected = np.stack([preprocess(zoo[name].convert("RGB")).numpy() for name in names])
    np.testing.assert_allclose(converted, expected, atol=1e-6, rtol=0)
    assert all(np.abs(stored[i] - converted[i]).max() > 1e-2 for i in range(len(names)))
