"""UMIC end to end against an independent re-statement of the released inference path.

The reference below does not use capeval's model code: it tokenizes word by word as
``make_txt_db.py`` does, takes the boxes, 7-d positions and compact ``[text][regions][padding]``
layout of UNITER's ``data/data.py``/``data/ce.py`` (``gather_index``), runs the BERT-era encoder
arithmetic by hand from the state dict and applies the float64 sigmoid of ``compute_metric.py``.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from capeval.scoring.umic import UmicScorer
from capeval.vision.regions import RegionFeatures, as_region_features


def umic_scores(scorer, captions, regions, **options):
    """UMIC per caption through the scorer protocol (captions first, region features by keyword)."""
    return scorer.score(captions, region_features=regions, **options)["umic"]



def randomised_layer_norms(checkpoint: str, path) -> str:
    """The tiny checkpoint with non-trivial LayerNorm scales and shifts, so their use is tested too."""
    state = torch.load(checkpoint, weights_only=True)
    generator = torch.Generator().manual_seed(5)
    for key, value in state.items():
        if "LayerNorm" in key or "layer_norm" in key:
            state[key] = value + 0.3 * torch.randn(value.shape, generator=generator)
    torch.save(state, path)
    return str(path)


def reference_token_ids(caption: str, tokenizer) -> list[int]:
    pieces = []
    for word in caption.lower().strip().split():
        pieces += tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))
    return [tokenizer.cls_token_id, *pieces, tokenizer.sep_token_id]


def reference_image(regions: RegionFeatures) -> tuple[torch.Tensor, torch.Tensor]:
    conf = np.asarray(regions.conf, dtype=np.float16)
    nbb = min(100, max(10, int((conf > 0.2).sum())))
    feat = torch.tensor(np.asarray(regions.features, dtype=np.float16)[:nbb]).float()
    bb = torch.tensor(np.asarray(regions.norm_bb, dtype=np.float16)[:nbb]).float()
    return feat, torch.cat([bb, bb[:, 4:5] * bb[:, 5:]], dim=-1)


def reference_logits(state: dict, heads: int, ids: list[list[int]], images: list[tuple[torch.Tensor, torch.Tensor]]) -> list[float]:
    def linear(x, name):
        return x @ state[f"{name}.weight"].T + state[f"{name}.bias"]

    def norm(x, name):
        return F.layer_norm(x, (x.shape[-1],), state[f"{name}.weight"], state[f"{name}.bias"], 1e-12)

    def embed(name, index):
        return state[f"uniter.embeddings.{name}.weight"][index]

    hidden = state["uniter.pooler.dense.weight"].shape[0]
    layers = len({k.split(".")[3] for k in state if k.startswith("uniter.encoder.layer.")})
    txt_lens, nbbs = [len(seq) for seq in ids], [feat.shape[0] for feat, _ in images]
    max_tl, out_size = max(txt_lens), max(t + n for t, n in zip(txt_lens, nbbs))
    input_ids = torch.zeros(len(ids), max_tl, dtype=torch.long)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = torch.tensor(seq)
    txt = norm(embed("word_embeddings", input_ids) + embed("position_embeddings", torch.arange(max_tl)) + embed("token_type_embeddings", 0),
               "uniter.embeddings.LayerNorm")
    img_feat = torch.zeros(len(ids), max(nbbs), images[0][0].shape[1])
    img_pos = torch.zeros(len(ids), max(nbbs), 7)
    for row, (feat, pos) in enumerate(images):
        img_feat[row, : feat.shape[0]], img_pos[row, : pos.shape[0]] = feat, pos
    img = norm(norm(linear(img_feat, "uniter.img_embeddings.img_linear"), "uniter.img_embeddings.img_layer_norm")
               + norm(linear(img_pos, "uniter.img_embeddings.pos_linear"), "uniter.img_embeddings.pos_layer_norm")
               + embed("token_type_embeddings", 1), "uniter.img_embeddings.LayerNorm")
    # UNITER's gather_index: each example's regions right after its own text, padding at the end.
    gather = torch.arange(out_size).repeat(len(ids), 1)
    mask = torch.zeros(len(ids), out_size)
    for row, (tl, nbb) in enumerate(zip(txt_lens, nbbs)):
        gather[row, tl : tl + nbb] = torch.arange(max_tl, max_tl + nbb)
        mask[row, : tl + nbb] = 1
    x = torch.gather(torch.cat([txt, img], dim=1), 1, gather[..., None].expand(-1, -1, hidden))
    additive = (1.0 - mask[:, None, None, :]) * -10000.0
    size = hidden // heads
    for n in range(layers):
        p = f"uniter.encoder.layer.{n}"
        q, k, v = (linear(x, f"{p}.attention.self.{w}").view(x.shape[0], -1, heads, size).transpose(1, 2) for w in ("query", "key", "value"))
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(size) + additive, dim=-1)
        context = (probs @ v).transpose(1, 2).reshape(x.shape)
        attended = norm(linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        inner = linear(attended, f"{p}.intermediate.dense")
        inner = inner * 0.5 * (1.0 + torch.erf(inner / math.sqrt(2.0)))
        x = norm(linear(inner, f"{p}.output.dense") + attended, f"{p}.output.LayerNorm")
    pooled = torch.tanh(linear(x[:, 0], "uniter.pooler.dense"))
    return linear(pooled, "rank_output")[:, 0].tolist()


def test_scores_match_the_released_inference_path(tiny_umic, tmp_path, sample_features):
    checkpoint = randomised_layer_norms(tiny_umic["checkpoint"], tmp_path / "umic-ln.pt")
    scorer = UmicScorer(**{**tiny_umic, "checkpoint": checkpoint})
    sample = as_region_features(sample_features)
    rng = np.random.default_rng(2)
    # Box counts 10 (the floor), 12, 21 and 60; fp16-stored and float32 inputs; mixed case and punctuation.
    regions = [
        RegionFeatures.from_butd(sample.features, sample.norm_bb, np.float16(np.r_[np.full(3, 0.9), np.full(33, 0.1)])),
        RegionFeatures.from_butd(rng.random((50, 2048), dtype=np.float32), rng.random((50, 6)).astype(np.float32),
                                 np.r_[np.full(12, 0.9), np.full(38, 0.1)]),
        sample.first(21),
        RegionFeatures.from_butd(np.float16(rng.random((100, 2048))), np.float16(rng.random((100, 6))), np.float16(np.linspace(0.5, 0.0, 100))),
    ]
    captions = ["Two men riding horses on the ground.", "a calf in a   field, dirt", "The arena!", "men"]
    ids = [reference_token_ids(caption, scorer.tokenizer) for caption in captions]
    assert ids == scorer.token_ids(captions)
    state = torch.load(checkpoint, weights_only=True)
    images = [reference_image(region) for region in regions]
    assert [feat.shape[0] for feat, _ in images] == [10, 12, 21, 60]
    expected = reference_logits(state, 4, ids, images)
    for batch_size in (1, 3, 4):
        logits = scorer.logits(captions, regions, batch_size=batch_size)
        assert np.allclose(logits, expected, atol=1e-5, rtol=0)
    assert umic_scores(scorer, captions, regions) == [1 / (1 + math.exp(-x)) for x in logits]
