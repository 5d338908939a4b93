"""Files and folders that appear whole or not at all.

Each is written under a hidden ``.partial`` name beside its target and renamed into place only when
complete, so an interrupted write (an error, Ctrl-C, a cut download) never leaves something that looks
finished, and the partial copy is removed on the way out. An existing target is replaced only when the
caller says so.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> with partial_file(folder / "scores.json", mode="w") as out:
...     _ = out.write("{}")
>>> sorted(p.name for p in folder.iterdir())
['scores.json']
>>> with partial_file(folder / "scores.json", mode="w", overwrite=False) as out:
...     pass
Traceback (most recent call last):
FileExistsError: ... exists; pass --overwrite (overwrite=True) to replace it
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator


def refuse_existing(target: str | os.PathLike, *, overwrite: bool) -> None:
    """``FileExistsError`` unless ``overwrite`` or ``target`` is absent (or an empty folder)."""
    target = Path(target)
    if overwrite or not target.exists() or (target.is_dir() and not any(target.iterdir())):
        return
    raise FileExistsError(f"{target} exists; pass --overwrite (overwrite=True) to replace it")


def check_writable(target: str | os.PathLike, *, overwrite: bool, folder: bool = False) -> None:
    """Fail now, before any work, if ``target`` cannot be written: it exists (without ``overwrite``), it is a folder
    where a file is wanted (or the other way round), or its folder cannot take a file (``OSError`` saying which).

    >>> check_writable("/proc/scores.json", overwrite=False)
    Traceback (most recent call last):
    OSError: cannot write /proc/scores.json: ...
    """
    path = Path(target)
    refuse_existing(path, overwrite=overwrite)
    if path.exists() and path.is_dir() != folder:
        raise OSError(f"cannot write {path}: it is {'a file' if folder else 'a folder'}")
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as error:
        raise OSError(f"cannot write {path}: {error.strerror or error}") from None


@contextlib.contextmanager
def partial_file(target: str | os.PathLike, *, mode: str = "wb", overwrite: bool = True) -> Iterator[IO]:
    """An open file that becomes ``target`` when the block completes (and is removed when it does not)."""
    target = Path(target)
    refuse_existing(target, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        text = "b" not in mode
        with os.fdopen(handle, mode, encoding="utf-8" if text else None, newline="" if text else None) as out:
            yield out
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(partial)


@contextlib.contextmanager
def partial_folder(target: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """A fresh folder that replaces ``target`` when the block completes (and is removed when it does not)."""
    target = Path(target)
    refuse_existing(target, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial"))
    try:
        yield partial
        if target.exists():
            # Move the old one aside first, so the target is at every moment either the old or the new whole.
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old / "replaced")
            os.replace(partial, target)
            shutil.rmtree(old)
        else:
            os.replace(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
