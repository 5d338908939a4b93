"""Model loading and the process-wide model cache shared by every metric.

Nothing here downloads at import time. Weights are fetched (or read from the
HuggingFace cache) only when a metric first asks for a model, and every loaded
model is kept in one cache keyed by what identifies it, so two metrics in one
process that use the same checkpoint share one copy in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Mapping

from .progress import library_bars
from .settings import cache_dir, offline

if TYPE_CHECKING:  # torch loads only when a model does, so text metrics run without it
    import torch

_CACHE: dict[Hashable, Any] = {}
_LOCK = threading.RLock()


class ModelUnavailableError(OSError):
    """A checkpoint could not be found locally and could not be downloaded."""


def cached(key: Hashable, factory: Callable[[], Any]) -> Any:
    """Return the object cached under ``key``, building it with ``factory`` once."""
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = factory()
        return _CACHE[key]


def clear_cache() -> None:
    """Drop every cached model (frees memory; the next use reloads)."""
    with _LOCK:
        _CACHE.clear()


class BoundedCache:
    """Values by key, kept across calls while their sizes (``size`` of each value; 1 by default) add up to at most
    ``max_size``, the least recently used dropped first; a value larger than ``max_entry`` (default: the whole bound)
    is not kept. Safe to
    share between threads. The encoders keep what they computed in these (text encodings, CLIP text and image
    features), and :func:`clear_feature_caches` empties them.

    >>> cache = BoundedCache(max_size=2)
    >>> cache.put_many({"a": 1, "b": 2})
    >>> cache.get_many(["a", "c"])  # "a" is now the most recently used
    {'a': 1}
    >>> cache.put("c", 3)
    >>> sorted(cache.get_many(["a", "b", "c"])), cache.get("b"), len(cache), cache.size
    (['a', 'c'], None, 2, 2)
    >>> cache.put("c", 4); len(cache), cache.size, cache.get("c")  # a key put again is replaced, not counted twice
    (2, 2, 4)
    >>> cache.clear(); len(cache), cache.size
    (0, 0)
    """

    def __init__(self, max_size: int, size: Callable[[Any], int] = lambda value: 1):
        self.max_size, self._size_of = max_size, size
        self.max_entry: int | None = None
        self.size = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get_many(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        """The cached values of those of ``keys`` that are cached, each marked as just used."""
        with self._lock:
            found = {key: self._entries[key][0] for key in keys if key in self._entries}
            for key in found:
                self._entries.move_to_end(key)
        return found

    def get(self, key: Hashable) -> Any:
        """The cached value of ``key`` (marked as just used), or None."""
        return self.get_many([key]).get(key)

    def put_many(self, values: Mapping[Hashable, Any]) -> None:
        """Remember ``values`` as the most recently used, dropping the least recently used beyond the bound."""
        with self._lock:
            for key, value in values.items():
                size = self._size_of(value)
                if size > self.max_size or (self.max_entry is not None and size > self.max_entry):
                    continue
                if key in self._entries:
                    self.size -= self._entries.pop(key)[1]
                self._entries[key] = (value, size)
                self.size += size
            while self.size > self.max_size:
                self.size -= self._entries.popitem(last=False)[1][1]

    def put(self, key: Hashable, value: Any) -> None:
        self.put_many({key: value})

    def clear(self) -> None:
        """Forget every value (a cold start, e.g. for a benchmark's first call)."""
        with self._lock:
            self._entries.clear()
            self.size = 0


def clear_feature_caches() -> None:
    """Empty what the cached encoders keep across calls (text encodings, CLIP text and image features: each object
    with a ``clear_caches`` method); the models stay loaded. A benchmark's cold call on loaded models starts so."""
    with _LOCK:
        held = list(_CACHE.values())
    for value in held:
        clear = getattr(value, "clear_caches", None)
        if callable(clear):
            clear()


def cache_size() -> int:
    """Number of objects currently held in the model cache."""
    return len(_CACHE)


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` means CUDA when available, else CPU."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def hub_dir() -> Path:
    """capeval's HuggingFace cache (huggingface_hub's layout): ``<CAPEVAL_CACHE>/hub``."""
    return cache_dir() / "hub"


def hub_snapshot(repo_id: str) -> Path | None:
    """The folder of ``repo_id``'s snapshot in capeval's hub cache (what ``capeval download`` fetched or ``--from``
    installed; the newest where there are several), or ``None``.

    >>> hub_snapshot("no-such/model") is None
    True
    """
    snapshots = hub_dir() / ("models--" + repo_id.replace("/", "--")) / "snapshots"
    found = [folder for folder in snapshots.glob("*") if folder.is_dir() and any(folder.iterdir())] if snapshots.is_dir() else []
    return max(found, key=lambda folder: folder.stat().st_mtime) if found else None


def _unavailable_message(name_or_path: str, what: str) -> str:
    if Path(name_or_path).expanduser().exists():
        return f"Could not load the {what} from the local path {name_or_path!r}: the folder exists but is not a valid checkpoint."
    return (
        f"The {what} {name_or_path!r} is not available locally"
        + (" and offline mode (HF_HUB_OFFLINE=1 or CAPEVAL_OFFLINE=1) forbids downloading it" if offline() else " and could not be downloaded")
        + ". Make it available by (a) running once with network access so it lands in the HuggingFace cache "
        f"(`hf download {name_or_path}`), or (b) copying the checkpoint folder to this machine and passing "
        "its path as the model name."
    )


def local_config(name_or_path: str | os.PathLike) -> dict | None:
    """The ``config.json`` of a local checkpoint folder (``None`` for a hub id or a folder without one);
    :class:`ModelUnavailableError` when it is not a JSON object (the same error whichever loader reads it first).

    >>> local_config("bert-base-uncased") is None
    True
    """
    config = Path(name_or_path).expanduser() / "config.json"
    if not config.is_file():
        return None
    try:
        fields = json.loads(config.read_text(encoding="utf-8"))
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise ModelUnavailableError(f"The checkpoint folder {str(name_or_path)!r} has a config.json that is not valid JSON "
                                    f"({error}).") from None
    if not isinstance(fields, dict):
        raise ModelUnavailableError(f"The checkpoint folder {str(name_or_path)!r} has a config.json that holds a "
                                    f"{type(fields).__name__}, not a JSON object.")
    return fields


def load_pretrained(loader: Any, name_or_path: str, *, what: str = "model", **kwargs: Any) -> Any:
    """Call ``loader.from_pretrained`` and turn "not found" into a :class:`ModelUnavailableError`
    (a local folder whose ``config.json`` is not JSON says so: :func:`local_config`).

    A hub id that ``capeval download`` put in capeval's cache (:func:`hub_snapshot`) loads from there.
    ``loader`` is any class with ``from_pretrained`` (``AutoModel``, ``AutoTokenizer``, ...). Its bars
    ("Loading weights") show only when capeval's progress bars do (``CAPEVAL_PROGRESS``).
    """
    local_config(name_or_path)
    # What `capeval download` fetched (or a folder copied with CAPEVAL_CACHE pointing at it) is read first.
    snapshot = None if Path(str(name_or_path)).expanduser().exists() else hub_snapshot(str(name_or_path))
    if snapshot is not None:
        name_or_path = str(snapshot)
    if offline():
        # CAPEVAL_OFFLINE must stop transformers' downloads too, not only capeval's own.
        kwargs.setdefault("local_files_only", True)
    try:
        with library_bars():
            return loader.from_pretrained(name_or_path, **kwargs)
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(_unavailable_message(str(name_or_path), what)) from error


def load_hf_model(name_or_path: str, *, attn_implementation: str | None = None, device: str | torch.device | None = None):
    """A HuggingFace ``AutoModel`` in fp32 and eval mode on ``device``, cached process-wide."""
    from transformers import AutoModel

    target = resolve_device(device)
    key = ("hf-model", str(name_or_path), attn_implementation, str(target))

    def build():
        # fp32 whatever the checkpoint stores (transformers 5 otherwise keeps the stored dtype): the metrics'
        # published numbers were computed in fp32.
        import torch

        kwargs = {"dtype": torch.float32}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        model = load_pretrained(AutoModel, name_or_path, what="model", **kwargs)
        return model.to(target).eval()

    return cached(key, build)


def load_hf_tokenizer(name_or_path: str, *, model_max_length: int | None = None, **kwargs: Any):
    """A HuggingFace tokenizer, cached, with ``model_max_length`` always set to a real number."""
    from transformers import AutoTokenizer

    key = ("hf-tokenizer", str(name_or_path), model_max_length, tuple(sorted(kwargs.items())))

    def build():
        tokenizer = load_pretrained(AutoTokenizer, name_or_path, what="tokenizer", **kwargs)
        # Local folders often lack model_max_length, leaving a huge sentinel that breaks truncation.
        if model_max_length is not None:
            tokenizer.model_max_length = model_max_length
        elif tokenizer.model_max_length is None or tokenizer.model_max_length > 100_000:
            tokenizer.model_max_length = 512
        return tokenizer

    return cached(key, build)


_FINGERPRINTS: dict[tuple, str] = {}


def model_id(name_or_path: str | os.PathLike) -> str:
    """How a model is named in hashcodes and provenance, the same on every machine.

    A hub id or URL is its own name. A local file or folder is named by its last path part plus a short
    hash of its content (a folder: its config, tokenizer and weight files), never by an absolute path,
    so two machines holding the same checkpoint agree.

    >>> model_id("bert-base-uncased")
    'bert-base-uncased'
    """
    text = str(name_or_path)
    path = Path(text).expanduser()
    if not path.exists():
        return text
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    key = tuple((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for file in files:
            digest.update(str(file.relative_to(path) if file != path else file.name).encode())
            with open(file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        _FINGERPRINTS[key] = digest.hexdigest()[:10]
    return f"{path.resolve().name}@{_FINGERPRINTS[key]}"
