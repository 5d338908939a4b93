"""Long text in the CLIP family: the text context comes from the model's config (77 for OpenAI's CLIPs, 248 for
LongCLIP, in transformers' layout or as LongCLIP's released checkpoint through ``checkpoint=``), and every caption or
reference cut to it is counted per caption in the details and named once in a warning."""

import io
import warnings

import numpy as np
import pytest
from PIL import Image

import capeval
from capeval.backbones.clip import load_clip_encoder
from capeval.scoring.clip import ClipScoreScorer, PacScoreScorer, TextTruncationWarning

from fixtures.clip import HEADS, image_zoo
from fixtures.clip_released import SimpleTokenizer, clip_scores

from fixtures.clip_variants import LONG_CONTEXT

pytestmark = pytest.mark.models

#: About 184 ids with the prefix: past OpenAI CLIP's 77, within LongCLIP's 248.
LONG = " ".join(["two people riding a red horse"] * 30)
#: About 305 ids: past LongCLIP's 248 too.
LONGER = " ".join(["a dog runs on the grass"] * 50)


def opened(images):
    return [Image.open(io.BytesIO(item)) if isinstance(item, bytes) else item for item in images]


@pytest.fixture(scope="module")
def images():
    zoo = image_zoo()
    return [zoo["RGB"], zoo["CMYK"], zoo["png-bytes"]]


def score_quietly(scorer, *args, **kwargs):
    """``scorer.score`` failing on any truncation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TextTruncationWarning)
        return scorer.score(*args, **kwargs)


def test_longclip_in_transformers_layout_reads_long_captions_whole(long_clip, long_state, images):
    captions, references = [LONG, "a dog", "a red car"], [[LONG + " and a cat"], ["a dog on the grass"], ["a car", LONG]]
    scorer = ClipScoreScorer(model_name=long_clip, device="cpu")
    assert scorer.encoder().context_length == LONG_CONTEXT
    scores = score_quietly(scorer, captions, references, images=images)
    assert scores.details == {"truncated_texts": [0, 0, 0]}
    per, ref = clip_scores(long_state, SimpleTokenizer(long_clip), opened(images), captions, references, heads=HEADS,
                           context_length=LONG_CONTEXT)
    np.testing.assert_allclose(scores["clip_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refclip_s"], ref, atol=1e-5)
    assert len(SimpleTokenizer(long_clip).encode("A photo depicts " + LONG)) > 100  # far past 77: the tail counts
    whole, first_60_words = scorer.encoder().text_features(["A photo depicts " + LONG, "A photo depicts " + " ".join(LONG.split()[:60])],
                                                           mode="code", batch_size=2)
    assert np.abs(whole - first_60_words).max() > 1e-3


def test_longclips_released_checkpoint_loads_with_checkpoint(tiny_clip, longclip_checkpoint, long_clip, long_state, images):
    """longclip-B.pt's layout: a bare OpenAI-layout state dict with 248 positions in two tables, on a config of 77."""
    scorer = ClipScoreScorer(model_name=tiny_clip, checkpoint=longclip_checkpoint, device="cpu")
    assert load_clip_encoder(tiny_clip, device="cpu").context_length == 77
    assert scorer.encoder().context_length == LONG_CONTEXT
    captions = [LONG, "a cat sits on the sofa", "two people in the street"]
    scores = score_quietly(scorer, captions, images=images)
    np.testing.assert_allclose(scores["clip_s"], ClipScoreScorer(model_name=long_clip, device="cpu").score(captions, images=images)["clip_s"],
                               atol=1e-6)
    per, _ = clip_scores(long_state, SimpleTokenizer(tiny_clip), opened(images), captions, heads=HEADS, context_length=LONG_CONTEXT)
    np.testing.assert_allclose(scores["clip_s"], per, atol=1e-5)
    assert scorer.options()["checkpoint"].startswith("longclip-tiny.pt@")


def test_text_past_the_context_is_cut_counted_per_caption_and_named_once(long_clip, long_state, images):
    captions = [LONGER, "a dog", LONG]
    references = [["a cat", LONGER], [LONGER + " twice"], ["a dog"]]
    scorer = ClipScoreScorer(model_name=long_clip, device="cpu")
    with pytest.warns(TextTruncationWarning) as caught:
        scores = scorer.score(captions, references, images=images)
    assert len(caught) == 1 and caught[0].filename == __file__  # attributed to the scorer's caller
    assert str(caught[0].message) == (
        "CLIP-S / RefCLIP-S: 3 text(s) longer than the CLIP text encoder's 248-token context were cut to it, as the released "
        "code cuts them ('truncated_texts' in the details counts them per caption; LongCLIP's 248 positions hold longer "
        "text): predictions[0], references[0][1], references[1][0]")
    assert scores.details["truncated_texts"] == [2, 1, 0]
    per, ref = clip_scores(long_state, SimpleTokenizer(long_clip), opened(images), captions, references, heads=HEADS,
                           context_length=LONG_CONTEXT)
    np.testing.assert_allclose(scores["clip_s"], per, atol=1e-5)
    np.testing.assert_allclose(scores["refclip_s"], ref, atol=1e-5)
    # A second call finds the texts remembered and still counts and names them.
    with pytest.warns(TextTruncationWarning, match=r": predictions\[1\]$"):
        again = scorer.score(["a red car", LONGER], images=images[:2])
    assert again.details["truncated_texts"] == [0, 1]


def test_openai_clip_cuts_at_77_and_every_surface_reports_it(spread_clip, images):
    captions, references = [LONG, "a dog runs on the grass"], [["a dog"], [LONG, "a dog on the grass"]]
    clip_score = capeval.load("clip_score", model_name=spread_clip, device="cpu")
    with pytest.warns(TextTruncationWarning, match=r"77-token context .*: predictions\[0\], references\[1\]\[0\]$"):
        result = clip_score.compute(predictions=captions, references=references, images=images[:2])
    assert result["truncated_texts"] == [1, 1]
    with pytest.warns(TextTruncationWarning, match=r"77-token context"):
        evaluated = capeval.evaluate(captions, references, images=images[:2], metrics=[f"clip_score:model_name={spread_clip}"])
    assert [scores.details["truncated_texts"] for scores in evaluated.scores.values()] == [[1, 1]]


def test_hf_mode_cuts_as_the_tokenizer_truncates(spread_clip):
    encoder = load_clip_encoder(spread_clip, mode="hf", device="cpu")
    texts = ["A photo depicts " + LONG, "A photo depicts a dog", "A photo depicts " + " ".join(LONG.split()[:72])]
    ids, cut = encoder.token_ids(texts, "hf")
    assert ids == encoder.tokenizer(texts, truncation=True, max_length=77)["input_ids"]
    assert cut == [True, False, False] and [len(row) for row in ids] == [77, 7, 77]


def test_pac_s_counts_what_it_cuts(pac_checkpoint, tiny_clip, images):
    scorer = PacScoreScorer(checkpoint=pac_checkpoint, model_name=tiny_clip, device="cpu")
    with pytest.warns(TextTruncationWarning, match=r"^PAC-S / RefPAC-S: 1 text\(s\) .*: references\[0\]\[0\]$"):
        scores = scorer.score(["a dog"], [[LONG]], images=images[:1])
    assert scores.details["truncated_texts"] == [1]


def test_truncation_of_texts_never_encoded_is_found_by_tokenizing(long_clip):
    encoder = load_clip_encoder(long_clip, device="cpu")
    encoder.clear_caches()
    assert encoder.truncated(["A photo depicts " + LONGER, "A photo depicts a dog", "A photo depicts " + LONGER], mode="code") == [True, False, True]
    assert encoder.truncated(["A photo depicts " + LONG], mode="hf") == [False]


def test_a_checkpoint_without_text_positions_names_them(tmp_path, tiny_clip, long_state):
    import torch

    from capeval.models import ModelUnavailableError

    torch.save({key: value for key, value in long_state.items() if not key.startswith("positional_embedding")}, tmp_path / "x.pt")
    with pytest.raises(ModelUnavailableError, match=r"missing: \['text_model.embeddings.position_embedding.weight'\]"):
        ClipScoreScorer(model_name=tiny_clip, checkpoint=str(tmp_path / "x.pt"), device="cpu").encoder()
