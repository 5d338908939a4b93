"""The samples shipped with capeval: 16 Flickr8k-Expert rows, one image with its region features, and a small data
folder in AMBER's format.

The Spaces' examples and ``capeval score`` without input use them, so both run on a bare machine.

>>> len(sample_captions()), sample_image().name, sample_region_features().name
(16, 'sample_image.jpg', 'sample_image_butd.npz')
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

#: Example inputs for the sample image (written for the demos, not annotations of a dataset).
SAMPLE_IMAGE_CANDIDATES = ("two men riding horses in a dirt arena", "a dog runs across the grass")
SAMPLE_IMAGE_REFERENCES = ("two people ride horses in a dirt arena", "riders on brown horses in a ring")


def _resource(name: str) -> Path:
    return Path(str(resources.files("capeval").joinpath("resources").joinpath(name)))


def sample_captions() -> list[dict]:
    """16 Flickr8k-Expert rows (4 per human-score band): candidate, 5 references, mean expert score."""
    return json.loads(_resource("sample_captions.json").read_text(encoding="utf-8"))["rows"]


def sample_image() -> Path:
    """A 500 × 375 photo of two riders on horses in a dirt arena (QACE's sample image)."""
    return _resource("sample_image.jpg")


def sample_region_features() -> Path:
    """The sample image's bottom-up-attention features (BUTD ``.npz``: 36 boxes, 2048-d)."""
    return _resource("sample_image_butd.npz")


def sample_amber_data() -> Path:
    """A ``data/`` folder in AMBER's format written for capeval (two generative images and one discriminative
    question of its own, not AMBER's): what the amber metric's examples run on offline.

    >>> sorted(path.name for path in sample_amber_data().iterdir())
    ['annotations.json', 'metrics.txt', 'relation.json', 'safe_words.txt']
    """
    return _resource("amber_sample")
