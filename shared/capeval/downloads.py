"""``capeval download METRIC... | all``: everything the named metrics declare they need (:mod:`capeval.needs`),
fetched once, with progress bars and checksums, a cut download resumed by the next run.

``--to DIR`` puts all of it in one folder (capeval's cache layout) to copy to a machine without network, where
``CAPEVAL_CACHE=DIR`` makes capeval find it. Offline, each item that cannot be fetched is one line naming its URL, its
expected checksum and the ``--from`` that installs a copy the user brings.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from .models import ModelUnavailableError
from .needs import Need
from .usage import UsageError


def requested(names: list[str]) -> list[str]:
    """The metric names asked for (``all``: every registered metric); ``UsageError`` for an unknown one."""
    from .registry import METRICS, UnknownMetricError, entry

    if "all" in names:
        return list(METRICS)
    for name in names:
        try:
            entry(name)
        except (UnknownMetricError, ValueError) as error:
            raise UsageError(str(error)) from None
    return list(dict.fromkeys(names))


def needs_of(names: list[str]) -> dict[str, tuple[Need, str]]:
    """``key -> (need, first metric needing it)`` for the metrics ``names``: each need once."""
    from .readiness import declared_needs
    from .registry import METRICS

    found: dict[str, tuple[Need, str]] = {}
    for name in names:
        for need in declared_needs(METRICS[name]):
            found.setdefault(need.key, (need, name))
    return found


def offline_line(need: Need, metric: str) -> str:
    """What to do about ``need`` when it cannot be fetched here: its URL, its checksum, the ``--from`` that installs
    a copy.

    >>> from capeval.needs import UrlFile
    >>> offline_line(UrlFile("https://example.org/d/umic.pt", "sha256:ab"), "umic")
    'https://example.org/d/umic.pt (sha256:ab): bring a copy and run capeval download umic --from PATH/umic.pt'
    """
    checksum = need.checksum or "no published checksum"
    return f"{need.source} ({checksum}): bring a copy and run capeval download {metric} --from PATH/{need.file_name}"


def check_cache_writable(folder: Path) -> None:
    """``UsageError`` now, before any download, when capeval's cache folder cannot take a file."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError as error:
        raise UsageError(f"cannot write to {folder} ({error.strerror or error}): point --to (or CAPEVAL_CACHE) at a "
                         "folder you can write") from None


def install_sources(sources: list[str], missing: dict[str, tuple[Need, str]]) -> None:
    """Install each ``--from`` path as the missing need it names (a file or folder named as the download is, or the
    one missing need that capeval can fetch)."""
    fetchable = [(need, metric) for need, metric in missing.values() if need.fetchable]
    for source in sources:
        path = Path(source).expanduser()
        if not path.exists():
            raise UsageError(f"--from {source} does not exist")
        named = [item for item in fetchable if item[0].file_name == path.name]
        if not named and len(fetchable) != 1:
            choices = sorted(need.file_name for need, _ in fetchable)
            raise UsageError(f"--from {source}: no missing item is named {path.name!r}; name the copy as one of {choices}")
        need, metric = (named or fetchable)[0]
        need.install_from(path)
        print(f"- installed {need.title} from {path}")


def missing_keys(names: list[str]) -> set[str]:
    """The keys of the needs of the metrics ``names`` that are not here (:func:`capeval.readiness.lacking`)."""
    from .readiness import lacking
    from .registry import METRICS

    return {need.key for name in names for need in lacking(METRICS[name])[0]}


def fetch(names: list[str], *, sources: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Fetch what the metrics ``names`` need and is missing (after installing ``sources``); returns one line per item
    capeval could fetch but could not have here (offline, or the download failed). What capeval never fetches (a Java
    runtime, a pip package, weights with no public download) is named with its own fix."""
    from .settings import cache_dir, offline

    needs = needs_of(names)
    missing = missing_keys(names)
    if missing:
        check_cache_writable(cache_dir())
    if sources:
        install_sources(list(sources), {key: needs[key] for key in missing})
        missing = missing_keys(names)
    problems = []
    for key, (need, metric) in needs.items():
        if key not in missing:
            print(f"- {need.title}: here")
        elif not need.fetchable:  # named, but no failure of the download: nothing capeval could have fetched
            print(f"- {need.title}: capeval cannot fetch it; {need.fix(metric)}")
        elif offline():
            problems.append(f"{need.title}: offline, not fetched: {offline_line(need, metric)}")
        else:
            try:
                need.fetch()
            except (ModelUnavailableError, OSError, ImportError) as error:
                problems.append(f"{need.title}: {error} -- or {offline_line(need, metric)}")
            else:
                print(f"- {need.title}: fetched")
    return problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``capeval download``: fetch what metrics need once, never while scoring."""
    parser.add_argument("metrics", nargs="+", metavar="METRIC",
                        help="metrics whose models and data to fetch (e.g. spice, clip_score), or all")
    parser.add_argument("--to", metavar="DIR",
                        help="put everything in DIR (to copy to a machine without network: there, set CAPEVAL_CACHE=DIR)")
    parser.add_argument("--from", dest="sources", action="append", default=[], metavar="PATH",
                        help="install a copy you have (a file named as the download, or a checkpoint folder) instead of "
                             "downloading it; repeatable")
    parser.set_defaults(run=run_download)


def run_download(args: argparse.Namespace) -> int:
    from .settings import cache_dir

    names = requested(args.metrics)
    if args.to:
        os.environ["CAPEVAL_CACHE"] = str(Path(args.to).expanduser().resolve())
    problems = fetch(names, sources=args.sources)
    for line in problems:
        print(line)
    if args.to:
        print(f"Everything fetched is in {cache_dir()}: on a machine without network, set CAPEVAL_CACHE={cache_dir()}")
    return 1 if problems else 0
