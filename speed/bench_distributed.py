"""Throughput of scoring on Ray Data (capeval.distributed) with 1 and 2 workers, against one process.

For each offline configuration asked for (default: CIDEr-D, two passes over a text metric, and
BERT-TBR with all-MiniLM-L6-v2 standing in for bert-base-uncased, two passes with a model), scores
Flickr8k-Expert's 5,822 rows (``--copies`` times over) in
  1. one process: the evaluate module's ``compute``, models loaded first (not timed),
  2. Ray Data with 1 actor, then with 2, end to end (statistics pass, actor start and model load, scoring),
checks that the Ray scores equal the single-process ones, and prints rows/s and Ray's overhead
(its time with 1 worker over the single-process time, minus one).

Without ``--address`` a local Ray instance starts with ``--num-cpus`` logical CPUs (default 4: a pool
of 2 actors on a 2-core machine must leave a CPU for Ray Data's own tasks); with it, the run joins that
cluster (``ray.init(address=...)``) and ``--workers`` can go as high as its resources allow.

Usage: python speed/bench_distributed.py [--runs CIDEr-D,BERT-TBR] [--copies N] [--workers 1,2]
                                              [--address ray://head:10001 | --num-cpus 4]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")

import ray  # noqa: E402

import capeval  # noqa: E402
from capeval.benchmarks import load_benchmark  # noqa: E402
from capeval.distributed import ERROR_COLUMN, make_scorer, score_dataset  # noqa: E402
from capeval.registry import offline_runs  # noqa: E402


def single_process(run, options, rows) -> tuple[float, list[float]]:
    """Seconds to score ``rows`` with the module's ``compute`` (models loaded beforehand) and the scores."""
    module = capeval.load(run.metric, **options)
    module.compute(predictions=[r["candidate"] for r in rows[:8]], references=[r["references"] for r in rows[:8]])
    start = time.perf_counter()
    result = module.compute(predictions=[r["candidate"] for r in rows], references=[r["references"] for r in rows])
    return time.perf_counter() - start, result[run.column or "scores"]


def on_ray(run, options, rows, workers: int) -> tuple[float, list[float]]:
    """Seconds to score ``rows`` on Ray with ``workers`` actors, end to end, and the scores in row order."""
    column = run.column or make_scorer(run.metric, **options).primary
    start = time.perf_counter()
    scored = score_dataset(ray.data.from_items(rows), run.metric, num_workers=workers, **options).take_all()
    seconds = time.perf_counter() - start
    assert not any(row[ERROR_COLUMN] for row in scored)
    return seconds, [row[column] for row in sorted(scored, key=lambda row: row["id"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="CIDEr-D,BERT-TBR", help="offline configurations by label (capeval.registry)")
    parser.add_argument("--copies", type=int, default=1, help="score the 5,822 rows this many times over")
    parser.add_argument("--workers", default="1,2", help="actor pool sizes to time")
    parser.add_argument("--address", help="a running Ray cluster to join (default: start a local instance)")
    parser.add_argument("--num-cpus", type=int, default=4, help="logical CPUs of the local instance")
    args = parser.parse_args()
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    source = [row for row in load_benchmark("flickr8k_expert")]
    rows = [{"id": copy * len(source) + i, "candidate": row["candidate"], "references": row["references"]}
            for copy in range(args.copies) for i, row in enumerate(source)]
    print(f"Flickr8k-Expert: {len(rows):,} rows; Ray resources {ray.cluster_resources()}; {os.cpu_count()} cores here")
    # Warm vs warm: models load before the one-process timing; Ray's task workers start before its timings, and
    # each Ray run includes its actors' start and model load (its cold part, which the overhead column counts).
    print(f"load average {os.getloadavg()[0]:.1f}; one process warm (models loaded) vs Ray with workers started")
    print("\n| run | engine | s | rows/s | max abs diff |\n|---|---|---|---|---|")
    runs = {run.label: run for run in offline_runs()}
    for label in args.runs.split(","):
        run = runs[label]
        options = run.resolved_options()
        if options is None:
            print(f"| {label} | not available here | | | |")
            continue
        on_ray(run, options, rows[:256], 1)  # starts Ray Data's task workers, so that both pool sizes find them warm
        local_seconds, expected = single_process(run, options, rows)
        print(f"| {label} | one process | {local_seconds:.1f} | {len(rows) / local_seconds:,.0f} | |")
        for workers in map(int, args.workers.split(",")):
            seconds, scores = on_ray(run, options, rows, workers)
            difference = max(abs(a - b) for a, b in zip(scores, expected))
            overhead = f" (overhead {seconds / local_seconds - 1:+.0%})" if workers == 1 else ""
            print(f"| {label} | Ray, {workers} worker{'s' if workers > 1 else ''}{overhead} | {seconds:.1f} | "
                  f"{len(rows) / seconds:,.0f} | {difference:.1e} |")
    ray.shutdown()


if __name__ == "__main__":
    main()
