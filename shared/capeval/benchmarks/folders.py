"""The folder of the Hub dataset folders (card and data of each benchmark) inside the installed package: the one
place both the loader (:mod:`capeval.benchmarks.hub`) and the released-file builders
(:mod:`capeval.benchmarks.released`) read it from."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def hub_dir() -> Path:
    """The folder holding one Hub dataset folder per benchmark (the repository's ``hub/``).

    >>> (hub_dir() / "flickr8k_expert" / "README.md").is_file()
    True
    """
    return Path(str(resources.files("capeval.hub_datasets")))
