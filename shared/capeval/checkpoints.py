"""Checkpoints that live at a plain URL (not on the HuggingFace Hub), downloaded once into a cache, and the released
``torch.save`` state dicts read from them (checked against the model they load into).

``resolve_checkpoint`` turns a local path or a URL into a local file. A URL is fetched
only on first use, into ``$CAPEVAL_CACHE`` (default ``~/.cache/capeval``), and cached only when
the download is complete (and matches its SHA-256 when one is given); with
``HF_HUB_OFFLINE=1`` (or ``CAPEVAL_OFFLINE=1``) nothing is fetched and a missing file
raises :class:`~capeval.models.ModelUnavailableError` saying where to put it.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tqdm.auto import tqdm

from .models import ModelUnavailableError
from .progress import SHOW_AFTER_SECONDS, progress_enabled
from .settings import cache_dir, offline, url_mirror

if TYPE_CHECKING:
    import torch


def is_url(source: str | os.PathLike) -> bool:
    return urllib.parse.urlparse(str(source)).scheme in ("http", "https")


def cached_path_for(url: str) -> Path:
    """Where ``url`` is (or will be) cached: ``<cache>/downloads/<sha256(url)[:16]>/<file name>``.

    >>> cached_path_for("https://example.org/x/umic.pt").name
    'umic.pt'
    """
    name = Path(urllib.parse.urlparse(url).path).name or "download"
    return cache_dir() / "downloads" / hashlib.sha256(url.encode()).hexdigest()[:16] / name


def copy_with_progress(source: IO[bytes], target: IO[bytes], *, total: int | None, desc: str, chunk: int = 1 << 20) -> None:
    """Copy a stream in ``chunk``-byte reads with a byte-count progress bar (shown after a second, if enabled).

    >>> import io
    >>> out = io.BytesIO(); copy_with_progress(io.BytesIO(b"x" * 5), out, total=5, desc="copy", chunk=2); out.getvalue()
    b'xxxxx'
    """
    bar = tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, leave=False, delay=SHOW_AFTER_SECONDS,
               disable=not progress_enabled())
    with bar:
        for block in iter(lambda: source.read(chunk), b""):
            target.write(block)
            bar.update(len(block))


#: Hosts a plain ``http://`` URL may name (a local test or mirror server); anything else must be ``https://``.
LOOPBACK_HOSTS = frozenset(["localhost", "127.0.0.1", "::1"])


def check_url(url: str) -> None:
    """``ValueError`` for a plain ``http://`` URL to a host other than this machine (the download could be altered).

    >>> check_url("http://127.0.0.1:8000/umic.pt")
    >>> check_url("http://example.org/umic.pt")
    Traceback (most recent call last):
    ValueError: refusing to download a checkpoint over plain http:// from 'example.org' (use https://): http://example.org/umic.pt
    """
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "http" and parsed.hostname not in LOOPBACK_HOSTS:
        raise ValueError(f"refusing to download a checkpoint over plain http:// from {parsed.hostname!r} (use https://): {url}")


#: How many leading bytes of a download are read to recognise an HTML page.
SNIFF_BYTES = 512


def looks_like_html(head: bytes) -> bool:
    """Whether a body starting with ``head`` is an HTML page (no checkpoint format starts like one).

    >>> looks_like_html(b"\\xef\\xbb\\xbf  <!DOCTYPE html><html>"), looks_like_html(b"<HTML><body>"), looks_like_html(b"PK\\x03\\x04")
    (True, True, False)
    """
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or (start.startswith(b"<!--") and b"<html" in start)


def mirrored(url: str) -> str:
    """``url`` with its scheme and host replaced by ``CAPEVAL_URL_MIRROR`` when set (an internal mirror, or a test
    server, that serves the hosts' files at the same paths); the cache still knows the file by ``url``.

    >>> import os; from unittest import mock
    >>> with mock.patch.dict(os.environ, {"CAPEVAL_URL_MIRROR": "http://127.0.0.1:8000/"}):
    ...     mirrored("https://example.org/a/umic.pt?x=1")
    'http://127.0.0.1:8000/a/umic.pt?x=1'
    """
    mirror = url_mirror()
    if not mirror:
        return url
    parsed = urllib.parse.urlparse(url)
    return mirror.rstrip("/") + urllib.parse.urlunparse(parsed._replace(scheme="", netloc=""))


def file_digest(path: Path, algorithm: str) -> str:
    """The hex digest of a file with one of ``hashlib``'s algorithms.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     _ = f.write(b"abc"); f.flush(); file_digest(Path(f.name), "sha1")
    'a9993e364706816aba3e25717850c26c9cd0d89d'
    """
    digest = hashlib.new(algorithm)
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, checksum: str | None, *, what: str) -> None:
    """``ModelUnavailableError`` unless the file's digest is ``checksum`` (``"sha256:<hex>"``, ``"sha1:<hex>"``;
    ``None``: nothing published to check)."""
    if checksum is None:
        return
    algorithm, _, expected = checksum.partition(":")
    found = file_digest(path, algorithm)
    if found != expected.lower():
        raise ModelUnavailableError(f"{what} has {algorithm.upper().replace('SHA', 'SHA-')} {found}, not the published {expected}: refused")


def partial_path(target: Path) -> Path:
    """Where a cut download of ``target`` is kept until a later call resumes it."""
    return target.with_name(f".{target.name}.part")


def download(url: str, target: Path, *, what: str, checksum: str | None, timeout: float) -> None:
    """Fetch ``url`` (through :func:`mirrored`) to ``target``, renamed into place only when it is complete and checked;
    a download cut short is kept beside it (:func:`partial_path`) and resumed by the next call (an HTTP range request;
    a server that ignores it sends the whole file again).

    Refused: an HTML page (a login or error page served in the file's place, whether its ``Content-Type``
    says so or only its first bytes), and a file whose digest differs from ``checksum`` (when given), which is
    removed so that the next call starts afresh.
    """
    part = partial_path(target)
    part.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.is_file() else 0
    request = urllib.request.Request(mirrored(url), headers={"Range": f"bytes={have}-"} if have else {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        resumed = have > 0 and response.status == 206
        head = b"" if resumed else response.read(SNIFF_BYTES)
        if not resumed and (response.headers.get_content_type() == "text/html" or looks_like_html(head)):
            raise ModelUnavailableError(f"{url} returned an HTML page, not the {what} (a login, error or moved-file page?)")
        length = int(response.headers.get("Content-Length") or 0) or None
        expected = None if length is None else length + (have if resumed else 0)
        with open(part, "ab" if resumed else "wb") as out:
            out.write(head)
            copy_with_progress(response, out, total=None if length is None else length - len(head),
                               desc=f"downloading {target.name}")
            received = out.tell()
    if expected is not None and received != expected:
        raise ModelUnavailableError(f"the download of {url} was cut short: {received:,} of {expected:,} bytes "
                                    "(run it again to resume)")
    try:
        check_file(part, checksum, what=f"the download of {url}")
    except ModelUnavailableError:
        part.unlink()
        raise
    os.replace(part, target)


def resolve_checkpoint(source: str | os.PathLike, *, what: str = "checkpoint", sha256: str | None = None,
                       checksum: str | None = None, timeout: float = 60.0) -> Path:
    """A local file for ``source``: a path, or a URL downloaded once into the cache.

    A download goes to a hidden partial file first and becomes the cached checkpoint only when it is whole
    (its ``Content-Length``), is not an HTML page and, when ``sha256`` (or ``checksum``, ``"<algorithm>:<hex>"``)
    is given, has that digest; plain ``http://`` is refused except from this machine. A cut download resumes.
    """
    if not is_url(source):
        path = Path(source).expanduser()
        if not path.is_file():
            raise ModelUnavailableError(f"The {what} file {str(path)!r} does not exist.")
        return path
    url = str(source)
    check_url(url)
    target = cached_path_for(url)
    if target.is_file():
        return target
    advice = f"Download {url} yourself and pass its local path, or place it at {target}."
    if offline():
        raise ModelUnavailableError(f"The {what} is not cached and offline mode (HF_HUB_OFFLINE=1 or CAPEVAL_OFFLINE=1) forbids downloading it. {advice}")
    try:
        download(url, target, what=what, checksum=checksum or (f"sha256:{sha256}" if sha256 else None), timeout=timeout)
    except (OSError, http.client.HTTPException) as error:  # ModelUnavailableError is an OSError too
        raise ModelUnavailableError(f"Could not download the {what} from {url} ({error}). {advice}") from error
    return target


def read_state_dict(source: str | os.PathLike, *, what: str, entry: str | None = None,
                    optional_entry: bool = False) -> dict[str, torch.Tensor]:
    """The tensors of a released ``torch.save`` checkpoint (a local path or a URL, cached); with ``entry``, those of
    the checkpoint's ``entry`` item (e.g. ``"state_dict"`` beside training state), or, with ``optional_entry``, of
    the checkpoint itself where it has no such item.

    Loaded with ``weights_only=True`` (no code from the file runs). Legacy TensorFlow-style
    LayerNorm names ``gamma``/``beta`` become ``weight``/``bias``, as the original loaders do.
    """
    import torch  # not at import time: the text metrics install without torch

    path = resolve_checkpoint(source, what=what)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a corrupt or non-torch file
        raise ModelUnavailableError(f"The {what} {str(path)!r} is not a readable torch checkpoint ({type(error).__name__}: {error})") from error
    if entry is not None and not (optional_entry and isinstance(state, dict) and entry not in state):
        if not isinstance(state, dict) or entry not in state:
            raise ModelUnavailableError(f"The {what} {str(path)!r} holds no {entry!r} entry")
        state = state[entry]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelUnavailableError(f"The {what} {str(path)!r} is not a state dict of tensors")
    return {key.replace("gamma", "weight").replace("beta", "bias"): value for key, value in state.items()}


def load_checked(model: torch.nn.Module, state: dict[str, torch.Tensor], *, what: str) -> None:
    """Load ``state`` into ``model``, raising on any missing, unexpected or wrongly shaped key."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    mismatched = sorted(k for k in set(state) & set(expected) if state[k].shape != expected[k].shape)
    if missing or unexpected or mismatched:
        details = "; ".join(f"{label}: {keys[:8]}{' …' if len(keys) > 8 else ''}"
                            for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", mismatched)) if keys)
        raise ModelUnavailableError(f"The {what} does not match the expected layout ({details})")
    model.load_state_dict(state)
