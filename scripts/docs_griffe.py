"""A griffe extension for the API reference (mkdocs.yml) that reads capeval's docstrings as Markdown: examples
(``>>>`` lines and their output) become fenced ``pycon`` blocks, so ``[0.5, 1.0]`` is not read as a link, and
Sphinx roles (``:func:`capeval.load` ``) become code spans."""

from __future__ import annotations

import re
from typing import Any

import griffe

FENCE = re.compile(r"^\s*(```|~~~)")
SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


def fence_examples(text: str) -> str:
    """Wrap each run of lines that starts with ``>>>`` and ends before a blank line in a ``pycon`` fence.

    >>> fence_examples("Sum:\\n>>> x = 1\\n>>> x + 1\\n2\\n\\nDone.").split("\\n")
    ['Sum:', '```pycon', '>>> x = 1', '>>> x + 1', '2', '```', '', 'Done.']

    An example may end the docstring:

    >>> fence_examples("Sums:\\n>>> 1 + 1\\n2\\n>>> 2 + 2\\n4").split("\\n")
    ['Sums:', '```pycon', '>>> 1 + 1', '2', '>>> 2 + 2', '4', '```']
    """
    out: list[str] = []
    lines = text.split("\n")
    fenced = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if FENCE.match(line):
            fenced = not fenced
        if fenced or not line.lstrip().startswith(">>>"):
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        end = index
        while end < len(lines) and lines[end].strip():
            end += 1
        out += [f"{indent}```pycon", *lines[index:end], f"{indent}```"]
        index = end
    return "\n".join(out)


def as_markdown(docstring: str) -> str:
    """A docstring as the API reference renders it: examples fenced, Sphinx roles as code spans.

    >>> as_markdown(":func:`capeval.evaluate` scores; see :mod:`~capeval.registry`.")
    '`capeval.evaluate` scores; see `capeval.registry`.'
    """
    return SPHINX_ROLE.sub(r"`\1`", fence_examples(docstring))


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = as_markdown(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """The package itself (``capeval``'s own docstring): griffe's object events reach only its members."""
        self.on_object(obj=pkg)
