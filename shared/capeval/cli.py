"""The ``capeval`` command line.

``capeval score`` scores captions (the bundled Flickr8k-Expert sample by default) with
every metric that runs offline; ``capeval benchmark`` runs the meta-evaluation harness.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path


def load_sample() -> list[dict]:
    """The bundled sample: 16 Flickr8k-Expert rows (4 per human-score band) with 5 references each."""
    text = resources.files("capeval").joinpath("resources", "sample_captions.json").read_text(encoding="utf-8")
    return json.loads(text)["rows"]


def read_rows(path: str | None) -> list[dict]:
    if path is None:
        return load_sample()
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, row in enumerate(rows):
        if "candidate" not in row or "references" not in row:
            raise ValueError(f"{path}:{i + 1}: each JSON line needs 'candidate' and 'references'")
    return rows


def run_score(args: argparse.Namespace) -> int:
    from .benchmarks.stats import kendall
    from .registry import load, offline_runs
    from .reports.tables import markdown_table

    rows = read_rows(args.input)
    predictions = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    columns: dict[str, list[float]] = {}
    print(f"Scoring {len(rows)} captions{' (bundled Flickr8k-Expert sample)' if args.input is None else ''}.")
    runs = [(run, options) for run in offline_runs() if (options := run.resolved_options()) is not None]
    if args.metrics:
        wanted = set(args.metrics.split(","))
        unknown = wanted - {run.metric for run, _ in runs}
        if unknown:
            raise SystemExit(f"capeval score: no offline metric module named {sorted(unknown)}; choose from {sorted({r.metric for r, _ in runs})}")
        runs = [(run, options) for run, options in runs if run.metric in wanted]
    for run, options in runs:
        if args.engine == "ray":
            from .distributed import compute

            result = compute(run.metric, predictions, references, **options)
        else:
            result = load(run.metric, **options).compute(predictions=predictions, references=references)
        columns[run.label] = result[run.key]
        print(f"- {run.label}: mean {sum(result[run.key]) / len(rows):.4f}" + (f"  [{run.note}]" if run.note else ""))
    human = [row.get("human_score") for row in rows]
    has_human = None not in human
    header = ["#", *(["human"] if has_human else []), *columns, "candidate"]
    table = [[i, *([f"{human[i]:.2f}"] if has_human else []), *(f"{columns[c][i]:.4f}" for c in columns), row["candidate"]]
             for i, row in enumerate(rows)]
    print("\n" + markdown_table(header, table))
    if has_human:
        print("\nKendall τ-b against the human scores (n = %d; a demo, not a benchmark):" % len(rows))
        for label, scores in columns.items():
            print(f"- {label}: {kendall(scores, human, 'b'):+.3f}")
    if args.output:
        Path(args.output).write_text(json.dumps({"rows": rows, "scores": columns}, indent=1), encoding="utf-8")
        print(f"\nWrote {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capeval", description="Image-caption evaluation metrics.")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="score captions with every metric that runs offline")
    score.add_argument("--input", help="JSON lines with 'candidate' and 'references' (default: the bundled sample)")
    score.add_argument("--output", help="write the scores as JSON here")
    score.add_argument("--metrics", help="comma-separated metric names to run (default: every offline configuration)")
    score.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (default); ray: Ray Data actors (pip install capeval[ray]; a cluster "
                            "when RAY_ADDRESS is set, else a local Ray instance)")
    score.set_defaults(run=run_score)
    from .reports import smurf

    smurf.register(commands)
    from .benchmarks import cli as benchmark_cli

    benchmark_cli.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .models import ModelUnavailableError

    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except ModelUnavailableError as error:
        # A checkpoint that cannot be had is a user-facing condition, not a crash: say what to do.
        print(f"capeval {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
