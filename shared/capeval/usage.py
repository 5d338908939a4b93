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
