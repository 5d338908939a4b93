"""UNITER (Chen et al., ECCV 2020), the single-stream model behind UMIC.

Text tokens and image regions are embedded separately, concatenated and run through a
BERT encoder (transformers' ``BertEncoder`` with the additive ``(1 − mask)·(−10000)`` mask; its attention
through PyTorch's fused ``scaled_dot_product_attention``, the same softmax(q·kᵀ/√d + mask)·v as the
released eager code, which stays selectable) and ``BertPooler``. Module names follow the released code, so a
UNITER/UMIC state dict loads unchanged:

* ``uniter.embeddings.{word_embeddings, position_embeddings, token_type_embeddings, LayerNorm}``
* ``uniter.img_embeddings.{img_linear, img_layer_norm, pos_linear, pos_layer_norm, mask_embedding, LayerNorm}``
* ``uniter.encoder.layer.N.*`` (BERT naming), ``uniter.pooler.dense``
* ``itm_output`` (Linear H→2) and ``rank_output`` (Linear H→1) for the caption scorer.

Regions are placed after each example's text with padding in between; attention is
order-free apart from the text position embeddings, so with the mask this equals the
original's compact ``gather_index`` layout.
"""

from __future__ import annotations

import os
import re

import torch
from torch import nn
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertEncoder, BertPooler

from ..checkpoints import load_checked, read_state_dict
from ..models import ModelUnavailableError, cached, resolve_device
from .common import additive_mask

#: How attention is computed: ``"sdpa"`` (PyTorch's fused kernel; no attention weights) or ``"eager"`` (the released
#: code's explicit scores + mask, softmax, product).
ATTENTION_IMPLEMENTATIONS = ("sdpa", "eager")
#: Region feature size and position-feature size of the released UNITER checkpoints.
IMG_DIM = 2048
POS_DIM = 7


def uniter_config(*, vocab_size: int = 28996, hidden_size: int = 768, num_hidden_layers: int = 12,
                  num_attention_heads: int = 12, intermediate_size: int = 3072, max_position_embeddings: int = 512,
                  type_vocab_size: int = 2, attention: str = "sdpa") -> BertConfig:
    """UNITER-base's ``config/uniter-base.json`` (vocabulary of bert-base-cased) as a ``BertConfig``.

    GELU is the erf form, every LayerNorm has eps 1e-12, dropout is inactive at evaluation. ``attention``: one of
    :data:`ATTENTION_IMPLEMENTATIONS` (the same arithmetic up to float rounding).
    """
    if attention not in ATTENTION_IMPLEMENTATIONS:
        raise ValueError(f"attention must be one of {', '.join(ATTENTION_IMPLEMENTATIONS)}, got {attention!r}")
    config = BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
                        num_attention_heads=num_attention_heads, intermediate_size=intermediate_size,
                        max_position_embeddings=max_position_embeddings, type_vocab_size=type_vocab_size,
                        hidden_act="gelu", layer_norm_eps=1e-12, pad_token_id=0)
    config._attn_implementation = attention
    return config


class UniterTextEmbeddings(nn.Module):
    """LayerNorm(word + position + token type), summed in the original's order."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids) + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))


class UniterImageEmbeddings(nn.Module):
    """LayerNorm(LayerNorm(Linear(feature)) + LayerNorm(Linear(pos7)) + token type embedding 1)."""

    def __init__(self, config: BertConfig, img_dim: int = IMG_DIM):
        super().__init__()
        self.img_linear = nn.Linear(img_dim, config.hidden_size)
        self.img_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.pos_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.pos_linear = nn.Linear(POS_DIM, config.hidden_size)
        # Used only by masked-region pre-training; kept so checkpoints load unchanged.
        self.mask_embedding = nn.Embedding(2, img_dim, padding_idx=0)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, img_feat: torch.Tensor, img_pos_feat: torch.Tensor, type_embeddings: torch.Tensor) -> torch.Tensor:
        transformed_im = self.img_layer_norm(self.img_linear(img_feat))
        transformed_pos = self.pos_layer_norm(self.pos_linear(img_pos_feat))
        return self.dropout(self.LayerNorm(transformed_im + transformed_pos + type_embeddings))


class UniterModel(nn.Module):
    def __init__(self, config: BertConfig, img_dim: int = IMG_DIM):
        super().__init__()
        self.config = config
        self.embeddings = UniterTextEmbeddings(config)
        self.img_embeddings = UniterImageEmbeddings(config, img_dim)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config)

    @property
    def img_dim(self) -> int:
        return self.img_embeddings.img_linear.in_features

    def forward(self, input_ids: torch.Tensor, text_mask: torch.Tensor, img_feat: torch.Tensor,
                img_pos_feat: torch.Tensor, img_mask: torch.Tensor) -> torch.Tensor:
        """Last-layer states over ``[text ; regions]``: B × (L + R) × H.

        ``input_ids``/``text_mask``: B × L (with [CLS] … [SEP]); ``img_feat``: B × R × img_dim;
        ``img_pos_feat``: B × R × 7; ``img_mask``: B × R. Position ids are 0..L−1, text type 0, image type 1.
        """
        batch, length = input_ids.shape
        position_ids = torch.arange(length, device=input_ids.device).expand(batch, -1)
        text = self.embeddings(input_ids, position_ids, torch.zeros_like(input_ids))
        image_type = self.embeddings.token_type_embeddings(torch.ones_like(img_mask))
        image = self.img_embeddings(img_feat, img_pos_feat, image_type)
        mask = torch.cat([text_mask, img_mask], dim=1)
        hidden = torch.cat([text, image], dim=1)
        return self.encoder(hidden, attention_mask=additive_mask(mask, hidden.dtype)).last_hidden_state


class UniterForCaptionScoring(nn.Module):
    """UMIC's ``UniterForCaptioningMetric``: the pooled [CLS] state through ``rank_output``."""

    def __init__(self, config: BertConfig, img_dim: int = IMG_DIM):
        super().__init__()
        self.uniter = UniterModel(config, img_dim)
        self.itm_output = nn.Linear(config.hidden_size, 2)  # loaded but unused at inference
        self.rank_output = nn.Linear(config.hidden_size, 1)

    def forward(self, input_ids, text_mask, img_feat, img_pos_feat, img_mask) -> torch.Tensor:
        """The rank logit of each example (B,)."""
        sequence = self.uniter(input_ids, text_mask, img_feat, img_pos_feat, img_mask)
        return self.rank_output(self.uniter.pooler(sequence)).squeeze(-1)


def expected_checkpoint_keys(num_layers: int = 12) -> list[str]:
    """Every key of a released UMIC checkpoint (``umic.pt``) for a ``num_layers``-layer UNITER.

    >>> keys = expected_checkpoint_keys()
    >>> len(keys), keys[0], keys[-1]
    (214, 'uniter.embeddings.word_embeddings.weight', 'rank_output.bias')
    """
    config = uniter_config(vocab_size=2, hidden_size=4, num_hidden_layers=num_layers, num_attention_heads=1,
                           intermediate_size=4, max_position_embeddings=2)
    with torch.device("meta"):
        return list(UniterForCaptionScoring(config, img_dim=1).state_dict())


def config_from_state_dict(state: dict[str, torch.Tensor], *, num_attention_heads: int | None = None,
                           attention: str = "sdpa") -> tuple[BertConfig, int]:
    """Sizes read off the tensors (the released files carry no config); heads default to hidden/64
    (the BERT convention: 12 for UNITER-base, 16 for UNITER-large). Returns the config and img_dim."""
    try:
        vocab_size, hidden = state["uniter.embeddings.word_embeddings.weight"].shape
        layers = {int(m.group(1)) for k in state if (m := re.match(r"uniter\.encoder\.layer\.(\d+)\.", k))}
        config = uniter_config(
            vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=len(layers),
            num_attention_heads=num_attention_heads or hidden // 64,
            intermediate_size=state["uniter.encoder.layer.0.intermediate.dense.weight"].shape[0],
            max_position_embeddings=state["uniter.embeddings.position_embeddings.weight"].shape[0],
            type_vocab_size=state["uniter.embeddings.token_type_embeddings.weight"].shape[0], attention=attention)
        img_dim = state["uniter.img_embeddings.img_linear.weight"].shape[1]
    except KeyError as error:
        raise ModelUnavailableError(f"not a UNITER checkpoint: it has no {error.args[0]!r}") from error
    if config.num_attention_heads == 0 or hidden % config.num_attention_heads:
        raise ModelUnavailableError(f"hidden size {hidden} is not divisible by {config.num_attention_heads} heads; pass num_attention_heads")
    return config, int(img_dim)


def load_uniter_scorer(source: str | os.PathLike, *, num_attention_heads: int | None = None,
                       device: str | torch.device | None = None, attention: str = "sdpa") -> UniterForCaptionScoring:
    """A UNITER caption scorer from a released state dict (local path or URL, downloaded once),
    in eval mode on ``device``, shared through capeval's process-wide model cache; ``attention`` as in
    :func:`uniter_config`."""
    target = resolve_device(device)

    def build() -> UniterForCaptionScoring:
        state = read_state_dict(source, what="UNITER checkpoint")
        config, img_dim = config_from_state_dict(state, num_attention_heads=num_attention_heads, attention=attention)
        model = UniterForCaptionScoring(config, img_dim)
        load_checked(model, state, what=f"UNITER checkpoint {os.fspath(source)!r}")
        return model.to(target).eval()

    return cached(("uniter-caption-scorer", os.fspath(source), num_attention_heads, str(target), attention), build)


def save_random_checkpoint(path: str | os.PathLike, config: BertConfig, *, img_dim: int = IMG_DIM, seed: int = 0, std: float = 0.5) -> str:
    """Write a randomly initialised caption scorer in the released state-dict layout.

    For smoke tests and offline examples: it loads through :func:`load_uniter_scorer` like the
    real ``umic.pt``, but its scores mean nothing. LayerNorms are the identity; every other
    tensor is N(0, ``std``²), wide enough that scores spread over (0, 1).
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.device("meta"):
        shapes = {key: value.shape for key, value in UniterForCaptionScoring(config, img_dim).state_dict().items()}
    state = {}
    for key, shape in shapes.items():
        if re.search(r"(LayerNorm|layer_norm)\.weight$", key):
            state[key] = torch.ones(shape)
        elif re.search(r"(LayerNorm|layer_norm)\.bias$", key):
            state[key] = torch.zeros(shape)
        else:
            state[key] = torch.randn(shape, generator=generator) * std
    torch.save(state, path)
    return os.fspath(path)
