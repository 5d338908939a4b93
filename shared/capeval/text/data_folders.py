"""capeval's own NLTK and spaCy data folders, searched before NLTK's global ones and spaCy's installed packages
(``capeval download`` fills them)."""

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


def spacy_dir() -> Path:
    """capeval's spaCy pipelines: ``<CAPEVAL_CACHE>/spacy/<name>/``."""
    return cache_dir() / "spacy"


def spacy_folder(name: str) -> Path | None:
    """The unpacked pipeline ``name`` in capeval's spaCy folder (the folder holding its ``config.cfg``), or ``None``."""
    found = sorted((spacy_dir() / name).glob("*/config.cfg")) + sorted((spacy_dir() / name).glob("config.cfg"))
    return found[0].parent if found else None
