"""The ViLBERT port: the released checkpoints' key layout, config reading, loading (strict keys, heads dropped,
errors), the layer list, and padding/batching invariance."""

import json

import pytest
import torch

from capeval.backbones.vilbert import (
    VilbertConfig,
    checkpoint_layout,
    load_vilbert,
    read_vilbert_config,
    save_random_checkpoint,
)
from capeval.models import ModelUnavailableError
from fixtures.vilbert import released_layout



@pytest.mark.models
@pytest.mark.parametrize("task_token", [True, False], ids=["multi_task_model.bin", "pretrained_model.bin"])
def test_port_has_the_released_key_layout_at_the_real_sizes(task_token):
    config = read_vilbert_config()  # bert_base_6layer_6conect
    expected = released_layout(config, task_token=task_token)
    got = checkpoint_layout(config, task_token=task_token)  # built on the meta device: nothing allocated
    assert sorted(got) == sorted(expected)
    assert got == expected
    assert len(got) == (520 if task_token else 519)
    assert sum(torch.Size(s).numel() for s in got.values()) > 200_000_000


def test_default_config_is_bert_base_6layer_6conect():
    config = read_vilbert_config()
    assert (config.num_hidden_layers, config.v_num_hidden_layers, config.num_coattention_blocks) == (12, 6, 6)
    assert config.v_biattention_id == (0, 1, 2, 3, 4, 5) and config.t_biattention_id == (6, 7, 8, 9, 10, 11)
    assert (config.v_hidden_size, config.v_intermediate_size, config.bi_hidden_size, config.bi_num_attention_heads) == (1024, 1024, 1024, 8)


def test_config_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="cannot read the ViLBERT config"):
        read_vilbert_config(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        read_vilbert_config(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="in_batch_pairs=True"):
        VilbertConfig.from_dict({"vocab_size": 10, "in_batch_pairs": True})
    with pytest.raises(ValueError, match="no vocab_size"):
        VilbertConfig.from_dict({"hidden_size": 8})
    with pytest.raises(ValueError, match="equal length"):
        VilbertConfig.from_dict({"vocab_size": 10, "v_biattention_id": [0], "t_biattention_id": [10, 11]})
    with pytest.raises(ValueError, match="not a multiple"):
        VilbertConfig.from_dict({"vocab_size": 10, "bi_hidden_size": 10})
    # keys the port does not read (training-only) are ignored; missing ones take the released class defaults
    config = VilbertConfig.from_dict({"vocab_size": 10, "initializer_range": 0.02, "pooling_method": "mul"})
    assert config.v_num_hidden_layers == 3 and config.t_biattention_id == (10, 11)


def test_loading_drops_the_heads_and_detects_the_task_token(tiny_checkpoints, tiny_vilbert_config_path):
    multi = load_vilbert(tiny_checkpoints["multi_task"], config=tiny_vilbert_config_path, device="cpu")
    pretrained = load_vilbert(tiny_checkpoints["pretrained"], config=tiny_vilbert_config_path, device="cpu")
    assert multi.task_token and not pretrained.task_token
    assert not multi.training
    assert load_vilbert(tiny_checkpoints["multi_task"], config=tiny_vilbert_config_path, device="cpu") is multi  # process-wide cache
    state = torch.load(tiny_checkpoints["multi_task"], weights_only=True)
    assert torch.equal(multi.encoder.c_layer[2].biattention.key1.weight, state["bert.encoder.c_layer.2.biattention.key1.weight"])


def test_loading_is_strict_on_the_bert_keys(tmp_path, tiny_checkpoints, tiny_vilbert_config_path):
    state = torch.load(tiny_checkpoints["multi_task"], weights_only=True)
    missing = {k: v for k, v in state.items() if k != "bert.encoder.c_layer.5.biOutput.q_dense2.bias"}
    torch.save(missing, tmp_path / "missing.bin")
    with pytest.raises(ModelUnavailableError, match=r"missing: \['encoder.c_layer.5.biOutput.q_dense2.bias'\]"):
        load_vilbert(tmp_path / "missing.bin", config=tiny_vilbert_config_path, device="cpu")
    with pytest.raises(ModelUnavailableError, match="bert_base_6layer_6conect.*pass config=.*wrong shape"):
        load_vilbert(tiny_checkpoints["multi_task"], device="cpu")  # the real sizes do not fit the tiny checkpoint
    torch.save({"cls.bias": torch.zeros(2)}, tmp_path / "heads_only.bin")
    with pytest.raises(ModelUnavailableError, match="no 'bert.\\*' keys"):
        load_vilbert(tmp_path / "heads_only.bin", config=tiny_vilbert_config_path, device="cpu")
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        load_vilbert(tmp_path / "absent.bin", config=tiny_vilbert_config_path, device="cpu")


def test_legacy_layer_norm_names_load(tmp_path, tiny_checkpoints, tiny_vilbert_config_path):
    state = torch.load(tiny_checkpoints["pretrained"], weights_only=True)
    legacy = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in state.items()}
    torch.save(legacy, tmp_path / "legacy.bin")
    model = load_vilbert(tmp_path / "legacy.bin", config=tiny_vilbert_config_path, device="cpu")
    assert torch.equal(model.embeddings.LayerNorm.weight, state["bert.embeddings.LayerNorm.weight"])


def _inputs(config: VilbertConfig, lengths, boxes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    text_mask = torch.zeros_like(ids)
    for row, length in enumerate(lengths):
        ids[row, :length] = torch.randint(5, config.vocab_size, (length,), generator=generator)
        text_mask[row, :length] = 1
    features = torch.rand(len(boxes), max(boxes), config.v_feature_size, generator=generator)
    locations = torch.rand(len(boxes), max(boxes), 5, generator=generator)
    image_mask = torch.zeros(len(boxes), max(boxes))
    for row, count in enumerate(boxes):
        image_mask[row, :count] = 1
    return ids, text_mask, features, locations, image_mask


def test_layer_list_has_one_entry_per_coattention_block(tiny_checkpoints, tiny_vilbert_config_path):
    """Test vector 6: six text outputs; the last is not the output after text layer 11 (which the released list omits)."""
    model = load_vilbert(tiny_checkpoints["multi_task"], config=tiny_vilbert_config_path, device="cpu")
    ids, text_mask, features, locations, image_mask = _inputs(model.config, [9], [101])
    with torch.inference_mode():
        outputs = model(ids, text_mask, features, locations, image_mask, task_id=7)
        after_layer_11 = model.encoder.layer[11](outputs[-1], torch.zeros(1, 1, 1, 10))
        first_three = model(ids, text_mask, features, locations, image_mask, task_id=7, blocks=3)
    assert len(outputs) == 6 and all(h.shape == (1, 10, 32) for h in outputs)
    assert not torch.allclose(outputs[-1], after_layer_11, atol=1e-3)
    assert all(torch.equal(a, b) for a, b in zip(first_three, outputs[:3]))
    assert all(not torch.allclose(a, b, atol=1e-3) for a, b in zip(outputs, outputs[1:]))
    with pytest.raises(ValueError, match="pass task_id"):
        model(ids, text_mask, features, locations, image_mask)
    with pytest.raises(ValueError, match=r"blocks must be in 1\.\.6, got 7"):
        model(ids, text_mask, features, locations, image_mask, task_id=7, blocks=7)


def test_padding_and_batching_do_not_change_real_positions(tiny_checkpoints, tiny_vilbert_config_path):
    model = load_vilbert(tiny_checkpoints["multi_task"], config=tiny_vilbert_config_path, device="cpu")
    ids, text_mask, features, locations, image_mask = _inputs(model.config, [12, 5, 8], [101, 37, 101], seed=3)
    with torch.inference_mode():
        batched = model(ids, text_mask, features, locations, image_mask, task_id=7)[-1]
        for row, (length, boxes) in enumerate([(12, 101), (5, 37), (8, 101)]):
            alone = model(ids[row : row + 1, :length], text_mask[row : row + 1, :length], features[row : row + 1, :boxes],
                          locations[row : row + 1, :boxes], image_mask[row : row + 1, :boxes], task_id=7)[-1]
            assert (batched[row, : length + 1] - alone[0]).abs().max() < 1e-5


def test_random_checkpoint_round_trips(tmp_path, tiny_vilbert_config_path):
    config = read_vilbert_config(tiny_vilbert_config_path)
    path = save_random_checkpoint(tmp_path / "random.bin", config, task_token=False, seed=4)
    state = torch.load(path, weights_only=True)
    assert set(state) == set(checkpoint_layout(config, task_token=False))
    assert torch.equal(state["bert.encoder.layer.0.output.LayerNorm.weight"], torch.ones(32))
    json.dumps({k: list(v.shape) for k, v in state.items()})  # plain tensors only
