"""Polos (Wada et al., CVPR 2024): the released Lightning checkpoint read without pytorch-lightning, and the
pieces of its forward pass (keio-smilab24/Polos, ``polos/models/estimators/polos_estimator.py``).

A released checkpoint is a PyTorch Lightning 1.2 ``.ckpt`` beside an ``hparams.yaml`` (the ``reprod.zip``
download holds both). Its ``state_dict`` holds

* ``encoder.model.*``: the SimCSE RoBERTa (frozen in training, so equal to the hub model);
* ``scalar_mix.scalar_parameters.K`` and ``scalar_mix.gamma``: the layer mix (with layer norm);
* ``ff.0.ff.linear_{1,2,3}.*``: the feed-forward head (``ff.1`` is a parameterless sigmoid);
* ``clip.*``: the frozen OpenAI CLIP ViT-B/32 in OpenAI's layout, loaded into transformers' ``CLIPModel``
  through :func:`~capeval.backbones.clip.openai_to_transformers`.

CLIP features are computed as CLIP-S's ``mode="code"`` computes them (:mod:`capeval.backbones.clip`), since the
released code runs OpenAI's ``clip`` package: its preprocess and ``clip.tokenize``.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import types
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from torch import nn

from ..atomic import partial_folder
from ..checkpoints import is_url, load_checked, resolve_checkpoint
from ..models import ModelUnavailableError, load_hf_tokenizer
from ..settings import cache_dir
from .clip import ClipEncoder, build_clip_encoder, transformers_to_openai

#: The released checkpoint (``reprod.zip``: ``reprod/*.ckpt`` and ``reprod/hparams.yaml``).
RELEASED_CHECKPOINT = "https://polos-polaris.s3.ap-northeast-1.amazonaws.com/reprod.zip"
#: The prompt the released code puts before every candidate and reference it gives CLIP.
CLIP_PROMPT = "A photo depicts "
#: Activations a Polos head may name in ``hparams.yaml`` (the released code takes any ``torch.nn`` one by name).
HEAD_ACTIVATIONS = ("Tanh", "Sigmoid", "ReLU", "GELU", "SiLU", "ELU", "LeakyReLU", "Softplus")


# --------------------------------------------------------------------------- reading the released files


class _Opaque(dict):
    """Stands in for any class a Lightning checkpoint pickles besides tensors (``AttributeDict`` hyper-parameters,
    callback states): it is built and filled without running the class's code."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def __setstate__(self, state: Any) -> None:
        pass


#: Globals a checkpoint may really load: tensor rebuilding and ordered dicts (the rest become ``_Opaque``).
_TENSOR_GLOBALS = {("collections", "OrderedDict"), ("torch._utils", "_rebuild_tensor_v2"),
                   ("torch._utils", "_rebuild_parameter"), ("torch", "Size")}


class _StateDictUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _TENSOR_GLOBALS or (module == "torch" and name.endswith("Storage")):
            return super().find_class(module, name)
        return _Opaque


_PICKLE_MODULE = types.ModuleType("capeval_state_dict_pickle")
_PICKLE_MODULE.Unpickler = _StateDictUnpickler  # type: ignore[attr-defined]
_PICKLE_MODULE.load = lambda file, **kwargs: _StateDictUnpickler(file, **kwargs).load()  # type: ignore[attr-defined]


def read_lightning_state_dict(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """The ``state_dict`` of a PyTorch Lightning checkpoint, without pytorch-lightning installed and without
    running code from the file (objects other than tensors are read as inert placeholders)."""
    try:
        checkpoint = torch.load(path, map_location="cpu", pickle_module=_PICKLE_MODULE, weights_only=False)
    except Exception as error:  # torch raises many types for a corrupt or non-torch file
        raise ModelUnavailableError(f"The Polos checkpoint {str(path)!r} is not a readable torch checkpoint "
                                    f"({type(error).__name__}: {error})") from error
    state = checkpoint.get("state_dict") if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelUnavailableError(f"The Polos checkpoint {str(path)!r} holds no Lightning 'state_dict' of tensors")
    return dict(state)


def _extracted(archive: Path) -> Path:
    """The folder in capeval's cache that a ``.zip`` (downloaded or local) is extracted into, once."""
    stat = archive.stat()
    key = hashlib.sha256(f"{archive.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    target = cache_dir() / "extracted" / key
    if not target.is_dir():
        with zipfile.ZipFile(archive) as zipped, partial_folder(target, overwrite=True) as folder:
            zipped.extractall(folder)
    return target


def checkpoint_files(source: str | os.PathLike) -> tuple[Path, Path]:
    """The ``.ckpt`` and its ``hparams.yaml`` for ``source``: a ``.ckpt`` file, a folder holding one, or a
    ``.zip`` of such a folder (a local file or a URL, downloaded and extracted once)."""
    text = os.fspath(source)
    if is_url(text) or text.endswith(".zip"):
        archive = resolve_checkpoint(text, what="Polos checkpoint archive")
        if not zipfile.is_zipfile(archive):
            raise ModelUnavailableError(f"{text!r} is not a zip archive like the released reprod.zip; pass that, the folder "
                                        "it unpacks to, or a .ckpt with hparams.yaml beside it")
        path = _extracted(archive)
    else:
        path = Path(text).expanduser()
    if path.is_dir():
        found = sorted(path.rglob("*.ckpt"))
        if len(found) != 1:
            raise ModelUnavailableError(f"The Polos checkpoint folder {str(path)!r} holds {len(found)} .ckpt files "
                                        f"({[p.name for p in found][:5]}); pass the one to use")
        path = found[0]
    if not path.is_file():
        raise ModelUnavailableError(f"The Polos checkpoint {str(path)!r} does not exist")
    hparams = path.with_name("hparams.yaml")
    if not hparams.is_file():
        raise ModelUnavailableError(f"The Polos checkpoint {str(path)!r} has no hparams.yaml beside it (the released "
                                    "layout keeps both in one folder)")
    return path, hparams


@dataclass(frozen=True)
class PolosHparams:
    """What ``hparams.yaml`` says about the forward pass. capeval reproduces the released configuration
    (``layer: mix``, ``pool: cls``, ``final_activation: False``); other values are refused."""

    pretrained_model: str
    #: The head's hidden activation (``Tanh`` in the release).
    activation: str
    #: The batch size ``predict`` uses when given none (the training batch size).
    batch_size: int

    @classmethod
    def read(cls, path: Path) -> "PolosHparams":
        import yaml

        try:
            values = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise ModelUnavailableError(f"{str(path)!r} is not readable YAML ({error})") from error
        if not isinstance(values, dict):
            raise ModelUnavailableError(f"{str(path)!r} is not a mapping of hyper-parameters")
        # Missing keys take the released ModelConfig defaults.
        released = {"model": "PolosEstimator", "layer": "mix", "pool": "cls", "final_activation": False}
        found = {"model": values.get("model"), "layer": values.get("layer", "mix"), "pool": values.get("pool", "avg"),
                 "final_activation": values.get("final_activation", "Sigmoid")}
        if found != released:
            raise ModelUnavailableError(f"{str(path)!r} describes {found}; capeval reproduces the released {released}")
        activation = values.get("activations", "Tanh")
        if activation not in HEAD_ACTIVATIONS:
            raise ModelUnavailableError(f"{str(path)!r} names the activation {activation!r}; capeval supports {HEAD_ACTIVATIONS}")
        return cls(str(values.get("pretrained_model", "princeton-nlp/sup-simcse-roberta-base")), activation,
                   int(values.get("batch_size", 8)))


# --------------------------------------------------------------------------- the scoring head


class ScalarMix(nn.Module):
    """``gamma · Σ_k softmax(w)_k · (h_k − μ_k) / sqrt(σ²_k + 1e-12)``, with μ_k and σ²_k one scalar each over
    every non-pad position and hidden unit of a group of texts (the texts encoded together)."""

    def __init__(self, num_layers: int):
        super().__init__()
        self.scalar_parameters = nn.ParameterList([nn.Parameter(torch.zeros(1)) for _ in range(num_layers)])
        self.gamma = nn.Parameter(torch.ones(1))

    def mix_first_tokens(self, first: torch.Tensor, count: torch.Tensor, total: torch.Tensor,
                         squares: torch.Tensor) -> torch.Tensor:
        """The mixed first-token vectors of G texts (``first``: G × K × H), each normalised with the statistics
        of the group it was encoded in: the group's element ``count`` (G,) and per-layer ``total`` and
        ``squares`` (G × K), float64. The variance is ``Σ(h − μ)² / n``, as the released two-pass formula."""
        mean = total / count[:, None]
        variance = (squares / count[:, None] - mean**2).clamp_min(0.0)
        normed = (first.double() - mean[..., None]) / torch.sqrt(variance + 1e-12)[..., None]
        # The statistics stay on the CPU (in float64) wherever the model runs.
        weights = torch.softmax(torch.cat(list(self.scalar_parameters)), dim=0).double().to(first.device)
        return (self.gamma.double().to(first.device) * torch.einsum("k,gkh->gh", weights, normed)).float()


class PolosHead(nn.Module):
    """The layer mix and the feed-forward head ``ff.0.ff.linear_{1,2,3}`` (sizes read from the weights): linear
    layers with the hidden activation between them, then a sigmoid."""

    def __init__(self, num_layers: int, sizes: Sequence[int], activation: str):
        super().__init__()
        self.scalar_mix = ScalarMix(num_layers)
        layers: list[nn.Module] = []
        for width_in, width_out in zip(sizes, sizes[1:]):
            layers += [nn.Linear(width_in, width_out), getattr(nn, activation)()]
        layers[-1] = nn.Sigmoid()
        self.ff = nn.Sequential(*layers)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.ff(features).squeeze(-1)


def polos_features(m: torch.Tensor, r: torch.Tensor, image: torch.Tensor, text: torch.Tensor,
                   reference: torch.Tensor) -> torch.Tensor:
    """The head's input for (candidate, reference) pairs: ``[r, m, |m−r|, m⊙r, I, T, |I−T|, I⊙T, |R−T|, R⊙T]``
    (RoBERTa vectors ``m``, ``r``; unnormalised CLIP image ``I``, candidate ``T`` and reference ``R`` features)."""
    return torch.cat([r, m, (m - r).abs(), m * r, image, text, (image - text).abs(), image * text,
                      (reference - text).abs(), reference * text], dim=1)


def head_state(state: dict[str, torch.Tensor], hparams: PolosHparams) -> tuple[PolosHead, dict[str, torch.Tensor]]:
    """The head built to the checkpoint's shapes, and the checkpoint's tensors for it (under the head's names)."""
    linears = sorted({key.split(".")[3] for key in state if key.startswith("ff.0.ff.linear_")}, key=lambda n: int(n.split("_")[1]))
    if not linears:
        raise ModelUnavailableError("The Polos checkpoint has no feed-forward head (ff.0.ff.linear_*)")
    sizes = [state[f"ff.0.ff.{linears[0]}.weight"].shape[1], *(state[f"ff.0.ff.{name}.weight"].shape[0] for name in linears)]
    num_layers = sum(key.startswith("scalar_mix.scalar_parameters.") for key in state)
    head = PolosHead(num_layers, sizes, hparams.activation)
    linear_modules = [name for name, module in head.ff.named_children() if isinstance(module, nn.Linear)]
    renamed = {f"ff.{ours}.{kind}": state[f"ff.0.ff.{theirs}.{kind}"]
               for ours, theirs in zip(linear_modules, linears) for kind in ("weight", "bias")}
    renamed.update({key: value for key, value in state.items()
                    if key.startswith("scalar_mix.") and key.split(".")[1] in ("scalar_parameters", "gamma")})
    return head, renamed


@dataclass
class PolosModel:
    """Everything Polos' forward pass needs: the RoBERTa (with the checkpoint's weights), its tokenizer, the head
    and the CLIP."""

    encoder: nn.Module
    tokenizer: Any
    head: PolosHead
    hparams: PolosHparams
    clip: ClipEncoder


def load_polos(checkpoint: str, text_model: str | None, clip_model: str, device: torch.device) -> PolosModel:
    """The checkpoint's RoBERTa, ScalarMix, head and CLIP; ``text_model`` (default: the checkpoint's
    ``pretrained_model``) gives the RoBERTa's config and tokenizer, ``clip_model`` the CLIP's, the checkpoint their
    weights (``clip_model``'s own CLIP weights serve only a checkpoint without ``clip.*`` tensors)."""
    from transformers import AutoConfig, AutoModel

    from ..models import load_pretrained

    ckpt, hparams_path = checkpoint_files(checkpoint)
    hparams = PolosHparams.read(hparams_path)
    state = read_lightning_state_dict(ckpt)
    name = text_model or hparams.pretrained_model
    encoder = AutoModel.from_config(load_pretrained(AutoConfig, name, what="text model config"), add_pooling_layer=False)
    encoder_state = {key.removeprefix("encoder.model."): value for key, value in state.items()
                     if key.startswith("encoder.model.") and not key.startswith("encoder.model.pooler.")}
    expected = encoder.state_dict()
    # Older transformers saved the position-id buffer; it holds 0..n-1 either way.
    encoder_state = {key: value for key, value in encoder_state.items() if key in expected or not key.endswith("position_ids")}
    load_checked(encoder, encoder_state, what=f"Polos checkpoint's text encoder (for {name!r})")
    head, head_tensors = head_state(state, hparams)
    load_checked(head, head_tensors, what="Polos checkpoint's head")
    if len(head.scalar_mix.scalar_parameters) != encoder.config.num_hidden_layers + 1:
        raise ModelUnavailableError(f"the checkpoint mixes {len(head.scalar_mix.scalar_parameters)} hidden states but "
                                    f"{name!r} has {encoder.config.num_hidden_layers + 1}")
    tokenizer = load_hf_tokenizer(name)
    clip_state = {key.removeprefix("clip."): value for key, value in state.items() if key.startswith("clip.")}
    clip = build_clip_encoder(clip_model, openai_state=clip_state or None, device=device,
                              what=f"Polos checkpoint's CLIP (clip.* tensors, for {clip_model!r})")
    return PolosModel(encoder.to(device).eval(), tokenizer, head.to(device).eval(), hparams, clip)


# --------------------------------------------------------------------------- a random stand-in (examples, tests)


def save_random_polos(folder: str | os.PathLike, text_model: str, clip_model: str, *, seed: int = 0,
                      hidden_sizes: Sequence[int] = (64, 32), batch_size: int = 8, clip_tensors: bool = True) -> str:
    """A Polos checkpoint in the released layout (``folder/polos.ckpt`` beside ``folder/hparams.yaml``): the
    weights of ``text_model`` (a transformers folder) under ``encoder.model.*``, a random ScalarMix and head
    sized for it and ``clip_model`` (a transformers CLIP folder), and, with ``clip_tensors``, ``clip_model``'s
    weights under ``clip.*`` in OpenAI's layout. Returns the ``.ckpt``."""
    import argparse

    from transformers import AutoConfig, AutoModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    encoder = AutoModel.from_pretrained(text_model)
    clip = AutoModel.from_pretrained(clip_model)
    generator = torch.Generator().manual_seed(seed)
    layers = encoder.config.num_hidden_layers + 1
    sizes = [4 * encoder.config.hidden_size + 6 * AutoConfig.from_pretrained(clip_model).projection_dim, *hidden_sizes, 1]
    state = {f"encoder.model.{key}": value for key, value in encoder.state_dict().items()}
    state.update({f"scalar_mix.scalar_parameters.{k}": torch.randn(1, generator=generator) for k in range(layers)})
    state.update({"scalar_mix.gamma": 1.0 + 0.5 * torch.rand(1, generator=generator),
                  "scalar_mix.dropout_mask": torch.zeros(layers), "scalar_mix.dropout_fill": torch.full((layers,), -1e20)})
    for k, (width_in, width_out) in enumerate(zip(sizes, sizes[1:]), start=1):
        bound = width_in**-0.5
        state[f"ff.0.ff.linear_{k}.weight"] = (torch.rand(width_out, width_in, generator=generator) * 2 - 1) * bound
        state[f"ff.0.ff.linear_{k}.bias"] = (torch.rand(width_out, generator=generator) * 2 - 1) * bound
    if clip_tensors:
        state.update({f"clip.{key}": value for key, value in transformers_to_openai(clip.state_dict()).items()})
    hparams = {"model": "PolosEstimator", "encoder_model": "BERT", "pretrained_model": str(text_model), "layer": "mix",
               "pool": "cls", "activations": "Tanh", "final_activation": False,
               "hidden_sizes": ",".join(map(str, hidden_sizes)), "batch_size": batch_size}
    # Lightning pickles its hyper-parameters as an object of its own: a Namespace stands in for it.
    torch.save({"epoch": 0, "pytorch-lightning_version": "1.2.0", "state_dict": state,
                "hyper_parameters": argparse.Namespace(**hparams)}, folder / "polos.ckpt")
    import yaml

    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    return str(folder / "polos.ckpt")
