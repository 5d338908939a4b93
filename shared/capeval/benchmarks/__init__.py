"""Meta-evaluation: human-judgment benchmarks, their protocols, and the harness that correlates metrics with them.

>>> from capeval.benchmarks import load_benchmark, prepare
>>> p1 = prepare("flickr8k_expert").correlations[0]
>>> p1.protocol
'P1: mean of 3 expert ratings per caption, 5,664 captions (the 158 self-captions excluded)'
"""

import importlib

#: Where each public name lives; imported on first use, so ``capeval benchmark --help`` and the command line's
#: start do not load scipy and the harness.
_EXPORTS = {
    "BenchmarkResult": "harness", "results_markdown": "harness", "run_benchmark": "harness", "run_benchmarks": "harness",
    "write_outputs": "harness", "attach_images": "hub", "attach_references": "references", "hub_dir": "folders", "load_benchmark": "hub", "BENCHMARKS": "rowsets",
    "Benchmark": "rowsets", "prepare": "rowsets", "kendall": "stats",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'capeval.benchmarks' has no attribute {name!r}")
    return getattr(importlib.import_module(f"capeval.benchmarks.{_EXPORTS[name]}"), name)
