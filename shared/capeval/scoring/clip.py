"""CLIP-S / RefCLIP-S (Hessel et al., EMNLP 2021), PAC-S / RefPAC-S (Sarto et al., CVPR 2023) and PAC-S++ /
RefPAC-S++ (Sarto et al., IJCV 2025) behind the scorer protocol, computed as the released ``clipscore.py`` and
``pac_score.py`` compute them (PAC-S++ with the weights ``compute_correlations_pac++.py`` loads).

With image features ``I`` and caption features ``C`` L2-normalised in numpy (in the features' dtype, as released):

* CLIP-S = ``w * max(I·C, 0)`` (w = 2.5; PAC-S: the PAC-S checkpoint and w = 2.0);
* RefCLIP-S = ``2ab / (a + b)`` with ``a`` the CLIP-S value (already × w) and ``b`` the largest cosine between
  the caption and its references, **neither clipped at 0 nor scaled**, as released. Where ``a + b = 0`` the
  released code divides by zero; capeval gives 0 (the value ``a = 0`` gives).

Captions and references get the prefix ("A photo depicts ") and go through :mod:`capeval.backbones.clip`, cut to
the text tower's context (77 ids; LongCLIP 248) as released: :func:`report_truncation` counts the cut texts per
caption (the details' ``truncated_texts``) and names them in one :class:`TextTruncationWarning`.

>>> import tempfile
>>> from capeval.backbones.clip import save_random_clip
>>> from PIL import Image
>>> scorer = ClipScoreScorer(model_name=save_random_clip(tempfile.mkdtemp()), device="cpu")
>>> scores = scorer.score(["a dog runs on the grass"], [["a dog on the grass", "a cat"]], images=[Image.new("RGB", (64, 48), "red")])
>>> [round(scores[column][0], 4) for column in ("clip_s", "refclip_s")]
[0.9095, 0.9305]
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any, ClassVar, Literal, Sequence

import numpy as np

from ..backbones.clip import DEFAULT_MODEL, ClipEncoder, PixelStatistics, load_clip_encoder
from ..backbones.precision import DTYPES
from ..declaration import Opt
from ..finite import require_finite, unit_rows
from ..needs import HubModel, Need, NotPublic
from ..inputs import path_option
from ..models import ModelUnavailableError, cached, load_pretrained, model_id, resolve_device
from .options import Device, Dtype
from .protocol import CaptionScorer, NotedWarning, Scores

#: Captions or images per forward pass.
DEFAULT_BATCH_SIZE = 64
Mode = Literal["code", "hf"]


def harmonic_mean(image_scores: np.ndarray, reference_cosines: np.ndarray) -> np.ndarray:
    """``2ab / (a + b)`` element-wise; 0 where ``a + b = 0`` (where the released code divides by zero)."""
    total = image_scores + reference_cosines
    safe = np.where(total == 0, 1, total).astype(total.dtype)
    return np.where(total == 0, 0, 2 * image_scores * reference_cosines / safe).astype(total.dtype)


class TextTruncationWarning(NotedWarning):
    """Captions or references longer than the CLIP text encoder's context were cut to it."""


def report_truncation(cut_captions: Sequence[bool], cut_references: Sequence[bool], references: Sequence[Sequence[str]] | None,
                      *, context_length: int, metric: str) -> tuple[list[int], str]:
    """Per caption, how many of its texts were cut to the text encoder's context: the caption itself and each of its
    references (``cut_references``: one flag per reference, flattened in order); and the scores' note saying so in
    one line ('' when nothing was cut). One :class:`TextTruncationWarning` names every cut text
    (``predictions[i]``, ``references[i][j]``) when any was.

    >>> report_truncation([False, True], [True, False, False], [["a"], ["b", "c"]], context_length=77, metric="CLIP-S")
    ([1, 1], "CLIP-S: 2 text(s) of 2 of 2 captions longer than the CLIP text encoder's 77-token context were cut to it, as the released code cuts them (per caption: truncated_texts)")
    """
    counts = [int(cut) for cut in cut_captions]
    names = [f"predictions[{i}]" for i, cut in enumerate(cut_captions) if cut]
    if references is not None:
        positions = [(i, j) for i, refs in enumerate(references) for j in range(len(refs))]
        for (i, j), cut in zip(positions, cut_references, strict=True):
            counts[i] += int(cut)
            if cut:
                names.append(f"references[{i}][{j}]")
    if names:
        warnings.warn(f"{metric}: {len(names)} text(s) longer than the CLIP text encoder's {context_length}-token context "
                      f"were cut to it, as the released code cuts them ('truncated_texts' in the details counts them per "
                      f"caption; LongCLIP's 248 positions hold longer text): {', '.join(names)}", TextTruncationWarning, stacklevel=3)
    note = "" if not names else (f"{metric}: {len(names)} text(s) of {sum(map(bool, counts))} of {len(counts)} captions longer "
                                 f"than the CLIP text encoder's {context_length}-token context were cut to it, as the released "
                                 "code cuts them (per caption: truncated_texts)")
    return counts, note


#: The options CLIP-S and PAC-S share.
Prefix = Annotated[str, Opt("text put before every caption and reference")]
ClipMode = Annotated[Mode, Opt("'code': the released preprocessing; 'hf': transformers' processor as is", choices=("code", "hf"))]
#: CLIP-S's precision: the released code ran float16 weights on CUDA, float32 on CPU (see the card).
ClipDtype = Annotated[str, Opt("precision of the forward passes (torch.autocast); features and scores in float32. float32: "
                               "the released CPU arithmetic (on CUDA it cast the model to float16)", choices=DTYPES)]
ImageWorkers = Annotated[int | None, Opt("processes decoding images ahead of the forward pass (DataLoader workers); "
                                         "None: up to 8 on CUDA, 0 on CPU. Scores do not depend on it", within="[0, inf)")]


class ClipScoreScorer(CaptionScorer):
    """CLIP-S of each caption against its image and, when the call gives references, RefCLIP-S.

    ``model_name``: hub id or folder of a transformers ``CLIPModel`` with its tokenizer (ViT-B/32 by default,
    ``openai/clip-vit-large-patch14``, a LongCLIP in transformers' layout); ``checkpoint``: a ``torch.save`` file whose
    OpenAI-layout state dict replaces the model's weights (LongCLIP's released ``longclip-B.pt`` / ``longclip-L.pt``
    on ``openai/clip-vit-base-patch16`` / ``openai/clip-vit-large-patch14``); ``w``: the scale of the image term;
    ``prefix``: put before every caption and reference (a space is added unless it ends in one; ``""``: none);
    ``mode``: ``"code"`` prepares text and images as the released code does, ``"hf"`` with transformers' tokenizer
    and image processor as they are; ``dtype``: ``"bfloat16"`` or ``"float16"`` run the forward passes under
    ``torch.autocast`` (features, normalisation and scores stay float32); ``num_workers``: processes that decode
    images while the model runs (:meth:`~capeval.backbones.clip.ClipEncoder.image_features`).

    Texts longer than the text tower's context (77 ids; LongCLIP 248) are cut to it as the released code cuts them;
    the details' ``truncated_texts`` counts the cut texts of each caption and a :class:`TextTruncationWarning` names
    them.
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
    needs: ClassVar[tuple[Need, ...]] = (HubModel(DEFAULT_MODEL),)

    def __init__(self, *, model_name: Annotated[str, Opt("hub id or folder of the CLIP model and its tokenizer", check=path_option)] = DEFAULT_MODEL,
                 checkpoint: Annotated[str | None, Opt("path or URL of a torch.save file whose OpenAI-layout state dict "
                                                       "replaces model_name's weights (e.g. LongCLIP's longclip-L.pt); None: "
                                                       "model_name's own", check=path_option)] = None,
                 w: Annotated[float, Opt("scale of the image-text cosine (the paper's w)", within="(0, inf)")] = 2.5,
                 prefix: Prefix = "A photo depicts", mode: ClipMode = "code", device: Device = None,
                 dtype: ClipDtype = "float32", num_workers: ImageWorkers = None):
        self.model_name, self.checkpoint, self.w = model_name, checkpoint, w
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {prefix!r} ({type(prefix).__name__})")
        self.prefix = prefix if not prefix or prefix.endswith(" ") else prefix + " "
        self.mode = mode
        self.device = resolve_device(device)
        self.dtype = dtype
        self.num_workers = num_workers

    @property
    def encoder(self) -> ClipEncoder:
        """The model with its tokenizer (cached process-wide, loaded on first use)."""
        return load_clip_encoder(self.model_name, checkpoint=self.checkpoint, mode=self.mode, dtype=self.dtype, device=self.device)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """The image column per caption and, with references, the reference column (inputs already validated); the
        details' ``truncated_texts`` per caption."""
        if images is None:
            raise ValueError(f"{self.title} scores captions against images: pass images=[...] (one per caption)")
        batch_size = batch_size or DEFAULT_BATCH_SIZE
        encoder = self.encoder
        weights = self.checkpoint or self.model_name
        image_features = encoder.image_features(images, mode=self.mode, batch_size=batch_size, num_workers=self.num_workers)
        require_finite(image_features, items=lambda i: f"the image of {predictions[i]!r}", what="CLIP features", model=weights)
        texts = [self.prefix + caption for caption in predictions]
        if references is not None:
            texts += [self.prefix + reference for refs in references for reference in refs]
        text_features = encoder.text_features(texts, mode=self.mode, batch_size=batch_size)
        require_finite(text_features, items=lambda i: texts[i][len(self.prefix):], what="CLIP features", model=weights)
        cut = encoder.truncated(texts, mode=self.mode)
        truncated, note = report_truncation(cut[: len(predictions)], cut[len(predictions):], references,
                                            context_length=encoder.context_length, metric=self.title)
        image_features = unit_rows(image_features, items=lambda i: f"the image of {predictions[i]!r}", what="CLIP features", model=weights)
        text_features = unit_rows(text_features, items=lambda i: texts[i][len(self.prefix):], what="CLIP features", model=weights)
        captions = text_features[: len(predictions)]
        image_scores = self.w * np.clip(np.sum(image_features * captions, axis=1), 0, None)
        columns = {self.primary: image_scores.tolist()}
        if references is not None:
            ends = np.cumsum([len(predictions)] + [len(refs) for refs in references])
            cosines = np.array([np.max(caption.dot(text_features[start:end].T))
                                for caption, start, end in zip(captions, ends[:-1], ends[1:])])
            columns[self.reference_column] = harmonic_mean(image_scores, cosines).tolist()
        return Scores(columns, details={"truncated_texts": truncated}, note=note)

    def options(self) -> dict[str, Any]:
        checkpoint = {} if self.checkpoint is None else {"checkpoint": model_id(self.checkpoint)}
        return {"model": model_id(self.model_name), **checkpoint, "w": self.w, "prefix": self.prefix, "mode": self.mode,
                "dtype": self.dtype}


#: PAC-S++'s released checkpoints (the pacscore README's links), by the transformers id of the CLIP they fine-tune.
PAC_PLUS_PLUS_CHECKPOINTS = {
    "openai/clip-vit-base-patch32": "https://ailb-web.ing.unimore.it/publicfiles/pac++/PAC++_clip_ViT-B-32.pth",
    "openai/clip-vit-large-patch14": "https://ailb-web.ing.unimore.it/publicfiles/pac++/PAC++_clip_ViT-L-14.pth",
}
#: How PAC-S's released compute_metrics.py normalises images for its OpenCLIP ViT-L/14 checkpoint: with open_clip's
#: mean and std of ViT-L-14 ``laion2b_s32b_b82k`` (its pretrained configuration), 0.5 for every channel.
OPEN_CLIP_PIXELS = PixelStatistics(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
Variant = Literal["pac-s", "pac-s++"]


def is_open_clip(model_name: str) -> bool:
    """Whether ``model_name``'s CLIP was trained with OpenCLIP (its towers use GELU; OpenAI's use quick GELU)."""
    from transformers import CLIPConfig

    config = cached(("clip-config", str(model_name)), lambda: load_pretrained(CLIPConfig, model_name, what="CLIP config"))
    return config.text_config.hidden_act == "gelu"


class PacScoreScorer(ClipScoreScorer):
    """PAC-S of each caption against its image and, when the call gives references, RefPAC-S: CLIP-S's computation
    with w = 2.0 on a CLIP whose weights the released checkpoint gives, as aimagelab/pacscore loads them.

    ``variant="pac-s"`` (Sarto et al., CVPR 2023): ``checkpoint`` (``clip_ViT-B-32.pth``, or
    ``openClip_ViT-L-14.pth`` on ``model_name="laion/CLIP-ViT-L-14-laion2B-s32B-b82K"``, whose images the released
    code normalises with open_clip's 0.5 mean and std: :data:`OPEN_CLIP_PIXELS`) replaces every weight.
    ``variant="pac-s++"`` (Sarto et al., IJCV 2025): the checkpoint is OpenAI CLIP with rank-4 LoRA factors, applied
    as the released loading path applies them (:func:`~capeval.backbones.clip.fold_pac_lora`); without
    ``checkpoint`` the published file for ``model_name`` (ViT-B/32 or ViT-L/14: :data:`PAC_PLUS_PLUS_CHECKPOINTS`),
    downloaded once. ``model_name`` gives the architecture and tokenizer only."""

    metric, title = "pac_score", "PAC-S / RefPAC-S"
    needs = (HubModel(DEFAULT_MODEL), NotPublic("PAC-S's clip_ViT-B-32.pth (no public download)",
                                                how="pass checkpoint=PATH to the file aimagelab/pacscore's README links"))
    default_models = "CLIP ViT-B/32 with the released PAC-S checkpoint, w = 2.0"
    faithful_to = 'aimagelab/pacscore\'s `pac_score.py` (`mode="code"`), to 1e-5'
    name = "pac_score"
    primary = "pac_s"
    reference_column = "refpac_s"
    column_names = ("pac_s", "refpac_s")

    def __init__(self, *, variant: Annotated[Variant, Opt("'pac-s': PAC-S (CVPR 2023), a fine-tuned CLIP; 'pac-s++': "
                                                          "PAC-S++ (IJCV 2025), CLIP with rank-4 LoRA adapters",
                                                          choices=("pac-s", "pac-s++"))] = "pac-s",
                 checkpoint: Annotated[str | None, Opt("path or URL of the released weights: PAC-S's clip_ViT-B-32.pth "
                                                       "(required for pac-s); for pac-s++ None is the published "
                                                       "PAC++_clip_ViT-B-32.pth or PAC++_clip_ViT-L-14.pth of model_name", check=path_option)] = None,
                 model_name: Annotated[str, Opt("hub id or folder of the CLIP config and tokenizer", check=path_option)] = DEFAULT_MODEL,
                 w: Annotated[float, Opt("scale of the image-text cosine", within="(0, inf)")] = 2.0,
                 prefix: Prefix = "A photo depicts", mode: ClipMode = "code", device: Device = None,
                 dtype: Dtype = "float32", num_workers: ImageWorkers = None):
        super().__init__(model_name=model_name, checkpoint=checkpoint, w=w, prefix=prefix, mode=mode, device=device,
                         dtype=dtype, num_workers=num_workers)
        self.variant = variant
        if variant == "pac-s++" and self.checkpoint is None:
            if self.model_name not in PAC_PLUS_PLUS_CHECKPOINTS:
                published = ", ".join(f"{name!r} ({url})" for name, url in PAC_PLUS_PLUS_CHECKPOINTS.items())
                raise ValueError(f"PAC-S++ checkpoints are published for {published}: pass one of these model_name values, "
                                 f"or checkpoint= the path or URL of the PAC-S++ weights for model_name={self.model_name!r}")
            self.checkpoint = PAC_PLUS_PLUS_CHECKPOINTS[self.model_name]

    @property
    def encoder(self) -> ClipEncoder:
        """The fine-tuned model with its tokenizer (cached process-wide, loaded on first use)."""
        if self.checkpoint is None:
            # The weights are missing (not a bad value): the error every surface reports as such (a Space up front).
            raise ModelUnavailableError("PAC-S needs its fine-tuned weights: pass checkpoint= (the path or URL of the released "
                             "clip_ViT-B-32.pth) to the constructor, or variant='pac-s++' for PAC-S++'s published weights")
        lora = self.variant == "pac-s++"
        pixels = OPEN_CLIP_PIXELS if not lora and self.mode == "code" and is_open_clip(self.model_name) else None
        return load_clip_encoder(self.model_name, checkpoint=self.checkpoint, lora=lora, pixel_statistics=pixels,
                                 mode=self.mode, dtype=self.dtype, device=self.device)

    def options(self) -> dict[str, Any]:
        options = super().options()
        return {"checkpoint": options.pop("checkpoint", None), **options, "variant": self.variant}
