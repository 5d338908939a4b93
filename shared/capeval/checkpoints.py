"""Checkpoints that live at a plain URL (not on the HuggingFace Hub), downloaded once into a cache.

``resolve_checkpoint`` turns a local path or a URL into a local file. A URL is fetched
only on first use, into ``$CAPEVAL_CACHE`` (default ``~/.cache/capeval``); with
``HF_HUB_OFFLINE=1`` (or ``CAPEVAL_OFFLINE=1``) nothing is fetched and a missing file
raises :class:`~capeval.models.ModelUnavailableError` saying where to put it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import BinaryIO

from tqdm.auto import tqdm

from .models import ModelUnavailableError
from .progress import progress_enabled
from .settings import cache_dir, offline


def is_url(source: str | os.PathLike) -> bool:
    return urllib.parse.urlparse(str(source)).scheme in ("http", "https")


def cached_path_for(url: str) -> Path:
    """Where ``url`` is (or will be) cached: ``<cache>/downloads/<sha256(url)[:16]>/<file name>``.

    >>> cached_path_for("https://example.org/x/umic.pt").name
    'umic.pt'
    """
    name = Path(urllib.parse.urlparse(url).path).name or "download"
    return cache_dir() / "downloads" / hashlib.sha256(url.encode()).hexdigest()[:16] / name


def copy_with_progress(source: BinaryIO, target: BinaryIO, *, total: int | None, desc: str, chunk: int = 1 << 20) -> None:
    """Copy a stream in ``chunk``-byte reads with a byte-count progress bar (shown after a second, if enabled).

    >>> import io
    >>> out = io.BytesIO(); copy_with_progress(io.BytesIO(b"x" * 5), out, total=5, desc="copy", chunk=2); out.getvalue()
    b'xxxxx'
    """
    bar = tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, leave=False, delay=1.0,
               disable=not progress_enabled())
    with bar:
        for block in iter(lambda: source.read(chunk), b""):
            target.write(block)
            bar.update(len(block))


def resolve_checkpoint(source: str | os.PathLike, *, what: str = "checkpoint", timeout: float = 60.0) -> Path:
    """A local file for ``source`` (a path, or a URL downloaded once into the cache)."""
    if not is_url(source):
        path = Path(source).expanduser()
        if not path.is_file():
            raise ModelUnavailableError(f"The {what} file {str(path)!r} does not exist.")
        return path
    url = str(source)
    target = cached_path_for(url)
    if target.is_file():
        return target
    advice = f"Download {url} yourself and pass its local path, or place it at {target}."
    if offline():
        raise ModelUnavailableError(f"The {what} is not cached and offline mode (HF_HUB_OFFLINE=1 or CAPEVAL_OFFLINE=1) forbids downloading it. {advice}")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Download to a temporary file in the same folder, then rename: an interrupted download never looks complete.
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            copy_with_progress(response, out, total=int(response.headers.get("Content-Length") or 0) or None,
                               desc=f"downloading {target.name}")
        os.replace(partial, target)
    except OSError as error:
        raise ModelUnavailableError(f"Could not download the {what} from {url} ({error}). {advice}") from error
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return target
