"""speed/flops.py, the FLOP counts behind the GPU suite's MFU figures, equals torch's own FLOP counter on tiny models
(attention through SDPA's math kernel, which the counter sees as matrix products)."""

import sys

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from fixtures import REPO

sys.path.insert(0, str(REPO / "speed"))
import flops  # noqa: E402


def counted(function) -> int:
    with torch.inference_mode(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        function()
    return counter.get_total_flops()


@pytest.mark.models
@pytest.mark.parametrize("blocks", [6, 2])
def test_vilbert_pair(tiny_checkpoints, tiny_vilbert_config_path, blocks):
    from capeval.backbones.vilbert import load_vilbert

    model = load_vilbert(tiny_checkpoints["multi_task"], config=tiny_vilbert_config_path, device="cpu")
    ids, regions = torch.tensor([[101, 7, 8, 9, 102]]), 37
    inputs = (ids, torch.ones_like(ids), torch.rand(1, regions, 2048), torch.rand(1, regions, 5), None)
    # Six text positions: the five ids and the task token.
    assert counted(lambda: model(*inputs, task_id=7, blocks=blocks)) == flops.vilbert_pair(model.config, 6, regions, blocks)


@pytest.mark.models
def test_t5_generation(tiny_qa):
    from transformers import T5ForConditionalGeneration

    model = T5ForConditionalGeneration.from_pretrained(tiny_qa, attn_implementation="sdpa").eval()
    ids = torch.tensor([[5, 6, 7, 8, 9, 1]])

    def generate():  # greedy decoding as generate runs it: the encoder once, then one token a step from the cache
        encoded = model.get_encoder()(input_ids=ids)
        token, cache = torch.zeros(1, 1, dtype=torch.long), None
        for _ in range(4):
            out = model(encoder_outputs=encoded, decoder_input_ids=token, past_key_values=cache, use_cache=True)
            token, cache = out.logits[:, -1].argmax(-1, keepdim=True), out.past_key_values

    assert counted(generate) == flops.t5_generation(model.config, 6, 4)


@pytest.mark.models
def test_bert_encoder(tiny_bert_path):
    from transformers import BertModel

    model = BertModel.from_pretrained(tiny_bert_path, attn_implementation="sdpa").eval()
    model.encoder.layer = model.encoder.layer[:3]
    model.pooler = None
    assert counted(lambda: model(input_ids=torch.tensor([[2, 5, 6, 7, 3]]))) == flops.bert_encoder(model.config, 5, layers=3)


@pytest.mark.models
def test_clip(tmp_path):
    from transformers import CLIPModel

    from capeval.backbones.clip import save_random_clip

    model = CLIPModel.from_pretrained(save_random_clip(tmp_path / "clip", words=["a", "dog"], hidden_size=32, layers=2, heads=4,
                                                       projection_dim=16), attn_implementation="sdpa").eval()
    image = torch.rand(1, 3, model.config.vision_config.image_size, model.config.vision_config.image_size)
    assert counted(lambda: model.visual_projection(model.vision_model(pixel_values=image).pooler_output)) == flops.clip_image(model.config)
    ids = torch.tensor([[1, 5, 6, 2]])
    assert counted(lambda: model.text_projection(model.text_model(input_ids=ids).pooler_output)) == flops.clip_text(model.config, 4)


def test_peaks_and_mfu():
    assert flops.peak("NVIDIA H100 80GB HBM3", "float16") == 989e12 and flops.peak("NVIDIA A10G", "bfloat16") is None
    assert flops.mfu(67e12, 2.0, "NVIDIA H200", "float32") == pytest.approx(0.5)
    assert flops.mfu(1e12, 1.0, None, "float32") is None and flops.mfu(1e12, 0.0, "NVIDIA H100", "float32") is None
