"""UMIC (Lee et al., ACL 2021): a reference-free caption score from a fine-tuned UNITER.

UMIC = sigmoid(rank_output(pooler(h)[CLS])) over ``[CLS] caption [SEP] ; image regions``.
The pieces below follow the released code (hwanheelee1993/UMIC):

* text: each whitespace word is word-pieced separately with the cased tokenizer, words
  giving no pieces vanish, there is no truncation; the benchmark captions were lower-cased
  first, so ``lowercase=True`` is the default (the released preprocessing script behaves
  as ``lowercase=False``);
* image: the first ``clamp(#(conf > 0.2), 10, 100)`` stored regions, fp16 values cast to
  fp32, 7-d position ``norm_bb + [w·h]``;
* score: the logit's sigmoid in float64 on CPU, ``1 / (1 + exp(−x))``.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Sequence

import numpy as np
import torch

from ..backbones.common import device_batch_size, length_batches, pad_ids, pad_rows, prefetched, token_budget_batches
from ..backbones.precision import autocast_forward, reduced_precision
from ..backbones.uniter import load_uniter_scorer
from ..declaration import Opt
from ..needs import HubModel, UrlFile
from ..finite import require_finite
from ..inputs import path_option
from ..models import load_hf_tokenizer, model_id, resolve_device
from ..progress import progress
from ..vision.extractors import check_extractor, regions_for
from ..vision.regions import RegionFeatureError, RegionFeatures, require_one_per_caption
from .options import Device, Dtype, Extractor, FeatureCacheDir, TokenBudget
from .protocol import CaptionScorer, Scores

#: The released checkpoint (formerly on milabfile.snu.ac.kr) and its tokenizer.
#: Neither its host nor the authors publish a SHA-256, and none is pinned here (the file could not be fetched to
#: compute one): a download is checked only for completeness and for an HTML page in its place.
DEFAULT_CHECKPOINT = "https://archive.org/download/umic_data/umic.pt"
DEFAULT_TOKENIZER = "bert-base-cased"
#: UNITER's box selection: boxes with conf above 0.2, at least 10 and at most 100.
CONF_THRESHOLD, MIN_BOXES, MAX_BOXES = 0.2, 10, 100
#: Captions per forward pass: the released scorer's 128 on GPU; on CPU large batches are slower
#: (attention matrices fall out of cache), and 16 was fastest (measured with random UNITER-base weights).
#: Results do not depend on it beyond ~1e-7.
GPU_BATCH_SIZE, CPU_BATCH_SIZE = 128, 16


def umic_num_boxes(regions: RegionFeatures, *, threshold: float = CONF_THRESHOLD, min_boxes: int = MIN_BOXES,
                   max_boxes: int = MAX_BOXES) -> int:
    """How many leading regions UNITER takes: ``min(max, max(min, #(conf > threshold)))``,
    never more than are stored. Without ``conf`` every stored region counts (up to ``max_boxes``).

    >>> conf = np.float16([0.9] * 7 + [0.2] + [0.1] * 92)   # fp16 0.2 is 0.19995…: not above 0.2
    >>> umic_num_boxes(RegionFeatures.from_butd(np.zeros((100, 4)), np.zeros((100, 6)), conf))
    10
    """
    if regions.conf is None:
        return min(regions.num_boxes, max_boxes)
    confident = int((regions.conf > np.float32(threshold)).sum())
    return min(regions.num_boxes, max_boxes, max(min_boxes, confident))


def umic_region_batch(regions: Sequence[RegionFeatures]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The first :func:`umic_num_boxes` regions of each image as stored, zero-padded: features (B × N × D),
    ``norm_bb`` (B × N × 6), both float32, and the B × N region mask. :func:`umic_stored_inputs` then applies
    UMIC's fp16 storage, once per batch and on the model's device."""
    counts = [umic_num_boxes(region) for region in regions]
    features, mask = pad_rows([region.features[:count] for region, count in zip(regions, counts)])
    norm_bb, _ = pad_rows([region.norm_bb[:count] for region, count in zip(regions, counts)])
    return features, norm_bb, mask


def umic_stored_inputs(features: torch.Tensor, norm_bb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The region features and 7-d positions (``norm_bb`` and w·h) UMIC feeds UNITER, float32.

    Features and boxes go through fp16 as in the released img_dbs (UNITER's ``convert_imgdir.py`` stores float32
    inputs as fp16), so float32 inputs are quantised the same way; fp16 ones are unchanged; a value beyond the fp16
    range is an error. Padding (zeros) stays zero.
    """
    stored = []
    for field, values in (("features", features), ("norm_bb", norm_bb)):
        half = values.half()
        if not bool(torch.isfinite(half).all()):
            raise RegionFeatureError(f"UMIC stores region features as fp16, and some values exceed its range ±65504 "
                                     f"({field} contains NaN or infinite values)")
        stored.append(half.float())
    features, norm_bb = stored
    return features, torch.cat([norm_bb, norm_bb[..., 4:5] * norm_bb[..., 5:6]], dim=-1)


def caption_token_ids(captions: Sequence[str], tokenizer: Any, *, lowercase: bool = True) -> list[list[int]]:
    """``[CLS] + pieces + [SEP]`` per caption, each whitespace word word-pieced on its own.

    Words that yield no pieces are dropped; nothing is truncated. ``lowercase`` lower-cases
    first, as the benchmark captions were.
    """
    words = [(caption.lower() if lowercase else caption).split() for caption in captions]
    # Each distinct word is word-pieced once: a corpus repeats a few thousand words many times over.
    distinct = list(dict.fromkeys(word for caption_words in words for word in caption_words))
    pieces = dict(zip(distinct, tokenizer(distinct, add_special_tokens=False)["input_ids"] if distinct else []))
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    return [[cls, *(piece for word in caption_words for piece in pieces[word]), sep] for caption_words in words]


def umic_from_logit(logit: float) -> float:
    """The released ``1 / (1 + math.exp(−x))`` in float64 (0.0 where exp would overflow).

    >>> umic_from_logit(0.0), round(umic_from_logit(2.0), 6), umic_from_logit(-1000.0)
    (0.5, 0.880797, 0.0)
    """
    return 0.0 if -logit > 709.0 else 1.0 / (1.0 + math.exp(-logit))


class UmicScorer(CaptionScorer):
    """Holds the UNITER scorer and its tokenizer (both from capeval's process-wide cache, loaded on first use).

    ``checkpoint``: a local path or URL of ``umic.pt`` (downloaded once into the capeval cache);
    ``tokenizer``: hub id or folder of the cased BERT vocabulary; ``lowercase``: see the module doc;
    ``extractor`` / ``feature_cache_dir``: how region features are computed from ``images`` when the
    call passes no ``region_features`` (an approximation of the BUTD features UMIC was trained on).
    """

    metric, title = "umic", "UMIC"
    default_models = "UNITER-base fine-tuned (`umic.pt`), `bert-base-cased` tokenizer"
    faithful_to = "the released `compute_metric.py` and UNITER data code (lower-casing, box selection, no truncation)"
    inputs_note = "the image as BUTD region features"
    extras = ("models",)
    needs = (UrlFile(DEFAULT_CHECKPOINT, what="UMIC checkpoint", kind="weights"), HubModel(DEFAULT_TOKENIZER))
    name = primary = "umic"
    needs_references = False
    needs_images = True
    reads_region_features = True

    def __init__(self, checkpoint: Annotated[str, Opt("local path or URL of the fine-tuned UNITER `umic.pt` (downloaded once "
                                                      "into the capeval cache)", check=path_option)] = DEFAULT_CHECKPOINT,
                 tokenizer: Annotated[str, Opt("hub id or folder of the cased BERT vocabulary", check=path_option)] = DEFAULT_TOKENIZER, *,
                 lowercase: Annotated[bool, Opt("lower-case captions first, as the benchmark captions were")] = True,
                 num_attention_heads: Annotated[int | None, Opt("the checkpoint's attention heads; None: hidden size / 64",
                                                                          within="[1, inf)")] = None,
                 extractor: Extractor = None, feature_cache_dir: FeatureCacheDir = None, device: Device = None,
                 dtype: Dtype = "float32", token_budget: TokenBudget = None):
        self.checkpoint, self.tokenizer_name = checkpoint, tokenizer
        self.lowercase = lowercase
        self.num_attention_heads = num_attention_heads
        self.extractor = check_extractor(extractor)
        self.feature_cache_dir = feature_cache_dir
        self.device = resolve_device(device)
        self.dtype = dtype
        self.token_budget = token_budget

    @property
    def model(self):
        """The UNITER scorer (cached process-wide; downloaded once when ``checkpoint`` is a URL)."""
        return load_uniter_scorer(self.checkpoint, num_attention_heads=self.num_attention_heads, device=self.device)

    @property
    def tokenizer(self):
        tokenizer = load_hf_tokenizer(self.tokenizer_name, model_max_length=512, do_lower_case=False)
        vocab = self.model.uniter.embeddings.word_embeddings.num_embeddings
        if len(tokenizer) > vocab:
            raise ValueError(f"the tokenizer {self.tokenizer_name!r} has {len(tokenizer)} entries but the checkpoint's vocabulary "
                             f"has {vocab}; UMIC needs bert-base-cased (28996)")
        return tokenizer

    def token_ids(self, captions: Sequence[str]) -> list[list[int]]:
        """Model input ids per caption; a caption longer than the position table raises ``ValueError``."""
        ids = caption_token_ids(captions, self.tokenizer, lowercase=self.lowercase)
        limit = self.model.uniter.embeddings.position_embeddings.num_embeddings
        for i, seq in enumerate(ids):
            if len(seq) > limit:
                raise ValueError(f"predictions[{i}] has {len(seq)} tokens; UNITER's position table holds {limit}")
        return ids

    def logits(self, captions: Sequence[str], regions: Sequence[RegionFeatures], *, batch_size: int | None = None,
               show_progress: bool | None = None) -> list[float]:
        """The rank logit per (caption, image) pair, in input order; batches group similar lengths.

        Batches hold ``batch_size`` pairs (default 128 on GPU, as released, and 16 on CPU), or as many as fit the
        scorer's ``token_budget`` of padded text + region positions.
        """
        batch_size = device_batch_size(batch_size, self.device, gpu=GPU_BATCH_SIZE, cpu=CPU_BATCH_SIZE)
        require_one_per_caption(regions, len(captions), captions="captions")
        model = self.model
        img_dim = model.uniter.img_dim
        for i, region in enumerate(regions):
            if region.feature_dim != img_dim:
                raise ValueError(f"region_features[{i}] has {region.feature_dim}-d features; this UNITER takes {img_dim}-d (BUTD pool5)")
        ids = self.token_ids(captions)
        nbb = [umic_num_boxes(region) for region in regions]
        if self.token_budget:
            batches = token_budget_batches(range(len(ids)), self.token_budget, lambda i: (len(ids[i]), nbb[i]))
        else:
            batches = length_batches(range(len(ids)), batch_size, lambda i: len(ids[i]) + nbb[i])
        logits: list[float] = [0.0] * len(ids)
        def model_inputs(batch: list[int]) -> tuple[torch.Tensor, ...]:
            return (*pad_ids([ids[i] for i in batch]), *umic_region_batch([regions[i] for i in batch]))

        with torch.inference_mode():
            for batch, tensors in progress(prefetched(batches, model_inputs), total=len(batches), desc="UMIC", show=show_progress):
                input_ids, text_mask, img_feat, norm_bb, img_mask = (t.to(self.device) for t in tensors)
                img_feat, img_pos = umic_stored_inputs(img_feat, norm_bb)
                with autocast_forward(self.device, self.dtype):
                    out = model(input_ids, text_mask, img_feat, img_pos, img_mask)
                require_finite(out.float(), items=[captions[i] for i in batch], what="UMIC logit", model=self.checkpoint)
                for i, value in zip(batch, out.float().cpu().tolist()):
                    logits[i] = value
        return logits

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """UMIC in [0, 1] per caption (exactly 0 or 1 only for extreme logits), in input order; references are not used."""
        regions, features = regions_for("UMIC", "BUTD features", len(predictions), images=images, region_features=region_features,
                                        extractor=self.extractor, cache_dir=self.feature_cache_dir, show_progress=show_progress)
        logits = self.logits(predictions, regions, batch_size=batch_size, show_progress=show_progress)
        return Scores({"umic": [umic_from_logit(x) for x in logits]}, inputs={"features": features})

    def options(self) -> dict[str, Any]:
        heads = {} if self.num_attention_heads is None else {"num_attention_heads": self.num_attention_heads}
        return {"checkpoint": model_id(self.checkpoint), "tokenizer": model_id(self.tokenizer_name), "lowercase": self.lowercase,
                **heads, **reduced_precision(self.dtype)}
