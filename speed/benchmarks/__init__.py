"""Every benchmark of the suite, by name: each family module's ``declare()``."""

from __future__ import annotations

import importlib
from dataclasses import replace

from harness import Benchmark

#: The family modules, in the order ``--list`` and the docs show them.
FAMILIES = ("coco", "text", "models", "judges", "chair", "amber", "capture", "lmms", "gpu")


def collect() -> dict[str, Benchmark]:
    found: dict[str, Benchmark] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"benchmarks.{family}")
        for benchmark in module.declare():
            if benchmark.name in found:
                raise ValueError(f"two benchmarks named {benchmark.name}")
            found[benchmark.name] = replace(benchmark, family=family)
    return found


BENCHMARKS = collect()
