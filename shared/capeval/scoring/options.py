"""The declarations (:class:`~capeval.declaration.Opt`) of the options several scorers share, so that each one reads
the same everywhere: ``device: Device = None``."""

from __future__ import annotations

import os
from typing import Annotated

import torch

from ..backbones.precision import DTYPES
from ..declaration import Opt
from ..inputs import device_option
from ..vision.extractors import RegionExtractor

#: Where a model scorer runs (checked by :func:`capeval.inputs.device_option`).
Device = Annotated[str | torch.device | None, Opt("where the models run: `cpu`, `cuda` or `cuda:N`; None: CUDA when available",
                                                  check=device_option)]
#: How an image scorer gets region features from ``images`` (checked by :func:`capeval.vision.extractors.check_extractor`).
Extractor = Annotated[RegionExtractor | None, Opt("computes region features from `images` when a call gives no `region_features` "
                                                  "(an approximation of the features the model was trained on); "
                                                  "None: detectron2's BUTD")]
FeatureCacheDir = Annotated[str | os.PathLike | None, Opt("folder caching the region features computed from images; None: no cache")]
#: The precision of a model scorer's forward pass (checked by :func:`capeval.backbones.precision.autocast_forward`).
Dtype = Annotated[str, Opt("precision of the model's forward pass (torch.autocast); scores are computed in float32 after. "
                           "float32: the released arithmetic", choices=DTYPES)]
#: Batching by padded size instead of count (:func:`capeval.backbones.common.token_budget_batches`).
TokenBudget = Annotated[int | None, Opt("padded text + image positions per forward pass: batches are packed to it, long inputs "
                                        "in small batches and short ones in large; None: a fixed batch_size", within="[1, inf)")]
