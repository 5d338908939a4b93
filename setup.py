"""Packaging glue that setup.cfg cannot express: two top-level folders ship inside the capeval package.

``metrics/`` (the evaluate modules, laid out as the Hub shows them) becomes ``capeval.metric_modules``
and ``hub/`` (the benchmark datasets, each a Hub dataset repository) becomes ``capeval.hub_datasets``,
so an installed wheel finds both through importlib and an editable install reads them from the checkout.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

SHIPPED_FOLDERS = {"capeval.metric_modules": "metrics", "capeval.hub_datasets": "hub"}
SHIPPED_FILES = ["*.py", "*.md", "*.txt", "*.parquet"]
#: The library's own data (stop words, samples, reference corpus); listed here because setup()'s package_data
#: replaces setup.cfg's.
RESOURCE_FILES = ["*.txt", "*.json", "*.json.gz", "*.parquet", "*.md", "*.jpg", "*.npz", "*.java", "amber_sample/*"]


def folder_packages(package: str, folder: str) -> list[str]:
    """``package`` and one package per subfolder of ``folder`` (setuptools ships data per package)."""
    subfolders = sorted(p for p in Path(folder).rglob("*") if p.is_dir() and not p.name.startswith((".", "__")))
    return [package] + [".".join([package, *p.relative_to(folder).parts]) for p in subfolders]


shipped = [name for package, folder in SHIPPED_FOLDERS.items() for name in folder_packages(package, folder)]
setup(
    packages=find_namespace_packages("shared", include=["capeval", "capeval.*"]) + shipped,
    package_dir={"": "shared", **SHIPPED_FOLDERS},
    # capeval.integrations.lmms_eval ships its lmms-eval task configs (python -m capeval.integrations.lmms_eval --path).
    package_data={"capeval": ["py.typed"], "capeval.resources": RESOURCE_FILES,
                  "capeval.integrations.lmms_eval.task_configs": ["*.yaml"], **{name: SHIPPED_FILES for name in shipped}},
)
