#!/usr/bin/env python
"""Publish the benchmark folders under ``hub/`` as Hugging Face Hub dataset repositories.

    python scripts/publish_hub.py --namespace my-org --dry-run          # list what would be uploaded
    python scripts/publish_hub.py --namespace my-org flickr8k_expert    # create the repo and upload the folder

Each folder becomes ``<namespace>/<name with - for _>`` (e.g. ``my-org/flickr8k-expert``), created with
``HfApi.create_repo(..., repo_type="dataset", exist_ok=True)`` and filled with ``HfApi.upload_folder``.
The token comes from ``--token``, ``$HF_TOKEN`` or ``huggingface-cli login``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HUB = Path(__file__).resolve().parents[1] / "hub"


def benchmark_folders(names: list[str] | None = None) -> list[Path]:
    """The benchmark folders with their data (the cards of benchmarks read from released files hold none)."""
    cards = sorted(p for p in HUB.iterdir() if (p / "README.md").is_file())
    folders = [p for p in cards if any((p / "data").glob("*.parquet"))]
    if names:
        card_only = sorted(set(names) & {p.name for p in cards} - {p.name for p in folders})
        if card_only:
            raise SystemExit(f"{card_only}: a card only, the data is its authors' release; "
                             f"capeval.benchmarks.released.write_hub_folder builds a folder to publish where its licence allows")
        unknown = sorted(set(names) - {p.name for p in folders})
        if unknown:
            raise SystemExit(f"no benchmark folder {unknown} in {HUB}; have {[p.name for p in folders]}")
        folders = [p for p in folders if p.name in names]
    return folders


def repo_id(namespace: str, folder: Path) -> str:
    return f"{namespace}/{folder.name.replace('_', '-')}"


def plan(namespace: str, folders: list[Path]) -> list[str]:
    """One line per repository and per file it would receive."""
    lines = []
    for folder in folders:
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        lines.append(f"{repo_id(namespace, folder)} (dataset) <- {folder}: {len(files)} files, "
                     f"{sum(p.stat().st_size for p in files) / 1024:.0f} KiB")
        lines += [f"    {p.relative_to(folder)}  {p.stat().st_size:,} bytes" for p in files]
    return lines


def publish(namespace: str, folders: list[Path], *, private: bool = False, token: str | None = None) -> list[str]:
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    urls = []
    for folder in folders:
        repo = repo_id(namespace, folder)
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset",
                          commit_message=f"Upload {folder.name} from capeval")
        urls.append(repo)
    return urls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="benchmark folders to publish (default: all)")
    parser.add_argument("--namespace", required=True, help="Hub user or organisation")
    parser.add_argument("--dry-run", action="store_true", help="list the repositories and files; upload nothing")
    parser.add_argument("--private", action="store_true", help="create private repositories")
    parser.add_argument("--token", help="Hub token (default: $HF_TOKEN or the stored login)")
    args = parser.parse_args(argv)
    folders = benchmark_folders(args.names)
    if args.dry_run:
        print("\n".join(["Dry run: nothing is uploaded.", *plan(args.namespace, folders)]))
        return 0
    for repo in publish(args.namespace, folders, private=args.private, token=args.token):
        print(f"published {repo}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
