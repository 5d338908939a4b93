"""capeval's settings, read from the environment in one place.

- ``CAPEVAL_CACHE``: where URL checkpoints and extracted region features are cached
  (default ``~/.cache/capeval``).
- ``CAPEVAL_DATA``: where the benchmarks capeval does not ship (Polaris, Nebula, FOIL, LongCap-Arena) keep
  their released files, one folder per benchmark (default ``<CAPEVAL_CACHE>/data``).
- ``CAPEVAL_URL_MIRROR``: a server (``scheme://host[:port]``) that serves the files capeval fetches from plain URLs
  at the same paths as their hosts (an internal mirror); unset, each file comes from its own host.
- Offline mode: ``CAPEVAL_OFFLINE=1``, or HuggingFace's own ``HF_HUB_OFFLINE=1`` /
  ``TRANSFORMERS_OFFLINE=1``; then nothing is downloaded and a missing checkpoint raises
  :class:`capeval.models.ModelUnavailableError` saying how to provide it.
- ``CAPEVAL_PROGRESS=0``: no progress bars (on by default for runs longer than a second).
- ``CAPEVAL_ENCODING_CACHE_MB``: how much memory each text encoder may keep for sentences it encoded
  before, and the text metrics for what they computed (tokenizations, n-gram indexes: ``capeval.text.call_cache``)
  (default 1024; 0 turns the caches off), so repeated evaluations re-encode and re-count only new captions.

Each is read when asked for, so a change of the environment takes effect on the next call; a value that cannot
be used raises :class:`SettingError` naming the variable.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

OFFLINE_VARIABLES = ("CAPEVAL_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_TRUE = {"1", "true", "yes", "on"}


class SettingError(ValueError):
    """An environment variable of capeval's with a value it cannot use (the message names the variable)."""


def cache_dir() -> Path:
    """The root of capeval's own on-disk cache (``CAPEVAL_CACHE``: a folder, made when first written to).

    >>> import tempfile
    >>> from unittest import mock
    >>> with tempfile.NamedTemporaryFile() as file, mock.patch.dict(os.environ, {"CAPEVAL_CACHE": file.name}):
    ...     cache_dir()
    Traceback (most recent call last):
    capeval.settings.SettingError: CAPEVAL_CACHE=... is a file: point it at a folder (or where one may be made)
    """
    folder = Path(os.environ.get("CAPEVAL_CACHE") or Path.home() / ".cache" / "capeval").expanduser()
    if folder.exists() and not folder.is_dir():
        raise SettingError(f"CAPEVAL_CACHE={folder} is a file: point it at a folder (or where one may be made)")
    return folder


def benchmark_data_dir() -> Path:
    """The folder holding one folder of released files per downloaded benchmark (``CAPEVAL_DATA``)."""
    return Path(os.environ.get("CAPEVAL_DATA") or cache_dir() / "data").expanduser()


def url_mirror() -> str:
    """``CAPEVAL_URL_MIRROR``, or ``""``."""
    return os.environ.get("CAPEVAL_URL_MIRROR", "").strip()


def offline() -> bool:
    """Whether downloads are forbidden (any of :data:`OFFLINE_VARIABLES` set to 1/true/yes/on)."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_VARIABLES)


def progress_default() -> bool:
    """Whether progress bars show when a call does not say (``CAPEVAL_PROGRESS``, default on)."""
    return os.environ.get("CAPEVAL_PROGRESS", "1").strip().lower() not in {"0", "false", "no", "off", ""}


def encoding_cache_bytes() -> int:
    """The memory budget of each text encoder's cache of past encodings, and of the text metrics' kept work
    (``CAPEVAL_ENCODING_CACHE_MB``: megabytes, 0 or more).

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"CAPEVAL_ENCODING_CACHE_MB": "-5"}):
    ...     encoding_cache_bytes()
    Traceback (most recent call last):
    capeval.settings.SettingError: CAPEVAL_ENCODING_CACHE_MB must be a number of megabytes >= 0 (0 turns the caches off), got '-5'
    >>> with mock.patch.dict(os.environ, {"CAPEVAL_ENCODING_CACHE_MB": "0.5"}):
    ...     encoding_cache_bytes()
    524288
    """
    text = os.environ.get("CAPEVAL_ENCODING_CACHE_MB", "").strip() or "1024"
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = math.nan
    if not (math.isfinite(megabytes) and megabytes >= 0):
        raise SettingError(f"CAPEVAL_ENCODING_CACHE_MB must be a number of megabytes >= 0 (0 turns the caches off), got {text!r}")
    return int(megabytes * 2**20)


def check_settings() -> None:
    """Read every setting that has to parse, so that a bad one is found before any work (the command line calls this)."""
    cache_dir()
    encoding_cache_bytes()
