"""Where the benchmark datasets live and how they load.

Each benchmark is a Hub dataset repository: a folder with ``data/*.parquet`` and a README card. The six
are small (3 MB together) and ship inside the package (``capeval.hub_datasets``, the repository's ``hub/``
folder), so they load offline from an installed wheel; ``source`` may name any other folder or a Hub
repository id (downloaded by ``datasets`` unless offline).
"""

from __future__ import annotations

import os

from capeval.benchmarks.folders import hub_dir


def benchmark_source(name: str, source: str | os.PathLike | None = None) -> str:
    """The folder (or Hub id) that ``datasets.load_dataset`` reads for benchmark ``name``."""
    if source is not None:
        return str(source)
    folder = hub_dir() / name
    if not (folder / "README.md").is_file():
        known = sorted(p.name for p in hub_dir().iterdir() if (p / "README.md").is_file())
        raise ValueError(f"unknown benchmark {name!r}; choose from {known}")
    return str(folder)


#: Benchmarks whose data cannot ship and whose builder is their own module's: built from their authors' files
#: (``data_dir``, or a download). The others that cannot ship are :data:`capeval.benchmarks.released.RELEASED`.
BUILT_BENCHMARKS = {"amber": "capeval.benchmarks.amber:build_amber"}


def load_benchmark(name: str, source: str | os.PathLike | None = None, *, data_dir: str | os.PathLike | None = None,
                   config: str | None = None):
    """All rows of one benchmark as a ``datasets.Dataset`` (its single ``test`` split).

    ``source`` may also be a loaded ``datasets.Dataset``, returned as it is.
    Rows flagged as unusable by the published protocols (e.g. Flickr8k-Expert's 158 self-captions)
    are kept; the harness selects its row set from them (:mod:`capeval.benchmarks.rowsets`).
    The benchmarks capeval does not ship are built from their authors' files: Polaris, Nebula, FOIL and
    LongCap-Arena from ``data_dir`` (or a folder ``source``), else capeval's data folder, in the card's ``config``
    (:mod:`capeval.benchmarks.released`); AMBER (:data:`BUILT_BENCHMARKS`) from ``data_dir`` (default: downloaded
    once) unless ``source`` names a folder or Hub repository holding it.

    >>> ds = load_benchmark("flickr8k_expert")
    >>> ds.num_rows, sum(ds["is_self_caption"])
    (5822, 158)
    >>> sorted(ds.features)
    ['candidate', 'candidate_id', 'expert_scores', 'image', 'image_file', 'is_self_caption', 'mean_score', 'references', 'row_id']
    """
    import datasets

    if isinstance(source, datasets.Dataset):  # already loaded, e.g. Composite with its references attached
        return source
    from capeval.benchmarks.released import RELEASED, build

    if name in RELEASED:
        if source is not None and data_dir is not None:
            raise ValueError(f"{name}: give the folder of its released files once (data_dir), not also as source")
        return build(name, data_dir if data_dir is not None else source, config)
    if data_dir is not None and name not in BUILT_BENCHMARKS:
        built = ", ".join(sorted([*RELEASED, *BUILT_BENCHMARKS]))
        raise ValueError(f"data_dir: benchmark {name!r} ships with capeval; only {built} are built from a data folder")
    if config not in (None, "default"):
        raise ValueError(f"config {config!r}: benchmark {name!r} has one config, 'default'")
    if source is None and name in BUILT_BENCHMARKS:
        import importlib

        module, _, function = BUILT_BENCHMARKS[name].partition(":")
        return getattr(importlib.import_module(module), function)(data_dir)
    from capeval.progress import library_bars

    with library_bars():
        return datasets.load_dataset(benchmark_source(name, source), split="test")


def attach_images(dataset, image_dir: str | os.PathLike):
    """Fill the optional ``image`` column from ``image_dir/<image_file>`` (raises if an image is missing)."""
    import datasets

    from ..vision.images import image_paths

    paths = image_paths(dataset["image_file"], image_dir)
    return dataset.remove_columns("image").add_column("image", paths).cast_column("image", datasets.Image())
