"""What identifies a data file's content, for caches of what was read from it (CHAIR's and AMBER's ground truth).

A file rewritten on disk must be read again, even when the rewrite kept its size and its modification time (a copy
that preserves times, two writes within one tick of the file system's clock). So a file is known by the SHA-256 of
its bytes. Hashing a large annotation file on every call would cost more than the call, so the digest is remembered
by the file's status (size, times, inode), and trusted only once the file has been left alone for
:data:`SETTLED_SECONDS`: a file changed within a clock tick of its last reading keeps its status, so a status that
recent proves nothing and the file is hashed again (as git treats "racily clean" files).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Sequence

#: A file whose last change is older than this many seconds is taken as unchanged while its status is.
SETTLED_SECONDS = 2.0

_DIGESTS: dict[tuple, str] = {}


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), remembered while its status shows no change.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = path.write_text("dog"); first = file_digest(path)
    >>> _ = path.write_text("cat"); first == file_digest(path), file_digest(path)[:12]
    (False, '77af778b51ab')
    """
    stat = os.stat(path)
    status = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)
    known = _DIGESTS.get(status)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if time.time() - max(stat.st_mtime, stat.st_ctime) > SETTLED_SECONDS:
        _DIGESTS[status] = digest.hexdigest()
    return digest.hexdigest()


def content_key(paths: Sequence[str | os.PathLike]) -> tuple[tuple[str, str], ...]:
    """``(path, SHA-256)`` of each file: a cache key that changes whenever one of the files' content does."""
    return tuple((str(Path(path)), file_digest(path)) for path in paths)
