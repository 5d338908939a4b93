"""Matrix-product FLOPs of the models the GPU benchmarks time, from their shapes, and the model FLOP utilisation (MFU)
printed beside captions/s: the FLOPs a call did per second over the card's dense peak in the forward pass's precision.

Every count is 2·m·k·n per product of an m × k and a k × n matrix: the linear layers and attention's two products
(scores and context); embeddings lookups, softmax, normalisation and elementwise work are left out, as MFU counts
them (they are memory traffic, not tensor-core work). tests/tools/test_flops.py checks each count against torch's own
FLOP counter on tiny models.
"""

from __future__ import annotations

from typing import Any

#: Dense peaks in FLOP/s per card: (bfloat16 and float16 on the tensor cores, float32 without TF32, which PyTorch
#: leaves off by default). The H100 SXM's datasheet figures; the H200 has the same compute.
PEAKS = {"H100": (989e12, 67e12), "H200": (989e12, 67e12)}


def peak(device_name: str | None, dtype: str) -> float | None:
    """The dense peak of a card (by a name such as ``"NVIDIA H100 80GB HBM3"``) in ``dtype``; ``None`` for a card
    not in :data:`PEAKS` or the CPU.

    >>> peak("NVIDIA H100 80GB HBM3", "bfloat16"), peak("NVIDIA H200", "float32"), peak("CPU", "float32")
    (989000000000000.0, 67000000000000.0, None)
    """
    for card, (reduced, single) in PEAKS.items():
        if device_name and card in device_name:
            return single if dtype == "float32" else reduced
    return None


def mfu(flops: float, seconds: float, device_name: str | None, dtype: str) -> float | None:
    """FLOPs per second over the card's peak (:func:`peak`), or ``None`` where the peak is unknown.

    >>> round(mfu(98.9e12, 1.0, "NVIDIA H100", "bfloat16"), 3)
    0.1
    """
    top = peak(device_name, dtype)
    return None if top is None or seconds <= 0 else flops / seconds / top


def linear(rows: int, d_in: int, d_out: int) -> int:
    """A linear layer (or any product) taking ``rows`` vectors of ``d_in`` to ``d_out``."""
    return 2 * rows * d_in * d_out


def attention(queries: int, keys: int, width: int) -> int:
    """Scores q·kᵀ and context softmax·v of ``queries`` over ``keys``, all heads together ``width`` wide."""
    return 4 * queries * keys * width


def encoder_layer(length: int, width: int, intermediate: int, *, inner: int | None = None) -> int:
    """One self-attention transformer layer over ``length`` positions (BERT, ViLBERT's streams, CLIP's towers, T5's
    encoder): query, key, value and output projections (``inner`` wide, default ``width``), attention, feed-forward."""
    inner = width if inner is None else inner
    return 4 * linear(length, width, inner) + attention(length, length, inner) + linear(length, width, intermediate) \
        + linear(length, intermediate, width)


def vilbert_pair(config: Any, text: int, regions: int, blocks: int | None = None) -> int:
    """One (caption, image) pair through ViLBERT (a ``VilbertConfig``) up to co-attention block ``blocks`` (default
    all), as ``VilbertModel.forward`` computes it: ``text`` positions (the task token included), ``regions`` image
    positions (the global one included). Only the text output of the last block is computed, not its image half."""
    blocks = blocks or config.num_coattention_blocks
    total = linear(regions, config.v_feature_size, config.v_hidden_size) + linear(regions, 5, config.v_hidden_size)
    t_start = v_start = 0
    bi = config.bi_hidden_size
    for block, (v_end, t_end) in enumerate(zip(config.v_biattention_id, config.t_biattention_id)):
        total += (t_end - t_start) * encoder_layer(text, config.hidden_size, config.intermediate_size)
        total += (v_end - v_start) * encoder_layer(regions, config.v_hidden_size, config.v_intermediate_size)
        # The text half: text queries over image keys and values, back to the text width, the text feed-forward.
        total += linear(text, config.hidden_size, bi) + 2 * linear(regions, config.v_hidden_size, bi) + attention(text, regions, bi)
        total += linear(text, bi, config.hidden_size) + linear(text, config.hidden_size, config.intermediate_size) \
            + linear(text, config.intermediate_size, config.hidden_size)
        if block + 1 == blocks:
            return total
        # The image half.
        total += linear(regions, config.v_hidden_size, bi) + 2 * linear(text, config.hidden_size, bi) + attention(regions, text, bi)
        total += linear(regions, bi, config.v_hidden_size) + linear(regions, config.v_hidden_size, config.v_intermediate_size) \
            + linear(regions, config.v_intermediate_size, config.v_hidden_size)
        t_start, v_start = t_end, v_end
    return total


def t5_generation(config: Any, input_length: int, steps: int) -> int:
    """Greedy generation with a T5 (a ``T5Config``) from one input of ``input_length`` tokens: the encoder once, then
    ``steps`` decoding steps of one token each (step s attends to s cached positions and to the input; the cross
    keys and values are computed once), each ending in the vocabulary projection."""
    d, inner, d_ff = config.d_model, config.num_heads * config.d_kv, config.d_ff
    total = config.num_layers * encoder_layer(input_length, d, d_ff, inner=inner)
    decoder_layers = config.num_decoder_layers or config.num_layers
    total += decoder_layers * 2 * linear(input_length, d, inner)  # cross-attention keys and values
    for step in range(1, steps + 1):
        per_layer = 4 * linear(1, d, inner) + attention(1, step, inner) + 2 * linear(1, d, inner) + attention(1, input_length, inner) \
            + linear(1, d, d_ff) + linear(1, d_ff, d)
        total += decoder_layers * per_layer + linear(1, d, config.vocab_size)
    return total


def bert_encoder(config: Any, length: int, layers: int | None = None) -> int:
    """A BERT-style encoder (a ``BertConfig``) over one sentence of ``length`` tokens, its first ``layers`` layers
    (default all; capeval's text encoder stops at the layer it reads)."""
    layers = config.num_hidden_layers if layers is None else layers
    return layers * encoder_layer(length, config.hidden_size, config.intermediate_size)


def clip_image(config: Any) -> int:
    """One image through a CLIP vision tower and its projection (a ``CLIPConfig``)."""
    vision = config.vision_config
    patches = (vision.image_size // vision.patch_size) ** 2
    total = linear(patches, 3 * vision.patch_size ** 2, vision.hidden_size)
    total += vision.num_hidden_layers * encoder_layer(patches + 1, vision.hidden_size, vision.intermediate_size)
    return total + linear(1, vision.hidden_size, config.projection_dim)


def clip_text(config: Any, length: int) -> int:
    """One text of ``length`` tokens through a CLIP text tower and its projection (a ``CLIPConfig``)."""
    text = config.text_config
    return text.num_hidden_layers * encoder_layer(length, text.hidden_size, text.intermediate_size) \
        + linear(1, text.hidden_size, config.projection_dim)
