"""Where the benchmark datasets live and how they load.

Each benchmark is a Hub dataset repository: a folder with ``data/*.parquet`` and a README card. The six
are small (3 MB together) and ship inside the package (``capeval.hub_datasets``, the repository's ``hub/``
folder), so they load offline from an installed wheel; ``source`` may name any other folder or a Hub
repository id (downloaded by ``datasets`` unless offline).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


def hub_dir() -> Path:
    """The folder holding one Hub dataset folder per bundled benchmark."""
    return Path(str(resources.files("capeval.hub_datasets")))


def benchmark_source(name: str, source: str | os.PathLike | None = None) -> str:
    """The folder (or Hub id) that ``datasets.load_dataset`` reads for benchmark ``name``."""
    if source is not None:
        return str(source)
    folder = hub_dir() / name
    if not (folder / "README.md").is_file():
        known = sorted(p.name for p in hub_dir().iterdir() if (p / "README.md").is_file())
        raise ValueError(f"unknown benchmark {name!r}; choose from {known}")
    return str(folder)


#: Benchmarks whose data cannot ship: built from their authors' files (``data_dir``, or a download) by these functions.
BUILT_BENCHMARKS = {"amber": "capeval.benchmarks.amber:build_amber"}


def load_benchmark(name: str, source: str | os.PathLike | None = None, *, data_dir: str | os.PathLike | None = None):
    """All rows of one benchmark as a ``datasets.Dataset`` (its single ``test`` split).

    ``source`` may also be a loaded ``datasets.Dataset``, returned as it is. A benchmark of
    :data:`BUILT_BENCHMARKS` (``amber``) is built from its authors' files in ``data_dir`` (default: downloaded once)
    unless ``source`` names a folder or Hub repository holding it.
    Rows flagged as unusable by the published protocols (e.g. Flickr8k-Expert's 158 self-captions)
    are kept; the harness selects its row set from them (:mod:`capeval.benchmarks.rowsets`).

    >>> ds = load_benchmark("flickr8k_expert")
    >>> ds.num_rows, sum(ds["is_self_caption"])
    (5822, 158)
    >>> sorted(ds.features)
    ['candidate', 'candidate_id', 'expert_scores', 'image', 'image_file', 'is_self_caption', 'mean_score', 'references', 'row_id']
    """
    import datasets

    if isinstance(source, datasets.Dataset):  # already loaded, e.g. Composite with its references attached
        return source
    if source is None and name in BUILT_BENCHMARKS:
        import importlib

        module, _, function = BUILT_BENCHMARKS[name].partition(":")
        return getattr(importlib.import_module(module), function)(data_dir)
    if data_dir is not None:
        raise ValueError(f"data_dir: benchmark {name!r} ships with capeval; only {sorted(BUILT_BENCHMARKS)} are built from a data folder")
    from capeval.progress import library_bars

    with library_bars():
        return datasets.load_dataset(benchmark_source(name, source), split="test")


def image_paths(image_files, image_dir: str | os.PathLike) -> list[str]:
    """``image_dir/<file>`` for each image file name; ``FileNotFoundError`` naming the missing ones."""
    folder = Path(image_dir)
    missing = sorted({f for f in image_files if not (folder / f).is_file()})
    if missing:
        raise FileNotFoundError(f"{len(missing)} image(s) missing from {folder}, e.g. {missing[:3]}")
    return [str(folder / f) for f in image_files]


def feature_paths(image_files, features_dir: str | os.PathLike) -> list[str]:
    """The region-feature file of each image: ``features_dir/<image stem>.npz`` (or ``.npy``, or the full file
    name plus ``.npz``); ``FileNotFoundError`` naming the missing ones.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()); (folder / "1000268201_693b08cb0e.npz").touch()
    >>> [Path(p).name for p in feature_paths(["1000268201_693b08cb0e.jpg"], folder)]
    ['1000268201_693b08cb0e.npz']
    """
    folder = Path(features_dir)

    def find(image_file: str) -> Path | None:
        stem = Path(image_file).stem
        candidates = (folder / f"{stem}.npz", folder / f"{stem}.npy", folder / f"{image_file}.npz")
        return next((path for path in candidates if path.is_file()), None)

    found = {f: find(f) for f in dict.fromkeys(image_files)}
    missing = sorted(f for f, path in found.items() if path is None)
    if missing:
        raise FileNotFoundError(f"{len(missing)} image(s) have no features in {folder} (<stem>.npz or .npy), e.g. {missing[:3]}")
    return [str(found[f]) for f in image_files]


def attach_images(dataset, image_dir: str | os.PathLike):
    """Fill the optional ``image`` column from ``image_dir/<image_file>`` (raises if an image is missing)."""
    import datasets

    paths = image_paths(dataset["image_file"], image_dir)
    return dataset.remove_columns("image").add_column("image", paths).cast_column("image", datasets.Image())
