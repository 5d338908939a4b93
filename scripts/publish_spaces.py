#!/usr/bin/env python
"""Publish the metric modules (``metrics/<name>``) and suite demos (``spaces/<name>``) as Gradio Spaces.

    python scripts/publish_spaces.py --namespace my-org --dry-run        # build the wheel, stage, list files
    python scripts/publish_spaces.py --namespace my-org bleu suite        # create the Spaces and upload them

A Space gets capeval as a wheel beside its ``app.py``: this script builds the wheel of the checkout
(``pip wheel --no-deps .``), stages each folder with it in a temporary directory, and uploads the stage
with ``HfApi.create_repo(..., repo_type="space", space_sdk="gradio", exist_ok=True)`` and
``HfApi.upload_folder``. A metric Space's ``requirements.txt`` (and ``packages.txt``) is written here from its
scorer's declared extras and Debian packages. Each ``requirements.txt`` names that wheel (``./capeval-<version>-py3-none-any.whl``
with the extras it needs), so the Space installs exactly the code of the checkout. The leaderboard Space also
gets the harness's stored results (``results/baselines``: ``results.json`` and any scatter plots).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {p.name: p for root in (REPO / "metrics", REPO / "spaces") for p in sorted(root.iterdir())
           if (p / "app.py").is_file()}
#: Files a Space shows that live elsewhere in the checkout, copied beside its app.py.
EXTRA_FILES = {"leaderboard": lambda: sorted((REPO / "results" / "baselines").glob("results.json"))
               + sorted((REPO / "results" / "baselines").glob("scatter_*.png"))}


def build_wheel(out_dir: Path) -> Path:
    """The capeval wheel of this checkout, built into ``out_dir``."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out_dir), str(REPO)], check=True)
    (wheel,) = out_dir.glob("capeval-*.whl")
    return wheel


def metric_requirements(name: str, wheel: Path) -> dict[str, str]:
    """A metric Space's ``requirements.txt`` (the wheel with the ``spaces`` extra and the metric's declared extras) and,
    when the metric declares Debian packages, its ``packages.txt``."""
    from capeval.registry import METRICS

    scorer = METRICS[name].scorer_class()
    files = {"requirements.txt": f"./{wheel.name}[{','.join(('spaces', *scorer.extras))}]\n"}
    if scorer.system_packages:
        files["packages.txt"] = "\n".join(scorer.system_packages) + "\n"
    return files


def stage(folder: Path, wheel: Path, root: Path) -> Path:
    """A copy of ``folder`` with the wheel beside ``app.py``; a metric's requirements are written from its declaration,
    a suite Space's must name this wheel."""
    target = root / folder.name
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__"))
    if folder.parent.name == "metrics":
        for name, text in metric_requirements(folder.name, wheel).items():
            (target / name).write_text(text, encoding="utf-8")
    requirements = (target / "requirements.txt").read_text(encoding="utf-8")
    if f"./{wheel.name}[" not in requirements:
        raise SystemExit(f"{folder}/requirements.txt does not name ./{wheel.name}[...]; update it to this version")
    shutil.copy2(wheel, target / wheel.name)
    for extra in EXTRA_FILES.get(folder.name, list)():
        shutil.copy2(extra, target / extra.name)
    return target


def repo_id(namespace: str, name: str) -> str:
    return f"{namespace}/capeval-{name.replace('_', '-')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help=f"Spaces to publish (default: all of {sorted(FOLDERS)})")
    parser.add_argument("--namespace", required=True, help="Hub user or organisation")
    parser.add_argument("--dry-run", action="store_true", help="build and stage, list the files; upload nothing")
    parser.add_argument("--private", action="store_true", help="create private Spaces")
    parser.add_argument("--token", help="Hub token (default: $HF_TOKEN or the stored login)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(FOLDERS))
    if unknown:
        raise SystemExit(f"no Space folder {unknown}; have {sorted(FOLDERS)}")
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp) / "dist")
        staged = [stage(FOLDERS[name], wheel, Path(tmp) / "stage") for name in args.names or FOLDERS]
        if args.dry_run:
            print("Dry run: nothing is uploaded.")
            for folder in staged:
                files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
                print(f"{repo_id(args.namespace, folder.name)} (space, gradio) <- {len(files)} files: {', '.join(map(str, files))}")
            return 0
        from huggingface_hub import HfApi

        api = HfApi(token=args.token)
        for folder in staged:
            repo = repo_id(args.namespace, folder.name)
            api.create_repo(repo, repo_type="space", space_sdk="gradio", private=args.private, exist_ok=True)
            api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="space", commit_message="Upload from capeval")
            print(f"published {repo}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
