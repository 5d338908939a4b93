"""Polos against an independent transcription of the released forward pass (keio-smilab24/Polos,
``PolosEstimator.forward`` and ``predict``), on tiny random models saved in the released checkpoint layout."""

import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import capeval
import capeval.backbones.clip
import capeval.scoring.polos
from capeval.backbones.clip import released_pixels
from capeval.models import ModelUnavailableError
from capeval.scoring.polos import PolosScorer

from fixtures.clip_released import SimpleTokenizer, encode_image, encode_text, preprocess

#: The attention heads of save_random_clip's CLIP.
CLIP_HEADS = 4

CANDIDATES = ["a man rides a bicycle on the street", "two dogs play in the snow", "a cat", "a man rides a bicycle on the street"]
REFERENCES = [
    ["a man riding a red bike down the street", "a person cycles along a road", "a man on a bike"],
    ["a dog is running through the grass"],
    ["a cat sleeping on top of a wooden chair", "an old white bus parked beside a building"],
    ["a person cycles along a road", "two dogs play in the snow"],
]


# --------------------------------------------------------------------------- the transcription


def released_sentence_embeddings(encoder, tokenizer, texts, mix):
    """``get_sentence_embedding`` with pool='cls' and layer='mix': one batch, torchnlp padding, ScalarMixWithDropout."""
    sequences = [torch.tensor(tokenizer(text, truncation=False)["input_ids"]) for text in texts]
    lengths = torch.tensor([len(s) for s in sequences])
    tokens = torch.nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=tokenizer.pad_token_id)
    mask = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
    layers = encoder(tokens, mask.long(), output_hidden_states=True, return_dict=False)[2]
    broadcast = mask.float().unsqueeze(-1)
    n = mask.float().sum() * layers[0].shape[-1]
    weights = torch.softmax(mix["weights"], dim=0)
    pieces = []
    for k, tensor in enumerate(layers):
        masked = tensor * broadcast
        mean = masked.sum() / n
        variance = (((masked - mean) * broadcast) ** 2).sum() / n
        pieces.append(weights[k] * (tensor - mean) / torch.sqrt(variance + 1e-12))
    return (mix["gamma"] * sum(pieces))[:, 0, :]


RELEASED_SCORES = {}


def released_predict(files, batch_size, *, checkpoint="checkpoint"):
    """The transcription's scores of the fixture's items with ``files[checkpoint]``, each configuration computed
    once per session."""
    key = (files[checkpoint], batch_size)
    if key not in RELEASED_SCORES:
        RELEASED_SCORES[key] = released_predict_uncached(files, items(files), batch_size, files[checkpoint])
    return RELEASED_SCORES[key]


def released_predict_uncached(files, items, batch_size, path):
    """``predict(items, batch_size)``: consecutive batches, references transposed with zip (cut to the shortest),
    CLIP run as OpenAI's ``clip`` package runs the checkpoint's ``clip.*`` tensors (tests/fixtures/clip_released.py)."""
    from transformers import AutoModel, AutoTokenizer

    checkpoint = torch.load(path, map_location="cpu", weights_only=False)["state_dict"]
    encoder = AutoModel.from_pretrained(files["roberta"]).eval()
    tokenizer = AutoTokenizer.from_pretrained(files["roberta"])
    mix = {"weights": torch.cat([checkpoint[f"scalar_mix.scalar_parameters.{k}"] for k in range(4)]),
           "gamma": checkpoint["scalar_mix.gamma"]}
    clip = {key.removeprefix("clip."): value for key, value in checkpoint.items() if key.startswith("clip.")}
    clip_tokenizer = SimpleTokenizer(files["clip"])

    def clip_text(texts):
        return torch.from_numpy(encode_text(clip, clip_tokenizer.tokenize(["A photo depicts " + t for t in texts]), CLIP_HEADS))

    def head(x):
        for k in (1, 2, 3):
            x = torch.nn.functional.linear(x, checkpoint[f"ff.0.ff.linear_{k}.weight"], checkpoint[f"ff.0.ff.linear_{k}.bias"])
            x = torch.tanh(x) if k < 3 else torch.sigmoid(x)
        return x[:, 0]

    scores = []
    with torch.no_grad():
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            refs = list(zip(*[item["refs"] for item in batch]))
            mt = released_sentence_embeddings(encoder, tokenizer, [item["mt"] for item in batch], mix)
            mt_clip = clip_text([item["mt"] for item in batch])
            pixels = torch.stack([preprocess(Image.open(item["img"]).convert("RGB")) for item in batch])
            image = torch.from_numpy(encode_image(clip, pixels, CLIP_HEADS))
            per_ref = []
            for ref_list in refs:
                ref = released_sentence_embeddings(encoder, tokenizer, list(ref_list), mix)
                ref_clip = clip_text(list(ref_list))
                x = torch.cat((ref, mt, (mt - ref).abs(), mt * ref, image, mt_clip, (image - mt_clip).abs(), image * mt_clip,
                               (ref_clip - mt_clip).abs(), ref_clip * mt_clip), dim=1)
                per_ref.append(head(x))
            scores += torch.stack(per_ref).max(0).values.tolist()
    return scores


def items(files):
    return [{"img": image, "mt": mt, "refs": refs} for image, mt, refs in zip(files["images"], CANDIDATES, REFERENCES)]


# --------------------------------------------------------------------------- tests


def test_item_mode_is_predict_with_batch_size_one(polos_files):
    ours = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu").score(
        CANDIDATES, REFERENCES, images=polos_files["images"], batch_size=3)["polos"]
    np.testing.assert_allclose(ours, released_predict(polos_files, 1), atol=1e-5, rtol=0)
    assert abs(ours[0] - ours[3]) > 1e-4  # one caption, other references: another score


def test_clip_side_counts_and_names_the_texts_it_cuts(polos_files):
    """The CLIP text encoder cuts at 77 ids (as the released clip.tokenize(truncate=True) does); RoBERTa reads all."""
    from capeval.scoring.clip import TextTruncationWarning

    long = " ".join(["two people riding a red horse"] * 16)
    scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu")
    with pytest.warns(TextTruncationWarning, match=r"^Polos: 2 text\(s\) .* 77-token context .*: predictions\[1\], references\[0\]\[1\]$"):
        scores = scorer.score([CANDIDATES[0], long], [[REFERENCES[0][0], long], REFERENCES[1]], images=polos_files["images"][:2])
    assert scores.details == {"truncated_texts": [1, 1]}


def test_images_decoded_by_default_workers_give_the_same_scores(polos_files, monkeypatch):
    """On CUDA Polos decodes its images in CLIP-S's default DataLoader workers; two workers here (forced on CPU)
    must give the in-process scores exactly."""
    scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu")
    scorer.model.clip.clear_caches()  # each call decodes its images (other tests' calls fill the shared encoder's)
    in_process = scorer.score(CANDIDATES, REFERENCES, images=polos_files["images"], batch_size=2)["polos"]
    started = []
    monkeypatch.setattr(capeval.backbones.clip, "default_image_workers", lambda device: started.append(device) or 2)
    scorer.model.clip.clear_caches()
    with_workers = scorer.score(CANDIDATES, REFERENCES, images=polos_files["images"], batch_size=2)["polos"]
    assert started and with_workers == in_process


@pytest.mark.parametrize("batch_size, chunk", [(3, 256), (4, 256), (3, 1)])
def test_code_mode_is_predict_with_its_batches(polos_files, monkeypatch, batch_size, chunk):
    monkeypatch.setattr(capeval.scoring.polos, "CODE_CHUNK_ITEMS", chunk)  # 1: each predict() batch encoded apart
    scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu", mode="code",
                         predict_batch_size=batch_size)
    ours = scorer.score(CANDIDATES, REFERENCES, images=polos_files["images"])["polos"]
    expected = released_predict(polos_files, batch_size)
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=0)
    item = released_predict(polos_files, 1)
    assert np.abs(np.array(expected) - np.array(item)).max() > 1e-4  # the batch changes the scores


def test_code_mode_defaults_to_the_checkpoints_batch_size(polos_files):
    # save_random_polos writes batch_size 8, so all four items share one batch.
    ours = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu", mode="code").score(
        CANDIDATES, REFERENCES, images=polos_files["images"])["polos"]
    np.testing.assert_allclose(ours, released_predict(polos_files, 8), atol=1e-5, rtol=0)


def test_module_loads_a_zip_and_equals_the_scorer(polos_files):
    folder = Path(polos_files["checkpoint"]).parent
    archive = polos_files["root"] / "reprod.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for name in ("polos.ckpt", "hparams.yaml"):
            zipped.write(folder / name, f"reprod/{name}")
    module = capeval.load("polos", checkpoint=str(archive), clip_model=polos_files["clip"], device="cpu")
    result = module.compute(predictions=CANDIDATES, references=REFERENCES, images=polos_files["images"])
    expected = released_predict(polos_files, 1)
    np.testing.assert_allclose(result["scores"], expected, atol=1e-5, rtol=0)
    assert result["polos"] == pytest.approx(np.mean(expected), abs=1e-5)
    assert result["hashcode"].startswith("polos(checkpoint=reprod.zip@")


def test_every_option_changes_the_scores(polos_files, tmp_path):
    base = {"checkpoint": polos_files["checkpoint"], "clip_model": polos_files["clip"], "device": "cpu"}
    # A tokenizer trained on other text: other ids for the same RoBERTa weights.
    retokenized = tmp_path / "retokenized"
    shutil.copytree(polos_files["roberta"], retokenized)
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(["zebra quilt xylophone jumps"] * 5 + CANDIDATES, vocab_size=400, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(retokenized))
    RobertaTokenizerFast(vocab=str(retokenized / "vocab.json"), merges=str(retokenized / "merges.txt"),
                         model_max_length=512).save_pretrained(retokenized)
    variants = {
        "default": {},
        "checkpoint": {"checkpoint": polos_files["checkpoint_other"]},
        "clip_model": {"checkpoint": polos_files["checkpoint_no_clip"], "clip_model": polos_files["clip_other"]},
        "text_model": {"text_model": str(retokenized)},
        "mode": {"mode": "code"},
        "predict_batch_size": {"mode": "code", "predict_batch_size": 2},
        "dtype": {"dtype": "bfloat16"},
    }
    scores = {name: PolosScorer(**{**base, **options}).score(CANDIDATES, REFERENCES, images=polos_files["images"])["polos"]
              for name, options in variants.items()}
    for name in variants:
        if name != "default":
            reference = scores["mode"] if name == "predict_batch_size" else scores["default"]
            assert np.abs(np.array(scores[name]) - np.array(reference)).max() > 1e-4, name
    np.testing.assert_allclose(scores["checkpoint"], released_predict(polos_files, 1, checkpoint="checkpoint_other"), atol=1e-5, rtol=0)


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 2e-3), ("float16", 3e-4)])
def test_reduced_precision_is_within_its_tolerance_of_float32(polos_files, dtype, tolerance):
    def score(**options):
        scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu", **options)
        scores = scorer.score(CANDIDATES, REFERENCES, images=polos_files["images"])
        return np.array(scores["polos"]), scorer.hashcode(scores)

    (exact, exact_hash), (reduced, reduced_hash) = score(), score(dtype=dtype)
    # Measured here: 1.0e-3 in bfloat16, 1.0e-4 in float16 (the card states the figures with MiniLM weights).
    assert 1e-6 < np.abs(reduced - exact).max() < tolerance
    assert exact_hash == score(dtype="float32")[1] and "dtype" not in exact_hash and f"dtype={dtype}" in reduced_hash


def test_clip_weights_come_from_the_checkpoints_clip_tensors(polos_files):
    def score(checkpoint, clip):
        return PolosScorer(polos_files[checkpoint], clip_model=polos_files[clip], device="cpu").score(
            CANDIDATES, REFERENCES, images=polos_files["images"])["polos"]

    default = released_predict(polos_files, 1)
    other = released_predict(polos_files, 1, checkpoint="checkpoint_clip_other")
    assert np.abs(np.array(default) - np.array(other)).max() > 1e-4
    # clip_model gives the config and tokenizer only: its own weights are not the ones scored with.
    np.testing.assert_allclose(score("checkpoint", "clip_other"), default, atol=1e-5, rtol=0)
    np.testing.assert_allclose(score("checkpoint_clip_other", "clip"), other, atol=1e-5, rtol=0)
    # A checkpoint without clip.* tensors takes clip_model's weights.
    np.testing.assert_allclose(score("checkpoint_no_clip", "clip_other"), other, atol=1e-5, rtol=0)


@pytest.mark.parametrize("mode", ["item", "code"])
def test_each_distinct_text_and_image_is_encoded_once(polos_files, monkeypatch, mode):
    scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu", mode=mode)
    encoded, embedded = [], []
    original = PolosScorer.encoded_batches
    monkeypatch.setattr(PolosScorer, "encoded_batches", lambda self, texts, *a: encoded.extend(texts) or original(self, texts, *a))
    # Images are decoded in this process (no DataLoader workers on CPU by default).
    open_image = capeval.backbones.clip.open_image
    monkeypatch.setattr(capeval.backbones.clip, "open_image", lambda item, **kw: embedded.append(item) or open_image(item, **kw))
    scorer.model.clip.clear_caches()  # other tests' calls fill the shared encoder's caches
    scorer.score(CANDIDATES, REFERENCES, images=polos_files["images"])
    assert len(encoded) == len(set(encoded)) == len(set(CANDIDATES) | {r for refs in REFERENCES for r in refs})
    assert len(embedded) == 2  # four captions of two images


def test_crop_offset_rounds_half_to_even():
    # 224 × 227 after resizing: an excess of 3 rows, cropped from row round(1.5) = 2 (floor would take 1).
    rows = np.repeat(np.arange(227, dtype=np.uint8)[:, None], 224, axis=1)
    pixels = released_pixels(Image.fromarray(np.stack([rows] * 3, axis=-1)))
    assert pixels[0, 0, 0].item() == pytest.approx((2 / 255 - 0.48145466) / 0.26862954, abs=1e-6)


def test_bad_inputs_and_options_raise_clear_errors(polos_files, tmp_path):
    scorer = PolosScorer(polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu")
    with pytest.raises(ValueError, match="Polos scores captions against images: pass images"):
        scorer.score(["a cat"], [["a cat"]])
    with pytest.raises(ValueError, match="a text has .* tokens; the text encoder's position table holds 512"):
        scorer.score(["cat " * 600], [["a cat"]], images=polos_files["images"][:1])
    # The position table's last row is used: 512 tokens (510 "the" between <s> and </s>) are scored, 513 refused.
    [longest] = scorer.score([" ".join(["the"] * 510)], [["a cat"]], images=polos_files["images"][:1])["polos"]
    assert np.isfinite(longest)
    with pytest.raises(ValueError, match="^a text has 513 tokens; the text encoder's position table holds 512"):
        scorer.score([" ".join(["the"] * 511)], [["a cat"]], images=polos_files["images"][:1])
    with pytest.raises(ValueError, match="images\\[0\\]: cannot read the file"):
        scorer.score(["a cat"], [["a cat"]], images=[str(tmp_path / "missing.jpg")])
    with pytest.raises(ValueError, match="predict_batch_size applies only with mode='code'"):
        PolosScorer(polos_files["checkpoint"], predict_batch_size=4)
    with pytest.raises(ValueError, match="mode must be one of \\('item', 'code'\\), got 'batch'"):
        PolosScorer(polos_files["checkpoint"], mode="batch")
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    shutil.copy(polos_files["checkpoint"], lonely / "polos.ckpt")
    with pytest.raises(ModelUnavailableError, match="has no hparams.yaml beside it"):
        PolosScorer(str(lonely), clip_model=polos_files["clip"], device="cpu").score(["a cat"], [["a cat"]], images=polos_files["images"][:1])
    shutil.copy(polos_files["checkpoint"], lonely / "other.ckpt")
    with pytest.raises(ModelUnavailableError, match="holds 2 .ckpt files"):
        PolosScorer(str(lonely), clip_model=polos_files["clip"], device="cpu").score(["a cat"], [["a cat"]], images=polos_files["images"][:1])
    import yaml

    other_layer = tmp_path / "other_layer"
    other_layer.mkdir()
    shutil.copy(polos_files["checkpoint"], other_layer / "polos.ckpt")
    hparams = yaml.safe_load((Path(polos_files["checkpoint"]).parent / "hparams.yaml").read_text())
    (other_layer / "hparams.yaml").write_text(yaml.safe_dump({**hparams, "layer": 3}))
    with pytest.raises(ModelUnavailableError, match="describes .*'layer': 3.*; capeval reproduces the released"):
        PolosScorer(str(other_layer), clip_model=polos_files["clip"], device="cpu").score(["a cat"], [["a cat"]], images=polos_files["images"][:1])
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    with pytest.raises(ModelUnavailableError, match="is not a zip archive like the released reprod.zip"):
        PolosScorer(str(tmp_path / "broken.zip"), clip_model=polos_files["clip"], device="cpu").score(["a cat"], [["a cat"]], images=polos_files["images"][:1])
    module = capeval.load("polos", checkpoint=polos_files["checkpoint"], clip_model=polos_files["clip"], device="cpu")
    with pytest.raises(ValueError, match="got 1 predictions but 2 images"):
        module.compute(predictions=["a cat"], references=[["a cat"]], images=polos_files["images"][:2])
