"""What the command line shares: the one-line error and old flag spellings."""

from __future__ import annotations

import argparse


class UsageError(Exception):
    """A mistake on the command line (an unknown metric, option or protocol key): one line on stderr, exit code 2."""


class RenamedFlag(argparse.Action):
    """An old spelling of a flag: one line saying the flag to use instead."""

    def __init__(self, option_strings, dest, *, use: str, **kwargs):
        self.use = use
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        raise UsageError(f"{option_string} is spelled {self.use} now")


def add_output_arguments(parser: argparse.ArgumentParser, what: str, *, default: str | None = None, folder: bool = False) -> None:
    """``--output`` (``what`` it writes), its old spelling ``--out`` and ``--overwrite``: every command that writes
    results takes these three, and :func:`check_output` applies the one rule to them."""
    parser.add_argument("--output", default=default, help=what + (" (default: %(default)s)" if default else ""))
    parser.add_argument("--out", action=RenamedFlag, use="--output")
    parser.add_argument("--overwrite", action="store_true",
                        help=f"replace an existing --output {'folder' if folder else 'file'} (it is refused otherwise)")


def check_output(args: argparse.Namespace, *, folder: bool = False) -> None:
    """The one ``--output`` rule of every command, applied before any work: an existing output is refused without
    ``--overwrite``, and one that cannot be written (a folder where a file goes, an unwritable place) is a
    :class:`UsageError` now rather than after the scoring."""
    from .atomic import check_writable

    if args.output:
        try:
            check_writable(args.output, overwrite=args.overwrite, folder=folder)
        except OSError as error:  # FileExistsError too
            raise UsageError(f"--output: {error}") from None
