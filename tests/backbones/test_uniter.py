"""The UNITER port: the released checkpoint's key layout, loading (path, URL cache, legacy names, errors)
and the embedding/head arithmetic against hand-written formulas."""

import math

import pytest
import torch
import torch.nn.functional as F

from capeval import checkpoints
from capeval.backbones.common import pad_ids, pad_rows
from capeval.backbones.uniter import (
    UniterForCaptionScoring,
    config_from_state_dict,
    expected_checkpoint_keys,
    load_uniter_scorer,
    save_random_checkpoint,
    uniter_config,
)
from capeval.models import ModelUnavailableError
from fixtures.vision import released_umic_keys



@pytest.mark.models
def test_model_keys_match_the_released_checkpoint_layout():
    assert set(expected_checkpoint_keys()) == released_umic_keys(12)
    with torch.device("meta"):
        shapes = {k: tuple(v.shape) for k, v in UniterForCaptionScoring(uniter_config()).state_dict().items()}
    assert set(shapes) == released_umic_keys(12)
    assert shapes["uniter.embeddings.word_embeddings.weight"] == (28996, 768)  # bert-base-cased
    assert shapes["uniter.img_embeddings.img_linear.weight"] == (768, 2048)
    assert shapes["uniter.img_embeddings.pos_linear.weight"] == (768, 7)
    assert shapes["uniter.img_embeddings.mask_embedding.weight"] == (2, 2048)
    assert shapes["rank_output.weight"] == (1, 768) and shapes["itm_output.weight"] == (2, 768)


def test_tiny_checkpoint_loads_by_path_with_sizes_read_off_the_tensors(tiny_umic_checkpoint, tiny_uniter_config):
    state = torch.load(tiny_umic_checkpoint, weights_only=True)
    assert set(state) == released_umic_keys(2)
    config, img_dim = config_from_state_dict(state, num_attention_heads=4)
    assert (config.num_hidden_layers, config.hidden_size, config.intermediate_size, config.max_position_embeddings, img_dim) == (2, 32, 64, 64, 2048)
    model = load_uniter_scorer(tiny_umic_checkpoint, num_attention_heads=4, device="cpu")
    assert not model.training and load_uniter_scorer(tiny_umic_checkpoint, num_attention_heads=4, device="cpu") is model
    assert torch.equal(model.rank_output.weight, state["rank_output.weight"])


def test_legacy_gamma_beta_names_are_renamed(tmp_path, tiny_umic_checkpoint):
    state = torch.load(tiny_umic_checkpoint, weights_only=True)
    legacy = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in state.items()}
    assert any("gamma" in k for k in legacy)
    torch.save(legacy, tmp_path / "legacy.pt")
    model = load_uniter_scorer(tmp_path / "legacy.pt", num_attention_heads=4, device="cpu")
    assert torch.equal(model.uniter.embeddings.LayerNorm.bias, state["uniter.embeddings.LayerNorm.bias"])


def test_layout_errors_are_clear(tmp_path, tiny_umic_checkpoint):
    state = torch.load(tiny_umic_checkpoint, weights_only=True)
    cases = {
        "missing": ({k: v for k, v in state.items() if not k.startswith("rank_output")}, r"missing: \['rank_output.bias'"),
        "unexpected": ({**state, "uniter.extra.weight": torch.zeros(1)}, r"unexpected: \['uniter.extra.weight'\]"),
        "shape": ({**state, "rank_output.weight": torch.zeros(2, 32)}, r"wrong shape: \['rank_output.weight'\]"),
        "foreign": ({"bert.embeddings.word_embeddings.weight": torch.zeros(2, 2)}, "not a UNITER checkpoint"),
    }
    for name, (broken, message) in cases.items():
        torch.save(broken, tmp_path / f"{name}.pt")
        with pytest.raises(ModelUnavailableError, match=message):
            load_uniter_scorer(tmp_path / f"{name}.pt", num_attention_heads=4, device="cpu")
    (tmp_path / "corrupt.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ModelUnavailableError, match="not a readable torch checkpoint"):
        load_uniter_scorer(tmp_path / "corrupt.pt", device="cpu")
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        load_uniter_scorer(tmp_path / "absent.pt", device="cpu")
    with pytest.raises(ModelUnavailableError, match="not divisible by 3 heads"):
        load_uniter_scorer(tiny_umic_checkpoint, num_attention_heads=3, device="cpu")


def test_urls_resolve_to_the_cache_and_never_download_offline(tmp_path, monkeypatch, tiny_umic_checkpoint):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    url = "https://archive.org/download/umic_data/umic.pt"
    target = checkpoints.cached_path_for(url)
    assert target.is_relative_to(tmp_path) and target.name == "umic.pt"
    with pytest.raises(ModelUnavailableError, match=rf"offline mode .*Download {url} yourself .* place it at {target}"):
        load_uniter_scorer(url, device="cpu")
    target.parent.mkdir(parents=True)
    target.write_bytes(open(tiny_umic_checkpoint, "rb").read())
    model = load_uniter_scorer(url, num_attention_heads=4, device="cpu")
    assert model.uniter.config.hidden_size == 32


@pytest.mark.models
def test_embeddings_and_head_follow_the_formulas(tiny_uniter_config):
    torch.manual_seed(0)
    model = UniterForCaptionScoring(tiny_uniter_config).eval()
    for parameter in model.parameters():
        torch.nn.init.normal_(parameter, std=0.5)
    ids, text_mask = pad_ids([[2, 7, 8, 3]])
    feat, img_mask = pad_rows([torch.rand(5, 2048).numpy()])
    pos, _ = pad_rows([torch.rand(5, 7).numpy()])
    emb, img = model.uniter.embeddings, model.uniter.img_embeddings
    eps = tiny_uniter_config.layer_norm_eps

    def layer_norm(x, module):
        return F.layer_norm(x, (x.shape[-1],), module.weight, module.bias, eps)

    with torch.inference_mode():
        text = layer_norm(emb.word_embeddings.weight[ids] + emb.position_embeddings.weight[:4] + emb.token_type_embeddings.weight[0], emb.LayerNorm)
        image = layer_norm(layer_norm(feat @ img.img_linear.weight.T + img.img_linear.bias, img.img_layer_norm)
                           + layer_norm(pos @ img.pos_linear.weight.T + img.pos_linear.bias, img.pos_layer_norm)
                           + emb.token_type_embeddings.weight[1], img.LayerNorm)
        assert torch.allclose(emb(ids, torch.arange(4)[None], torch.zeros_like(ids)), text, atol=1e-6)
        assert torch.allclose(img(feat, pos, emb.token_type_embeddings.weight[1]), image, atol=1e-6)
        hidden = model.uniter(ids, text_mask, feat, pos, img_mask)
        assert hidden.shape == (1, 4 + 5, 32)
        logit = model(ids, text_mask, feat, pos, img_mask)
        pooled = torch.tanh(hidden[:, 0] @ model.uniter.pooler.dense.weight.T + model.uniter.pooler.dense.bias)
        assert torch.allclose(logit, pooled @ model.rank_output.weight[0] + model.rank_output.bias, atol=1e-6)
        torch.nn.init.normal_(model.itm_output.weight, std=5.0)
        assert torch.equal(model(ids, text_mask, feat, pos, img_mask), logit), "itm_output plays no part in the score"
    assert 0 < 1 / (1 + math.exp(-float(logit))) < 1


def test_padding_and_batching_do_not_change_results(tiny_umic_checkpoint):
    model = load_uniter_scorer(tiny_umic_checkpoint, num_attention_heads=4, device="cpu")
    generator = torch.Generator().manual_seed(1)
    texts = [[2, 7, 8, 3], [2, 9, 10, 11, 12, 13, 3], [2, 3]]
    regions = [torch.rand(n, 2048, generator=generator).numpy() for n in (10, 36, 17)]
    positions = [torch.rand(n, 7, generator=generator).numpy() for n in (10, 36, 17)]
    with torch.inference_mode():
        ids, text_mask = pad_ids(texts)
        feat, img_mask = pad_rows(regions)
        pos, _ = pad_rows(positions)
        batched = model(ids, text_mask, feat, pos, img_mask)
        for i in range(3):
            ids, text_mask = pad_ids(texts[i : i + 1])
            feat, img_mask = pad_rows(regions[i : i + 1])
            pos, _ = pad_rows(positions[i : i + 1])
            assert torch.allclose(model(ids, text_mask, feat, pos, img_mask), batched[i : i + 1], atol=1e-5)


@pytest.mark.models
def test_random_checkpoints_are_reproducible(tmp_path, tiny_uniter_config):
    a = torch.load(save_random_checkpoint(tmp_path / "a.pt", tiny_uniter_config, seed=3), weights_only=True)
    b = torch.load(save_random_checkpoint(tmp_path / "b.pt", tiny_uniter_config, seed=3), weights_only=True)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(a["uniter.encoder.layer.0.output.LayerNorm.weight"], torch.ones(32))
