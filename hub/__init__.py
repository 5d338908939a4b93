"""capeval's benchmark datasets, one Hub dataset repository per folder; installed inside the package as
``capeval.hub_datasets``, so ``capeval.benchmarks.load_benchmark(name)`` works from a wheel too."""
