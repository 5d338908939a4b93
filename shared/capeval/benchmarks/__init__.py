"""Meta-evaluation: human-judgment benchmarks, their protocols, and the harness that correlates metrics with them.

>>> from capeval.benchmarks import load_benchmark, prepare
>>> p1 = prepare("flickr8k_expert").correlations[0]
>>> p1.protocol
'P1: mean of 3 expert ratings per caption, 5,664 captions (the 158 self-captions excluded)'
"""

from capeval.benchmarks.harness import BenchmarkResult
from capeval.benchmarks.harness import markdown_table
from capeval.benchmarks.harness import run_benchmark
from capeval.benchmarks.harness import run_benchmarks
from capeval.benchmarks.harness import write_outputs
from capeval.benchmarks.hub import attach_images
from capeval.benchmarks.hub import hub_dir
from capeval.benchmarks.hub import load_benchmark
from capeval.benchmarks.references import attach_references
from capeval.benchmarks.rowsets import BENCHMARKS
from capeval.benchmarks.rowsets import Benchmark
from capeval.benchmarks.rowsets import prepare
from capeval.benchmarks.stats import kendall

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkResult", "attach_images", "attach_references", "hub_dir", "kendall", "load_benchmark",
           "markdown_table", "prepare", "run_benchmark", "run_benchmarks", "write_outputs"]
