"""CLIP-S / RefCLIP-S (Hessel et al., EMNLP 2021) and PAC-S / RefPAC-S (Sarto et al., CVPR 2023) behind the scorer
protocol, computed as the released ``clipscore.py`` and ``pac_score.py`` compute them.

With image features ``I`` and caption features ``C`` L2-normalised in numpy (in the features' dtype, as released):

* CLIP-S = ``w * max(I·C, 0)`` (w = 2.5; PAC-S: the PAC-S checkpoint and w = 2.0);
* RefCLIP-S = ``2ab / (a + b)`` with ``a`` the CLIP-S value (already × w) and ``b`` the largest cosine between
  the caption and its references, **neither clipped at 0 nor scaled**, as released. Where ``a + b = 0`` the
  released code divides by zero; capeval gives 0 (the value ``a = 0`` gives).

Captions and references get the prefix ("A photo depicts ") and go through :mod:`capeval.backbones.clip`.

>>> import tempfile
>>> from capeval.backbones.clip import save_random_clip
>>> from PIL import Image
>>> scorer = ClipScoreScorer(model_name=save_random_clip(tempfile.mkdtemp()), device="cpu")
>>> scores = scorer.score(["a dog runs on the grass"], [["a dog on the grass", "a cat"]], images=[Image.new("RGB", (64, 48), "red")])
>>> [round(scores[column][0], 4) for column in ("clip_s", "refclip_s")]
[0.9095, 0.9305]
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import numpy as np

from ..backbones.clip import DEFAULT_MODEL, ClipEncoder, load_clip_encoder
from ..backbones.precision import DTYPES
from ..declaration import Opt
from ..finite import require_finite
from ..inputs import device_option, int_option, number_option, path_option
from ..models import model_id, resolve_device
from .options import Device, Dtype
from .protocol import CaptionScorer, Scores

#: Captions or images per forward pass.
DEFAULT_BATCH_SIZE = 64
Mode = Literal["code", "hf"]


def unit_rows(features: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norms, in the features' own dtype."""
    return features / np.sqrt(np.sum(features ** 2, axis=1, keepdims=True))


def harmonic_mean(image_scores: np.ndarray, reference_cosines: np.ndarray) -> np.ndarray:
    """``2ab / (a + b)`` element-wise; 0 where ``a + b = 0`` (where the released code divides by zero)."""
    total = image_scores + reference_cosines
    safe = np.where(total == 0, 1, total).astype(total.dtype)
    return np.where(total == 0, 0, 2 * image_scores * reference_cosines / safe).astype(total.dtype)


#: The options CLIP-S and PAC-S share.
Prefix = Annotated[str, Opt("text put before every caption and reference")]
ClipMode = Annotated[Mode, Opt("'code': the released preprocessing; 'hf': transformers' processor as is", choices=("code", "hf"))]
#: CLIP-S's precision: the released code ran float16 weights on CUDA, float32 on CPU (see the card).
ClipDtype = Annotated[str, Opt("precision of the forward passes (torch.autocast); features and scores in float32. float32: "
                               "the released CPU arithmetic (on CUDA it cast the model to float16)", choices=DTYPES)]
ImageWorkers = Annotated[int | None, Opt("processes decoding images ahead of the forward pass (DataLoader workers); "
                                         "None: up to 8 on CUDA, 0 on CPU. Scores do not depend on it")]


class ClipScoreScorer(CaptionScorer):
    """CLIP-S of each caption against its image and, when the call gives references, RefCLIP-S.

    ``model_name``: hub id or folder of a transformers ``CLIPModel`` with its tokenizer; ``w``: the scale of the
    image term; ``prefix``: put before every caption and reference (a space is added unless it ends in one; ``""``:
    none); ``mode``: ``"code"`` prepares text and images as the released code does, ``"hf"`` with transformers'
    tokenizer and image processor as they are; ``dtype``: ``"bfloat16"`` or ``"float16"`` run the forward passes
    under ``torch.autocast`` (features, normalisation and scores stay float32); ``num_workers``: processes that decode
    images while the model runs (:meth:`~capeval.backbones.clip.ClipEncoder.image_features`).
    """

    metric, title = "clip_score", "CLIP-S / RefCLIP-S"
    default_models = "`openai/clip-vit-base-patch32`, w = 2.5"
    faithful_to = 'jmhessel/clipscore\'s `clipscore.py` (`mode="code"`), to 1e-5'
    name = "clip_score"
    primary = "clip_s"
    #: The column with references (``primary`` is the one without).
    reference_column: ClassVar[str] = "refclip_s"
    column_names = ("clip_s", "refclip_s")
    needs_references = False
    references_optional = True
    needs_images = True
    value_range = (0.0, None)
    extras = ("models", "clip")

    def __init__(self, *, model_name: Annotated[str, Opt("hub id or folder of the CLIP model and its tokenizer")] = DEFAULT_MODEL,
                 w: Annotated[float, Opt("scale of the image-text cosine (the paper's w)")] = 2.5,
                 prefix: Prefix = "A photo depicts", mode: ClipMode = "code", device: Device = None,
                 dtype: ClipDtype = "float32", num_workers: ImageWorkers = None):
        self.model_name = path_option("model_name", model_name)
        self.w = number_option("w", w, low=0.0, low_open=True)
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {prefix!r} ({type(prefix).__name__})")
        self.prefix = prefix if not prefix or prefix.endswith(" ") else prefix + " "
        self.mode = mode
        self.device = resolve_device(device_option("device", device))
        self.dtype = dtype
        self.num_workers = int_option("num_workers", num_workers, minimum=0, optional=True)

    def encoder(self) -> ClipEncoder:
        """The model with its tokenizer (cached process-wide, loaded on first use)."""
        return load_clip_encoder(self.model_name, mode=self.mode, dtype=self.dtype, device=self.device)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """The image column per caption and, with references, the reference column (inputs already validated)."""
        if images is None:
            raise ValueError(f"{self.title} scores captions against images: pass images=[...] (one per caption)")
        batch_size = batch_size or DEFAULT_BATCH_SIZE
        encoder = self.encoder()
        weights = getattr(self, "checkpoint", None) or self.model_name  # PAC-S's weights replace the model's
        image_features = encoder.image_features(images, mode=self.mode, batch_size=batch_size, num_workers=self.num_workers)
        require_finite(image_features, items=lambda i: f"the image of {predictions[i]!r}", what="CLIP features", model=weights)
        texts = [self.prefix + caption for caption in predictions]
        if references is not None:
            texts += [self.prefix + reference for refs in references for reference in refs]
        text_features = encoder.text_features(texts, mode=self.mode, batch_size=batch_size)
        require_finite(text_features, items=lambda i: texts[i][len(self.prefix):], what="CLIP features", model=weights)
        image_features, text_features = unit_rows(image_features), unit_rows(text_features)
        captions = text_features[: len(predictions)]
        image_scores = self.w * np.clip(np.sum(image_features * captions, axis=1), 0, None)
        columns = {self.primary: image_scores.tolist()}
        if references is not None:
            ends = np.cumsum([len(predictions)] + [len(refs) for refs in references])
            cosines = np.array([np.max(caption.dot(text_features[start:end].T))
                                for caption, start, end in zip(captions, ends[:-1], ends[1:])])
            columns[self.reference_column] = harmonic_mean(image_scores, cosines).tolist()
        return Scores(columns)

    def options(self) -> dict[str, Any]:
        return {"model": model_id(self.model_name), "w": self.w, "prefix": self.prefix, "mode": self.mode, "dtype": self.dtype}


class PacScoreScorer(ClipScoreScorer):
    """PAC-S of each caption against its image and, when the call gives references, RefPAC-S: CLIP-S's computation
    on CLIP ViT-B/32 whose weights ``checkpoint`` (PAC-S's released ``clip_ViT-B-32.pth``) replaces, with w = 2.0.
    ``model_name`` then gives only the architecture and tokenizer."""

    metric, title = "pac_score", "PAC-S / RefPAC-S"
    default_models = "CLIP ViT-B/32 with the released PAC-S checkpoint, w = 2.0"
    faithful_to = 'aimagelab/pacscore\'s `pac_score.py` (`mode="code"`), to 1e-5'
    name = "pac_score"
    primary = "pac_s"
    reference_column = "refpac_s"
    column_names = ("pac_s", "refpac_s")

    def __init__(self, *, checkpoint: Annotated[str | None, Opt("path or URL of PAC-S's clip_ViT-B-32.pth (required to score)")] = None,
                 model_name: Annotated[str, Opt("hub id or folder of the CLIP config and tokenizer")] = DEFAULT_MODEL,
                 w: Annotated[float, Opt("scale of the image-text cosine")] = 2.0,
                 prefix: Prefix = "A photo depicts", mode: ClipMode = "code", device: Device = None,
                 dtype: Dtype = "float32", num_workers: ImageWorkers = None):
        super().__init__(model_name=model_name, w=w, prefix=prefix, mode=mode, device=device, dtype=dtype,
                         num_workers=num_workers)
        self.checkpoint = None if checkpoint is None else path_option("checkpoint", checkpoint)

    def encoder(self) -> ClipEncoder:
        if self.checkpoint is None:
            raise ValueError("PAC-S needs its fine-tuned weights: pass checkpoint= (the path or URL of the released "
                             "clip_ViT-B-32.pth) to the constructor")
        return load_clip_encoder(self.model_name, checkpoint=self.checkpoint, mode=self.mode, dtype=self.dtype, device=self.device)

    def options(self) -> dict[str, Any]:
        checkpoint = None if self.checkpoint is None else model_id(self.checkpoint)
        return {"checkpoint": checkpoint, **super().options()}
