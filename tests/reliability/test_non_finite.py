"""NaN in, error out: a checkpoint with one NaN weight, or region features that overflow the model, make every
model scorer raise NonFiniteError naming the caption and the model, never a clamped or NaN score."""

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from capeval.finite import NonFiniteError
from capeval.scoring.bert_tbr import BertTbrScorer
from capeval.scoring.qace import QaceScorer
from capeval.scoring.smurf import SmurfScorer
from capeval.scoring.umic import UmicScorer
from capeval.scoring.vilbertscore import VilbertScoreScorer
from capeval.vision.regions import RegionFeatures


CAPTIONS = ["a dog runs on the grass", "a man rides a bicycle"]
REFERENCES = [["a dog running on grass", "the dog runs"], ["a man on a bike"]]


def poison(state: dict, key_part: str) -> dict:
    """``state`` with one element of its first tensor whose name contains ``key_part`` set to NaN."""
    key = next(key for key in state if key_part in key and state[key].is_floating_point())
    state[key] = state[key].clone()
    state[key].view(-1)[0] = float("nan")
    return state


def nan_folder(source: str, target: Path, key_part: str) -> str:
    """A copy of a HuggingFace checkpoint folder with one NaN weight."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(source, target)
    weights = target / "model.safetensors"
    save_file(poison(load_file(weights), key_part), weights, metadata={"format": "pt"})
    return str(target)


def nan_file(source: str, target: Path, key_part: str) -> str:
    """A copy of a ``torch.save``'d state dict with one NaN weight."""
    torch.save(poison(torch.load(source, weights_only=True), key_part), target)
    return str(target)


def test_bert_tbr_refuses_a_nan_checkpoint(tiny_bert_path, tmp_path):
    model = nan_folder(tiny_bert_path, tmp_path / "nan-bert", "embeddings.LayerNorm.weight")
    with pytest.raises(NonFiniteError, match=f"^the hidden states of 'a dog runs on the grass' from {model} hold NaN"):
        BertTbrScorer(model_name=model, layer=2, beta=0.4, device="cpu").score(CAPTIONS, REFERENCES)


@pytest.mark.parametrize("component", ["spurts", "mima"])
def test_smurf_refuses_a_nan_checkpoint(tiny_roberta_path, tiny_distilbert_path, tmp_path, component):
    source = tiny_roberta_path if component == "spurts" else tiny_distilbert_path
    model = nan_folder(source, tmp_path / "nan", "LayerNorm.weight")
    scorer = SmurfScorer([component], **{f"{component}_model": model, "device": "cpu"})
    with pytest.raises(NonFiniteError, match=f"^the attentions of '.*' from {model} hold NaN"):
        scorer.score(CAPTIONS, REFERENCES)


def test_umic_refuses_a_nan_checkpoint(tiny_umic, sample_features, tmp_path):
    checkpoint = nan_file(tiny_umic["checkpoint"], tmp_path / "nan-umic.pt", "LayerNorm.weight")
    scorer = UmicScorer(**{**tiny_umic, "checkpoint": checkpoint})
    with pytest.raises(NonFiniteError, match=f"^the UMIC logit of 'a dog runs on the grass' from {checkpoint} hold NaN"):
        scorer.score(CAPTIONS, region_features=[str(sample_features)] * 2)


@pytest.mark.parametrize("model", ["qg_model", "qa_model", "bertscore_model"])
def test_qace_refuses_a_nan_checkpoint(qace_options, tmp_path, model):
    poisoned = nan_folder(qace_options[model], tmp_path / "nan", "layer_norm.weight" if model != "bertscore_model" else "LayerNorm.weight")
    scorer = QaceScorer("ref", **{**qace_options, model: poisoned})
    with pytest.raises(NonFiniteError, match=f"from {poisoned} hold NaN"):
        scorer.score(CAPTIONS, REFERENCES)


def test_qace_img_refuses_a_nan_visual_t5(qace_options, tmp_path):
    poisoned = nan_folder(qace_options["visual_t5"], tmp_path / "nan-visual-t5", "img_emb.weight")
    scorer = QaceScorer("img", **{**qace_options, "visual_t5": poisoned})
    rng = np.random.default_rng(0)
    regions = RegionFeatures.from_butd(rng.random((36, 2048)).astype(np.float32), np.tile(np.float32([0, 0, 1, 1, 1, 1]), (36, 1)))
    with pytest.raises(NonFiniteError, match=f"^the first-step answer scores of '.*' from {poisoned} hold NaN"):
        scorer.score(CAPTIONS, region_features=[regions, regions])


def test_vilbertscore_refuses_a_nan_checkpoint(tiny_checkpoints, tiny_vilbert_config_path, vilbert_tokenizer_dir,
                                                random_vilbert_features, tmp_path):
    checkpoint = nan_file(tiny_checkpoints["multi_task"], tmp_path / "nan-vilbert.bin", "LayerNorm.weight")
    scorer = VilbertScoreScorer(checkpoint, config=tiny_vilbert_config_path, tokenizer=vilbert_tokenizer_dir, device="cpu")
    with pytest.raises(NonFiniteError, match=f"^the ViLBERT states of '.*' from {checkpoint} hold NaN"):
        scorer.score(CAPTIONS, REFERENCES, region_features=[random_vilbert_features] * 2)


def test_vilbertscore_refuses_fp32_features_that_overflow_the_model(tiny_vilbert, random_vilbert_features):
    huge = {**random_vilbert_features, "features": np.full((100, 2048), 1e20, np.float32)}
    with pytest.raises(NonFiniteError, match="^the ViLBERT states of '.*' from .* hold NaN"):
        tiny_vilbert().score(CAPTIONS, REFERENCES, region_features=[huge] * 2)


def test_fp16_region_mean_is_taken_wide_enough_not_to_overflow(tiny_vilbert, random_vilbert_features):
    """100 boxes of 60,000 (valid fp16): the released fp16 sum is infinite; the mean is 60,000 and scores."""
    large = {**random_vilbert_features, "features": np.full((100, 2048), 60000, np.float16)}
    features, _ = RegionFeatures.from_pixel_boxes(large["features"], large["bbox"], 640, 480).vilbert_inputs(mean_in_stored_dtype=True)
    assert features[0, :3].tolist() == [60000.0] * 3
    scores = tiny_vilbert().score(CAPTIONS, REFERENCES, region_features=[large] * 2)
    assert all(np.isfinite(scores[name]).all() for name in ("precision", "recall", "f1"))


@pytest.mark.models
def test_clip_score_refuses_a_nan_checkpoint(tmp_path):
    from PIL import Image

    from capeval.backbones.clip import save_random_clip
    from capeval.scoring.clip import ClipScoreScorer

    model = nan_folder(save_random_clip(tmp_path / "clip"), tmp_path / "nan-clip", "text_projection.weight")
    image = Image.new("RGB", (64, 48), (200, 40, 90))
    with pytest.raises(NonFiniteError, match=f"^the CLIP features of 'a dog runs on the grass' from {model} hold NaN"):
        ClipScoreScorer(model_name=model, device="cpu").score(CAPTIONS, REFERENCES, images=[image, image])


def test_polos_refuses_a_nan_head(polos_files, tmp_path):
    from capeval.scoring.polos import PolosScorer

    checkpoint = shutil.copytree(Path(polos_files["checkpoint"]).parent, tmp_path / "nan-polos") / Path(polos_files["checkpoint"]).name
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    key = next(key for key in state["state_dict"] if key.startswith("ff.") and key.endswith("weight"))
    state["state_dict"][key].view(-1)[0] = float("nan")
    torch.save(state, checkpoint)
    scorer = PolosScorer(str(checkpoint), clip_model=polos_files["clip"], device="cpu")
    with pytest.raises(NonFiniteError, match=f"^the Polos head outputs of '.*' from {checkpoint} hold NaN"):
        scorer.score(CAPTIONS, REFERENCES, images=polos_files["images"][:2])


def test_the_text_encoder_checks_each_sentences_own_positions(tiny_bert_path):
    """Non-finite values in padding pass; one in a sentence's own positions names that sentence (not the batch's first)."""
    from capeval.text.encoder import TextEncoder

    encoder = TextEncoder(tiny_bert_path)
    id_lists, labels = [[1, 2], [1, 2, 3, 4], [1, 2, 3]], ["short", "long", "middle"]
    hidden, attentions = torch.zeros(3, 4, 5), torch.zeros(3, 2, 2, 4, 4)
    hidden[0, 2:], hidden[2, 3], attentions[2, 1, 0, 3, :], attentions[0, 0, 1, :, 2] = (float("nan"),) * 4
    encoder._require_finite([hidden, attentions], [0, 1, 2], id_lists, labels)  # every NaN is padding
    for output, what in ((hidden, "hidden states"), (attentions, "attentions")):
        spoiled = output.clone()
        spoiled[(2, 2) if what == "hidden states" else (2, 1, 1, 2, 0)] = float("inf")
        with pytest.raises(NonFiniteError, match=f"the {what} of 'middle' from"):
            encoder._require_finite([spoiled if what == "hidden states" else hidden,
                                     spoiled if what == "attentions" else attentions], [0, 1, 2], id_lists, labels)
    # Without labels the sentence is decoded from its ids, special tokens left out.
    ids = encoder.tokenize(["a dog runs"])
    with pytest.raises(NonFiniteError, match="^the hidden states of 'a dog runs' from"):
        encoder._require_finite([torch.full((1, len(ids[0]), 5), float("nan")), None], [0], ids, None)


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
@pytest.mark.parametrize("kind", ["tensor", "array", "list of floats", "list of tensors"])
def test_infinities_are_refused_as_nan_is(value, kind):
    from capeval.finite import finite_rows, require_finite

    rows = [[1.0, 2.0], [3.0, value], [5.0, 6.0]]
    values = {"tensor": torch.tensor(rows), "array": np.array(rows), "list of floats": [1.0, value, 2.0],
              "list of tensors": [torch.tensor(row) for row in rows]}[kind]
    assert finite_rows(values) == [True, False, True]
    with pytest.raises(NonFiniteError, match="^the logits of 'second' from tiny hold NaN or infinite values"):
        require_finite(values, items=["first", "second", "third"], what="logits", model="tiny")
