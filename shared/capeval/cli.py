"""The ``capeval`` command line.

``capeval score`` scores captions (the bundled Flickr8k-Expert sample by default, JSON lines, or COCO-format
results with their annotations) with every metric that runs offline, or the ``--metric``s named;
``capeval benchmark`` runs the meta-evaluation harness. A mistake in the input or the options is one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from .benchmarks.cli import UsageError
from .samples import sample_captions as load_sample

#: Above this many rows the per-caption table goes to --output only.
PRINTED_ROWS = 20


def read_input(args: argparse.Namespace) -> tuple[list[dict], str]:
    """The rows to score and where they came from."""
    from .caption_files import read_coco, read_rows

    if args.results or args.annotations:
        if not (args.results and args.annotations):
            raise UsageError("--results and --annotations go together (COCO caption format)")
        return read_coco(args.results, args.annotations), f"{args.results} against {args.annotations}"
    if args.input:
        return read_rows(args.input), args.input
    return load_sample(), "bundled Flickr8k-Expert sample"


def score_runs(args: argparse.Namespace) -> list[tuple[str, object, str]]:
    """(label, scorer, note) per metric: the ``--metric NAME:key=value`` specs, else every offline configuration."""
    from .benchmarks.cli import metric_label, parse_assignments, split_spec
    from .registry import METRICS, build_scorer, offline_runs

    if args.metric:
        runs = []
        for spec in args.metric:
            name, own = split_spec(spec)
            if name not in METRICS:
                raise UsageError(f"--metric {spec}: no capeval metric {name!r}; choose from {sorted(METRICS)}")
            options = parse_assignments(own, "--metric")
            try:
                runs.append((metric_label(name, options), build_scorer(name, options), ""))
            except (TypeError, ValueError) as error:
                raise UsageError(f"--metric {spec}: {error}") from None
        return runs
    runs = [(run, options) for run in offline_runs() if (options := run.resolved_options()) is not None]
    if args.metrics:
        wanted = set(args.metrics.split(","))
        unknown = wanted - {run.metric for run, _ in runs}
        if unknown:
            raise UsageError(f"no offline metric module named {sorted(unknown)}; choose from {sorted({r.metric for r, _ in runs})}")
        runs = [(run, options) for run, options in runs if run.metric in wanted]
    return [(run.label, build_scorer(run.metric, options), run.note) for run, options in runs]


def run_score(args: argparse.Namespace) -> int:
    from .atomic import partial_file, refuse_existing
    from .benchmarks.stats import kendall
    from .inputs import check_inputs
    from .registry import idf_note
    from .reports.tables import markdown_table
    from .scoring.protocol import main_column

    if args.engine == "ray":
        from .distributed import score_on_ray

    if args.output:
        refuse_existing(args.output, overwrite=args.overwrite)  # before the scoring, not after it
    rows, source = read_input(args)
    predictions = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    print(f"Scoring {len(rows)} captions ({source}).")
    columns: dict[str, list[float]] = {}
    system: dict[str, float] = {}
    about: dict[str, dict] = {}
    for label, scorer, note in score_runs(args):
        checked = check_inputs(scorer, predictions, references)
        scores = score_on_ray(scorer, **checked) if args.engine == "ray" else scorer.score(**checked)
        column = main_column(scorer, scores)
        columns[label], system[label] = scores[column], scores.corpus[column]
        note = "; ".join(part for part in (note, idf_note(scorer, len(rows))) if part)
        about[label] = {"column": column, "note": note, "hashcode": scorer.hashcode(scores)}
        mean = sum(columns[label]) / len(rows)
        corpus = "" if abs(mean - system[label]) < 1e-12 else f", corpus {system[label]:.4f}"
        print(f"- {label}: mean {mean:.4f}{corpus}" + (f"  [{note}]" if note else ""))
    human = [row.get("human_score") for row in rows]
    has_human = None not in human
    if len(rows) <= PRINTED_ROWS:
        header = ["#", *(["human"] if has_human else []), *columns, "candidate"]
        table = [[row.get("image_id", i), *([f"{human[i]:.2f}"] if has_human else []), *(f"{columns[c][i]:.4f}" for c in columns),
                  row["candidate"]] for i, row in enumerate(rows)]
        print("\n" + markdown_table(header, table))
    else:
        print(f"\n({len(rows)} rows: per-caption scores go to --output)")
    if has_human and len(rows) > 2:
        print("\nKendall τ-b against the human scores (n = %d; a demo, not a benchmark):" % len(rows))
        for label, scores in columns.items():
            print(f"- {label}: {kendall(scores, human, 'b'):+.3f}")
    if args.output:
        per_image = [{"image_id": row.get("image_id", i), "candidate": row["candidate"], **{c: columns[c][i] for c in columns}}
                     for i, row in enumerate(rows)]
        document = {"source": source, "system": system, "metrics": about, "images": per_image, "scores": columns}
        with partial_file(args.output, mode="w", overwrite=args.overwrite) as out:
            out.write(json.dumps(document, indent=1))
        print(f"\nWrote {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="capeval", description="Image-caption evaluation metrics.")
    parser.add_argument("--version", action="version", version=f"capeval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="score captions with every metric that runs offline, or the ones named")
    score.add_argument("--input", help="JSON lines with 'candidate' and 'references' (default: the bundled sample)")
    score.add_argument("--results", help="COCO-format results: a JSON list (or JSON lines) of {image_id, caption}")
    score.add_argument("--annotations", help="COCO captions annotations (several captions per image) for --results")
    score.add_argument("--metric", action="append", metavar="NAME[:KEY=VALUE,...]",
                       help="a metric with its options, e.g. cider:idf=flickr8k or bert_tbr:model_name=...,layer=8; repeatable")
    score.add_argument("--metrics", help="comma-separated offline configurations to run (default: all of them)")
    score.add_argument("--output", help="write per-image and system-level scores as JSON here")
    score.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (default); ray: Ray Data actors (pip install capeval[ray]; a cluster "
                            "when RAY_ADDRESS is set, else a local Ray instance)")
    score.add_argument("--overwrite", action="store_true", help="replace an existing --output file (it is refused otherwise)")
    score.set_defaults(run=run_score)
    from .reports import smurf

    smurf.register(commands)
    from .benchmarks import cli as benchmark_cli

    benchmark_cli.register(commands)
    from .benchmarks import reproduce

    reproduce.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .caption_files import CaptionFileError
    from .models import ModelUnavailableError

    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (UsageError, CaptionFileError, ModelUnavailableError, FileExistsError) as error:
        # A mistake in the input or a checkpoint that cannot be had is the user's to fix, not a crash: say what to do.
        print(f"capeval {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: outputs are written whole or not at all, so one line says everything (130 = 128 + SIGINT).
        print(f"capeval {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
