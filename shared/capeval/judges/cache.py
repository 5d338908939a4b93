"""A persistent cache of judge answers: one JSON file per request under ``<CAPEVAL_CACHE>/judges/``.

The key is a SHA-256 of the backend and the server it runs on (``base_url``: the same model name on another server is
another judge), the model and its revision, the exact request body (messages, images as the bytes
they carry, decoding parameters, seed) and the try number (a judge asked again after an answer it could not read is a
new request). A file is written whole or not at all (a temporary file renamed over it), so concurrent writers of the
same answer leave one whole file; a file that does not read back as the entry of its key (cut short, edited) is
ignored, named in a warning, and replaced by the next answer.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

from ..atomic import partial_file
from ..settings import cache_dir


def request_key(backend: str, model: str, revision: str, body: dict[str, Any], attempt: int = 0, base_url: str = "") -> str:
    """The cache key of one request (``base_url``: the server's, '' for a model run in this process).

    >>> body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    >>> key = request_key("openai-compatible", "m", "", body, base_url="http://127.0.0.1:8000/v1")
    >>> key == request_key("openai-compatible", "m", "", dict(reversed(body.items())), base_url="http://127.0.0.1:8000/v1")
    True
    >>> key in (request_key("openai-compatible", "m", "", body, attempt=1, base_url="http://127.0.0.1:8000/v1"),
    ...         request_key("openai-compatible", "m", "", body, base_url="http://127.0.0.1:8001/v1"))
    False
    """
    material = {"backend": backend, "base_url": base_url, "model": model, "revision": revision, "body": body,
                "attempt": attempt}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    """Judge answers by :func:`request_key` (``folder``: default ``<CAPEVAL_CACHE>/judges``)."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else cache_dir() / "judges"

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The answer kept for ``key``, or ``None`` (none kept, or a damaged file: warned about)."""
        path = self.path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            warnings.warn(f"judge cache entry {path} is damaged ({type(error).__name__}); asking the judge again", stacklevel=2)
            return None
        if not (isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("answer"), dict)):
            warnings.warn(f"judge cache entry {path} is not the answer of its key; asking the judge again", stacklevel=2)
            return None
        return entry["answer"]

    def put(self, key: str, answer: dict[str, Any]) -> None:
        with partial_file(self.path(key), mode="w") as out:
            out.write(json.dumps({"key": key, "answer": answer}, ensure_ascii=False))
