"""capeval's own NLTK data folder, searched before NLTK's global ones (``capeval download`` fills it)."""

from __future__ import annotations

from pathlib import Path

from ..settings import cache_dir


def nltk_data_dir() -> Path:
    """capeval's NLTK data folder: ``<CAPEVAL_CACHE>/nltk_data``."""
    return cache_dir() / "nltk_data"


#: The folder :func:`use_nltk_data` last put on NLTK's path.
_NLTK_FOLDER: list[str] = []


def use_nltk_data() -> None:
    """Put capeval's NLTK data folder first on NLTK's search path (where ``CAPEVAL_CACHE`` points now, in place of
    where it pointed before)."""
    import nltk.data

    folder = str(nltk_data_dir())
    if _NLTK_FOLDER and _NLTK_FOLDER[0] != folder and _NLTK_FOLDER[0] in nltk.data.path:
        nltk.data.path.remove(_NLTK_FOLDER[0])
    _NLTK_FOLDER[:] = [folder]
    if folder not in nltk.data.path:
        nltk.data.path.insert(0, folder)
