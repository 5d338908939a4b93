"""Run the docstring examples of every capeval module."""

import doctest
import importlib
import pkgutil

import pytest

import capeval

MODULE_NAMES = sorted(m.name for m in pkgutil.walk_packages(capeval.__path__, "capeval."))


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
