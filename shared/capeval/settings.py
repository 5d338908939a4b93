"""capeval's settings, read from the environment in one place.

- ``CAPEVAL_CACHE``: where URL checkpoints and extracted region features are cached
  (default ``~/.cache/capeval``).
- ``CAPEVAL_DATA``: where the benchmarks capeval does not ship (Polaris, Nebula, FOIL, LongCap-Arena) keep
  their released files, one folder per benchmark (default ``<CAPEVAL_CACHE>/data``).
- Offline mode: ``CAPEVAL_OFFLINE=1``, or HuggingFace's own ``HF_HUB_OFFLINE=1`` /
  ``TRANSFORMERS_OFFLINE=1``; then nothing is downloaded and a missing checkpoint raises
  :class:`capeval.models.ModelUnavailableError` saying how to provide it.
- ``CAPEVAL_PROGRESS=0``: no progress bars (on by default for runs longer than a second).
- ``CAPEVAL_ENCODING_CACHE_MB``: how much memory each text encoder may keep for sentences it encoded
  before, and the text metrics for what they computed (tokenizations, n-gram indexes: ``capeval.text.call_cache``)
  (default 1024; 0 turns the caches off), so repeated evaluations re-encode and re-count only new captions.

Each is read when asked for, so a change of the environment takes effect on the next call.
"""

from __future__ import annotations

import os
from pathlib import Path

OFFLINE_VARIABLES = ("CAPEVAL_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_TRUE = {"1", "true", "yes", "on"}


def cache_dir() -> Path:
    """The root of capeval's own on-disk cache."""
    return Path(os.environ.get("CAPEVAL_CACHE") or Path.home() / ".cache" / "capeval").expanduser()


def benchmark_data_dir() -> Path:
    """The folder holding one folder of released files per downloaded benchmark (``CAPEVAL_DATA``)."""
    return Path(os.environ.get("CAPEVAL_DATA") or cache_dir() / "data").expanduser()


def offline() -> bool:
    """Whether downloads are forbidden (any of :data:`OFFLINE_VARIABLES` set to 1/true/yes/on)."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_VARIABLES)


def progress_default() -> bool:
    """Whether progress bars show when a call does not say (``CAPEVAL_PROGRESS``, default on)."""
    return os.environ.get("CAPEVAL_PROGRESS", "1").strip().lower() not in {"0", "false", "no", "off", ""}


def encoding_cache_bytes() -> int:
    """The memory budget of each text encoder's cache of past encodings, and of the text metrics' kept work
    (``CAPEVAL_ENCODING_CACHE_MB``)."""
    return int(float(os.environ.get("CAPEVAL_ENCODING_CACHE_MB", "1024")) * 2**20)
