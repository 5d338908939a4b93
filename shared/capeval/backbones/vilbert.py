"""ViLBERT (Lu et al., NeurIPS 2019), the two-stream model behind ViLBERTScore.

A port of the ``BertModel`` of facebookresearch/vilbert-multi-task (``vilbert/vilbert.py``, MIT). Text and
image regions each have their own transformer stream; co-attention ("connection") blocks couple them: the
text stream's queries attend to the image stream's keys and values and vice versa. Module names follow the
released code, so the ``bert.*`` part of ``multi_task_model.bin`` (12-in-1) and ``pretrained_model.bin``
(Conceptual Captions) loads unchanged (the task heads are dropped):

* ``embeddings.{word_embeddings, position_embeddings, token_type_embeddings, LayerNorm}``, plus
  ``embeddings.task_embeddings`` (20 task tokens) in the multi-task model;
* ``v_embeddings.{image_embeddings, image_location_embeddings, LayerNorm}``;
* ``encoder.layer.N`` (text), ``encoder.v_layer.N`` (image), ``encoder.c_layer.N`` (co-attention);
* ``t_pooler.dense``, ``v_pooler.dense`` (loaded so the key check is strict; unused).

Order of computation (the released ``BertEncoder``): before co-attention block k the text stream runs its
layers ``t_biattention_id[k-2] .. t_biattention_id[k-1] − 1`` (from layer 0 for the first block) and the
image stream likewise up to ``v_biattention_id[k-1]``. With ``bert_base_6layer_6conect`` block 1 follows text
layers 0–5 and no image layer; each later block follows one more layer of each stream. Only what the text
output of the chosen block needs is computed: no layer past it, and not its image half.

Arithmetic as released: every LayerNorm is ``(x − mean)/sqrt(biased var + 1e-12)·w + b``, GELU the erf form,
masks additive ``(1 − m)·(−10000)``; fp32, eval mode, dropout inactive.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Mapping

import torch
import torch.nn.functional as F
from torch import nn

from ..checkpoints import load_checked, read_state_dict
from ..models import ModelUnavailableError, cached, resolve_device
from .common import additive_mask

#: Rows of the multi-task model's task-token table (``Embedding(20, hidden)``).
NUM_TASK_TOKENS = 20
#: Location features per region: x1/W, y1/H, x2/W, y2/H, area/(W·H).
LOCATION_DIM = 5
DEFAULT_CONFIG_NAME = "bert_base_6layer_6conect"
_DEFAULT_CONFIG_FILE = "vilbert_bert_base_6layer_6conect.json"
_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"gelu": F.gelu, "relu": F.relu, "swish": F.silu}


@dataclass(frozen=True)
class VilbertConfig:
    """The architecture fields of a vilbert-multi-task config JSON (``config/*.json``).

    Defaults are those of the released ``BertConfig`` class, which fills in keys a JSON file omits.
    Keys that only matter for training (dropout, initialisation, prediction targets) are ignored.

    >>> config = read_vilbert_config()
    >>> config.hidden_size, config.v_hidden_size, config.bi_hidden_size, config.num_coattention_blocks
    (768, 1024, 1024, 6)
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    v_feature_size: int = 2048
    v_hidden_size: int = 768
    v_num_hidden_layers: int = 3
    v_num_attention_heads: int = 12
    v_intermediate_size: int = 3072
    v_hidden_act: str = "gelu"
    bi_hidden_size: int = 1024
    bi_num_attention_heads: int = 16
    v_biattention_id: tuple[int, ...] = (0, 1)
    t_biattention_id: tuple[int, ...] = (10, 11)

    def __post_init__(self) -> None:
        object.__setattr__(self, "v_biattention_id", tuple(int(i) for i in self.v_biattention_id))
        object.__setattr__(self, "t_biattention_id", tuple(int(i) for i in self.t_biattention_id))
        problems = []
        if len(self.v_biattention_id) != len(self.t_biattention_id) or not self.v_biattention_id:
            problems.append("v_biattention_id and t_biattention_id must be non-empty and of equal length")
        elif max(self.v_biattention_id) >= self.v_num_hidden_layers or max(self.t_biattention_id) >= self.num_hidden_layers:
            problems.append("a co-attention id points past the last layer of its stream")
        for width, heads, label in ((self.hidden_size, self.num_attention_heads, ""), (self.v_hidden_size, self.v_num_attention_heads, "v_"),
                                    (self.bi_hidden_size, self.bi_num_attention_heads, "bi_")):
            if heads <= 0 or width % heads:
                problems.append(f"{label}hidden_size {width} is not a multiple of {label}num_attention_heads {heads}")
        problems += [f"{name} {act!r} is not one of {sorted(_ACTIVATIONS)}" for name, act in
                     (("hidden_act", self.hidden_act), ("v_hidden_act", self.v_hidden_act)) if act not in _ACTIVATIONS]
        if problems:
            raise ValueError(f"invalid ViLBERT config: {'; '.join(problems)}")

    @property
    def num_coattention_blocks(self) -> int:
        return len(self.v_biattention_id)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "VilbertConfig":
        """The architecture from a config dict; options this port does not implement raise ``ValueError``."""
        unsupported = {"in_batch_pairs": True, "dynamic_attention": True, "with_coattention": False, "model": "roberta"}
        found = [f"{key}={values[key]!r}" for key, bad in unsupported.items() if key in values and values[key] == bad]
        if found:
            raise ValueError(f"ViLBERT config options not supported by this port: {', '.join(found)}")
        if "vocab_size" not in values:
            raise ValueError("the ViLBERT config has no vocab_size")
        fields = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in fields})


def read_vilbert_config(path: str | os.PathLike | None = None) -> VilbertConfig:
    """A vilbert-multi-task config JSON; ``None`` is ``bert_base_6layer_6conect.json`` (shipped with capeval)."""
    try:
        if path is None:
            text = resources.files("capeval").joinpath("resources").joinpath(_DEFAULT_CONFIG_FILE).read_text(encoding="utf-8")
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        values = json.loads(text)
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read the ViLBERT config {os.fspath(path or _DEFAULT_CONFIG_FILE)!r} ({error})") from error
    if not isinstance(values, dict):
        raise ValueError(f"the ViLBERT config {os.fspath(path or _DEFAULT_CONFIG_FILE)!r} is not a JSON object")
    return VilbertConfig.from_dict(values)


def attend(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None, heads: int) -> torch.Tensor:
    """Multi-head attention of B × Lq × D queries over B × Lk × D keys/values with a B × 1 × 1 × Lk additive mask:
    softmax(q·kᵀ/√(D/heads) + mask)·v per head, heads concatenated (B × Lq × D). ``None``: no key is masked (adding a
    mask of zeros changes nothing, and without one SDPA may choose its fastest kernel)."""
    batch, length, width = query.shape

    def split(x: torch.Tensor) -> torch.Tensor:
        return x.view(batch, x.shape[1], heads, width // heads).transpose(1, 2)

    context = F.scaled_dot_product_attention(split(query), split(key), split(value), attn_mask=mask)
    return context.transpose(1, 2).reshape(batch, length, width)


class Residual(nn.Module):
    """``LayerNorm(dense(x) + residual)``: the released ``BertSelfOutput``/``BertOutput`` (and image twins)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)
        self.LayerNorm = nn.LayerNorm(d_out, eps=1e-12)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class Intermediate(nn.Module):
    """``activation(dense(x))``: the feed-forward expansion."""

    def __init__(self, d_in: int, d_out: int, activation: str):
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)
        self.activation = _ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(x))


class SelfAttention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return attend(self.query(x), self.key(x), self.value(x), mask, self.heads)


class Attention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.self = SelfAttention(width, heads)
        self.output = Residual(width, width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return self.output(self.self(x, mask), x)


class TransformerLayer(nn.Module):
    """One post-LN BERT layer: the released ``BertLayer`` (text) and ``BertImageLayer`` (image) alike."""

    def __init__(self, width: int, heads: int, intermediate: int, activation: str):
        super().__init__()
        self.attention = Attention(width, heads)
        self.intermediate = Intermediate(width, intermediate, activation)
        self.output = Residual(intermediate, width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        attended = self.attention(x, mask)
        return self.output(self.intermediate(attended), attended)


class BiAttention(nn.Module):
    """Projections of the co-attention (``1``: image side, ``2``: text side) into ``bi_hidden_size``."""

    query1: nn.Linear
    key1: nn.Linear
    value1: nn.Linear
    query2: nn.Linear
    key2: nn.Linear
    value2: nn.Linear

    def __init__(self, config: VilbertConfig):
        super().__init__()
        self.heads = config.bi_num_attention_heads
        for side, width in (("1", config.v_hidden_size), ("2", config.hidden_size)):
            for name in ("query", "key", "value"):
                self.add_module(f"{name}{side}", nn.Linear(width, config.bi_hidden_size))

    def text_context(self, image: torch.Tensor, image_mask: torch.Tensor | None, text: torch.Tensor) -> torch.Tensor:
        """Text queries over image keys and values: B × Lt × bi_hidden."""
        return attend(self.query2(text), self.key1(image), self.value1(image), image_mask, self.heads)

    def image_context(self, image: torch.Tensor, text: torch.Tensor, text_mask: torch.Tensor) -> torch.Tensor:
        """Image queries over text keys and values: B × Lv × bi_hidden."""
        return attend(self.query1(image), self.key2(text), self.value2(text), text_mask, self.heads)


class BiOutput(nn.Module):
    """The co-attention outputs back into each stream. ``q_dense1``/``q_dense2`` are in the checkpoints but
    never used by the released forward pass."""

    def __init__(self, config: VilbertConfig):
        super().__init__()
        self.dense1 = nn.Linear(config.bi_hidden_size, config.v_hidden_size)
        self.LayerNorm1 = nn.LayerNorm(config.v_hidden_size, eps=1e-12)
        self.q_dense1 = nn.Linear(config.bi_hidden_size, config.v_hidden_size)
        self.dense2 = nn.Linear(config.bi_hidden_size, config.hidden_size)
        self.LayerNorm2 = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.q_dense2 = nn.Linear(config.bi_hidden_size, config.hidden_size)

    def image(self, context: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm1(self.dense1(context) + image)

    def text(self, context: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm2(self.dense2(context) + text)


class ConnectionLayer(nn.Module):
    """One co-attention block (the released ``BertConnectionLayer``): cross attention, then each stream's
    feed-forward. The feed-forward sizes are ``v_intermediate_size`` and ``intermediate_size``; the config's
    ``bi_intermediate_size`` is never read, as in the released code."""

    def __init__(self, config: VilbertConfig):
        super().__init__()
        self.biattention = BiAttention(config)
        self.biOutput = BiOutput(config)
        self.v_intermediate = Intermediate(config.v_hidden_size, config.v_intermediate_size, config.v_hidden_act)
        self.v_output = Residual(config.v_intermediate_size, config.v_hidden_size)
        self.t_intermediate = Intermediate(config.hidden_size, config.intermediate_size, config.hidden_act)
        self.t_output = Residual(config.intermediate_size, config.hidden_size)

    def text_forward(self, image: torch.Tensor, image_mask: torch.Tensor | None, text: torch.Tensor) -> torch.Tensor:
        attended = self.biOutput.text(self.biattention.text_context(image, image_mask, text), text)
        return self.t_output(self.t_intermediate(attended), attended)

    def image_forward(self, image: torch.Tensor, text: torch.Tensor, text_mask: torch.Tensor) -> torch.Tensor:
        attended = self.biOutput.image(self.biattention.image_context(image, text, text_mask), image)
        return self.v_output(self.v_intermediate(attended), attended)


class Encoder(nn.Module):
    def __init__(self, config: VilbertConfig):
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList(TransformerLayer(config.hidden_size, config.num_attention_heads, config.intermediate_size,
                                                    config.hidden_act) for _ in range(config.num_hidden_layers))
        self.v_layer = nn.ModuleList(TransformerLayer(config.v_hidden_size, config.v_num_attention_heads, config.v_intermediate_size,
                                                      config.v_hidden_act) for _ in range(config.v_num_hidden_layers))
        self.c_layer = nn.ModuleList(ConnectionLayer(config) for _ in range(config.num_coattention_blocks))

    def forward(self, text: torch.Tensor, text_mask: torch.Tensor, image: torch.Tensor, image_mask: torch.Tensor | None,
                blocks: int) -> list[torch.Tensor]:
        """The text stream after co-attention blocks 1..``blocks`` (additive masks B × 1 × 1 × L; ``image_mask``
        ``None`` where no region is padding)."""
        outputs: list[torch.Tensor] = []
        t_start = v_start = 0
        for block, (v_end, t_end) in enumerate(zip(self.config.v_biattention_id, self.config.t_biattention_id)):
            for index in range(t_start, t_end):
                text = self.layer[index](text, text_mask)
            for index in range(v_start, v_end):
                image = self.v_layer[index](image, image_mask)
            connection: ConnectionLayer = self.c_layer[block]  # type: ignore[assignment]
            outputs.append(connection.text_forward(image, image_mask, text))
            if len(outputs) == blocks:
                break
            image = connection.image_forward(image, text, text_mask)  # both halves read the block's inputs
            text, t_start, v_start = outputs[-1], t_end, v_end
        return outputs


class TextEmbeddings(nn.Module):
    """LayerNorm(word + position + token type), with the task token's embedding inserted after [CLS]
    (no position or token type of its own) when the model has task tokens."""

    def __init__(self, config: VilbertConfig, task_token: bool):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        if task_token:
            self.task_embeddings = nn.Embedding(NUM_TASK_TOKENS, config.hidden_size)

    def forward(self, input_ids: torch.Tensor, task_ids: torch.Tensor | None) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        summed = self.word_embeddings(input_ids) + self.position_embeddings(positions) + self.token_type_embeddings(torch.zeros_like(input_ids))
        if task_ids is not None:
            summed = torch.cat([summed[:, :1], self.task_embeddings(task_ids)[:, None], summed[:, 1:]], dim=1)
        return self.LayerNorm(summed)


class ImageEmbeddings(nn.Module):
    """LayerNorm(Linear(region feature) + Linear(5-d location))."""

    def __init__(self, config: VilbertConfig):
        super().__init__()
        self.image_embeddings = nn.Linear(config.v_feature_size, config.v_hidden_size)
        self.image_location_embeddings = nn.Linear(LOCATION_DIM, config.v_hidden_size)
        self.LayerNorm = nn.LayerNorm(config.v_hidden_size, eps=1e-12)

    def forward(self, features: torch.Tensor, locations: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.image_embeddings(features) + self.image_location_embeddings(locations))


class Pooler(nn.Module):
    """The released ``BertTextPooler``/``BertImagePooler`` weights: kept so checkpoints load strictly; the
    score does not use them."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)


class VilbertModel(nn.Module):
    """The ``bert`` part of a vilbert-multi-task model (see the module docstring).

    >>> config = VilbertConfig(vocab_size=8, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=8,
    ...                        v_feature_size=6, v_hidden_size=4, v_num_hidden_layers=2, v_num_attention_heads=2,
    ...                        v_intermediate_size=4, bi_hidden_size=4, bi_num_attention_heads=2,
    ...                        v_biattention_id=[0, 1], t_biattention_id=[0, 1])
    >>> model = VilbertModel(config, task_token=True).eval()
    >>> ids, mask = torch.tensor([[2, 5, 3, 0]]), torch.tensor([[1, 1, 1, 0]])
    >>> with torch.inference_mode():
    ...     outputs = model(ids, mask, torch.rand(1, 3, 6), torch.rand(1, 3, 5), torch.ones(1, 3), task_id=7, blocks=2)
    >>> [tuple(h.shape) for h in outputs]     # one extra position: the task token
    [(1, 5, 8), (1, 5, 8)]
    """

    def __init__(self, config: VilbertConfig, *, task_token: bool):
        super().__init__()
        self.config = config
        self.task_token = task_token
        self.embeddings = TextEmbeddings(config, task_token)
        self.v_embeddings = ImageEmbeddings(config)
        self.encoder = Encoder(config)
        self.t_pooler = Pooler(config.hidden_size, config.bi_hidden_size)
        self.v_pooler = Pooler(config.v_hidden_size, config.bi_hidden_size)

    def forward(self, input_ids: torch.Tensor, text_mask: torch.Tensor, features: torch.Tensor, locations: torch.Tensor,
                image_mask: torch.Tensor | None, *, task_id: int | None = None, blocks: int | None = None,
                image_index: torch.Tensor | None = None) -> list[torch.Tensor]:
        """The text stream after each co-attention block 1..``blocks`` (default all), B × L' × hidden each.

        ``input_ids``/``text_mask``: B × L (``[CLS] … [SEP]``, right-padded, token type 0, positions 0..L−1);
        ``features``: N × R × v_feature_size, ``locations``: N × R × 5, ``image_mask``: N × R (``None``: no region is
        padding). ``image_index`` (B): the image of each text row, so that an image read by several texts is embedded
        once (``None``: image b for text b, N = B). With task tokens ``task_id`` is required and L' = L + 1 (the task
        token sits at index 1, always attended to).
        """
        if self.task_token != (task_id is not None):
            raise ValueError("this ViLBERT has task tokens: pass task_id" if self.task_token else "this ViLBERT has no task tokens")
        blocks = blocks or self.config.num_coattention_blocks
        if not 1 <= blocks <= self.config.num_coattention_blocks:
            raise ValueError(f"blocks must be in 1..{self.config.num_coattention_blocks}, got {blocks}")
        task_ids = None
        if task_id is not None:
            task_ids = torch.full((input_ids.shape[0],), task_id, dtype=torch.long, device=input_ids.device)
            text_mask = torch.cat([torch.ones_like(text_mask[:, :1]), text_mask], dim=1)
        text = self.embeddings(input_ids, task_ids)
        image = self.v_embeddings(features, locations)
        if image_index is not None:  # the regions' embeddings do not depend on the text: shared rows, gathered
            image = image.index_select(0, image_index)
            image_mask = None if image_mask is None else image_mask.index_select(0, image_index)
        image_additive = None if image_mask is None else additive_mask(image_mask, image.dtype)
        return self.encoder(text, additive_mask(text_mask, text.dtype), image, image_additive, blocks)


def checkpoint_layout(config: VilbertConfig, *, task_token: bool) -> dict[str, tuple[int, ...]]:
    """Every ``bert.*`` key of a released checkpoint with this architecture, and its shape (no memory allocated).

    >>> layout = checkpoint_layout(read_vilbert_config(), task_token=True)
    >>> len(layout), layout["bert.embeddings.task_embeddings.weight"]
    (520, (20, 768))
    """
    with torch.device("meta"):
        state = VilbertModel(config, task_token=task_token).state_dict()
    return {f"bert.{key}": tuple(value.shape) for key, value in state.items()}


def load_vilbert(checkpoint: str | os.PathLike, *, config: str | os.PathLike | None = None,
                 device: str | torch.device | None = None) -> VilbertModel:
    """The ViLBERT of a released checkpoint (local path or URL, downloaded once), in eval mode on ``device``,
    shared through capeval's process-wide model cache.

    Only the ``bert.*`` keys are read (task heads dropped), and they must match ``config`` exactly (default
    ``bert_base_6layer_6conect``). The model has task tokens exactly when the checkpoint has a task-token table
    (``multi_task_model.bin`` does, ``pretrained_model.bin`` does not).
    """
    architecture = read_vilbert_config(config)
    target = resolve_device(device)

    def build() -> VilbertModel:
        state = read_state_dict(checkpoint, what="ViLBERT checkpoint")
        bert = {key[len("bert."):]: value for key, value in state.items() if key.startswith("bert.")}
        if not bert:
            raise ModelUnavailableError(f"{os.fspath(checkpoint)!r} is not a vilbert-multi-task checkpoint: it has no 'bert.*' keys")
        with torch.device("meta"):
            model = VilbertModel(architecture, task_token="embeddings.task_embeddings.weight" in bert)
        model = model.to_empty(device="cpu")  # no random initialisation: every tensor comes from the file
        config_name = DEFAULT_CONFIG_NAME if config is None else os.fspath(config)
        load_checked(model, bert, what=f"ViLBERT checkpoint {os.fspath(checkpoint)!r} (its bert.* part, against the config "
                                       f"{config_name!r}; pass config= for other sizes)")
        return model.to(target).eval()

    return cached(("vilbert", os.fspath(checkpoint), architecture, str(target)), build)


def save_random_checkpoint(path: str | os.PathLike, config: VilbertConfig, *, task_token: bool = True, seed: int = 0,
                           std: float = 0.05) -> str:
    """Write a random ViLBERT in the released layout (``bert.*`` keys), loadable by :func:`load_vilbert`.

    For tests, benchmarks and offline examples; its scores mean nothing. LayerNorms are the identity, every
    other tensor is N(0, ``std``²).
    """
    generator = torch.Generator().manual_seed(seed)

    def tensor(key: str, shape: tuple[int, ...]) -> torch.Tensor:
        if ".LayerNorm" in key:
            return torch.ones(shape) if key.endswith("weight") else torch.zeros(shape)
        return torch.randn(shape, generator=generator) * std

    torch.save({key: tensor(key, shape) for key, shape in checkpoint_layout(config, task_token=task_token).items()}, path)
    return os.fspath(path)
