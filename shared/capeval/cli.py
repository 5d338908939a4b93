"""The ``capeval`` command line.

``capeval score`` scores captions (the bundled Flickr8k-Expert sample by default, JSON lines, COCO-format
results with their annotations, or lmms-eval's logged samples of a caption task) with every metric that runs offline, or the ``--metric``s named;
``capeval benchmark`` runs the meta-evaluation harness. A mistake in the input or the options is one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import warnings
from typing import TYPE_CHECKING, Callable

from .usage import RenamedFlag, UsageError, add_output_arguments, check_output

if TYPE_CHECKING:
    from .scoring.protocol import Scores

#: Above this many rows the per-caption table goes to --output only.
PRINTED_ROWS = 20


def read_input(args: argparse.Namespace) -> tuple[list[dict], str]:
    """The rows to score and where they came from (``--lmms-samples``: rows with no references where the task logs none,
    and the image ids it logs)."""
    from .caption_files import read_coco, read_rows
    from .samples import sample_captions

    if args.lmms_samples:
        from .integrations.lmms_eval.samples import read_lmms_samples

        if args.input or args.results or args.annotations:
            raise UsageError("--lmms-samples is the input: leave out --input, --results and --annotations")
        logged = read_lmms_samples(args.lmms_samples)
        return logged.rows, f"{args.lmms_samples}: lmms-eval samples of {logged.task}"
    if args.results or args.annotations:
        if not (args.results and args.annotations):
            raise UsageError("--results and --annotations go together (COCO caption format)")
        return read_coco(args.results, args.annotations), f"{args.results} against {args.annotations}"
    if args.input:
        return read_rows(args.input), args.input
    return sample_captions(), "bundled Flickr8k-Expert sample"


def runs_from_arguments(args: argparse.Namespace) -> list:
    """The metrics to run: the ``--metric`` specs, else every offline configuration (of the ``--offline`` metrics when
    given); a bad spec is a UsageError."""
    from .evaluation import metric_runs as runs_for
    from .registry import resolve

    if args.metric and args.offline:
        raise UsageError("--metric and --offline do not go together: name metrics with one of them")
    for spec in args.metric or []:
        try:
            resolve(spec)
        except (TypeError, ValueError) as error:
            raise UsageError(f"--metric {spec}: {error}") from None
    try:
        runs = runs_for(args.metric or "offline")
    except ValueError as error:  # two --metric runs that nothing tells apart
        raise UsageError(f"--metric: {error}") from None
    if args.offline:
        wanted = set(args.offline.split(","))
        unknown = sorted(wanted - {run.scorer.metric for run in runs})
        if unknown:
            raise UsageError(f"--offline: no offline configuration of {unknown}; choose from "
                             f"{sorted({run.scorer.metric for run in runs})}")
        runs = [run for run in runs if run.scorer.metric in wanted]
    return runs


def image_names(images: list) -> list:
    """The rows' images, each a file name or an integer id; a UsageError naming the first row with anything else."""
    for row, image in enumerate(images):
        if not isinstance(image, (str, int)) or isinstance(image, bool):
            raise UsageError(f"row {row}: 'image' is {image!r}, not an image file name or id")
    return images


def visual_inputs(args: argparse.Namespace, rows: list[dict], runs: list) -> dict:
    """``images`` (``--images DIR`` + each row's image file) or ``region_features`` (``--features DIR``) when an
    image metric runs; a UsageError saying how to give them when they are missing."""
    image_metrics = [run.label for run in runs if run.scorer.needs_images]
    if not image_metrics:
        return {}
    if all(run.scorer.image_id_example for run in runs if run.scorer.needs_images):
        # Metrics that name each image by an id (CHAIR's COCO ids, AMBER's) open no file: the rows' ids as they are.
        ids = [row.get("image", row.get("image_id")) for row in rows]
        if None in ids:
            raise UsageError(f"row {ids.index(None)} has no image: {', '.join(image_metrics)} need(s) each row's image id "
                             "(an 'image' field, or COCO results' image_id)")
        return {"images": image_names(ids)}
    # Only here: the image helpers' module reads Pillow, which the text-only install lacks.
    from .vision.images import image_paths
    from .vision.regions import feature_paths

    if not (args.images or args.features):
        raise UsageError(f"{', '.join(image_metrics)} need(s) images: pass --images DIR (each row's 'image' file, or COCO "
                         "annotations' images[].file_name) or --features DIR (<image stem>.npz region features)")
    missing = [i for i, row in enumerate(rows) if not row.get("image")]
    if missing:
        raise UsageError(f"row {missing[0]} has no image file name: add an 'image' field to each row (COCO: an 'images' "
                         "table with file_name in the annotations)")
    files = [str(name) for name in image_names([row["image"] for row in rows])]  # an integer id names its file
    try:
        if args.features:
            return {"region_features": feature_paths(files, args.features)}
        return {"images": image_paths(files, args.images)}
    except FileNotFoundError as error:
        raise UsageError(str(error)) from None


def check_logged_samples(args: argparse.Namespace, rows: list[dict], runs: list) -> list[dict]:
    """``--lmms-samples`` rows as the metrics need them: references where a metric needs them (a task that logs none is
    a UsageError naming the metrics that take none) and, with ``--images``, each image id's file in the folder."""
    from .integrations.lmms_eval.samples import image_files

    needing = [run.label for run in runs if run.scorer.needs_references]
    if needing and not all(row["references"] for row in rows):
        raise UsageError(f"{', '.join(needing)} need(s) reference captions, and {args.lmms_samples} logs none: score it "
                         "with metrics that take none, e.g. clip_score or pac_score (with --images), chair with "
                         "annotations= or objects= (image ids)")
    with_images = [run.label for run in runs if run.scorer.needs_images]
    if with_images and (line := next((i for i, row in enumerate(rows, 1) if row.get("image_id") is None), None)):
        raise UsageError(f"{args.lmms_samples}:{line} logs no image id, and {', '.join(with_images)} need(s) each sample's "
                         "image (lmms-eval logs amber_g's only in its 'doc', which 0.4 and later leave out)")
    if args.images and any(run.scorer.needs_images and not run.scorer.image_id_example for run in runs):
        files = image_files([row["image_id"] for row in rows], args.images)
        rows = [{**row, "image": file} for row, file in zip(rows, files)]
    return rows


#: How pycocoevalcap's table names the COCO metrics' values.
COCO_NAMES = {"bleu_1": "Bleu_1", "bleu_2": "Bleu_2", "bleu_3": "Bleu_3", "bleu_4": "Bleu_4", "meteor": "METEOR",
              "rouge_l": "ROUGE_L", "cider": "CIDEr"}


#: The line above the metrics' lines.
SUMMARY_HEADER = "Corpus values (the numbers papers report), each with the mean of the per-caption scores where it differs:"


def summary_line(label: str, result, rows: int) -> str:
    """One metric's line: its corpus value first (corpus BLEU, METEOR's aggregate: what papers report), then the
    per-caption mean, labelled, when it differs, its other corpus values (BLEU-1..4 named as pycocoevalcap names
    them), and its note; values as :func:`~capeval.reports.tables.score_text` writes them (a tiny BLEU-4 is
    ``1.6e-08``, not ``0.0000``)."""
    from .reports.tables import score_text

    column = result.primary[label]
    mean = sum(result.columns[column]) / rows
    corpus = result.corpus[column]
    line = f"- {label}: {score_text(corpus)} corpus" + (" = per-caption mean" if abs(mean - corpus) < 1e-12
                                                         else f", {score_text(mean)} per-caption mean")
    others = [key for key in result.corpus_keys[label] if key != column]
    if others:
        line += " (" + ", ".join(f"{COCO_NAMES.get(key, key)} {score_text(result.corpus[key])}" for key in others) + ")"
    note = result.notes.get(label)
    return line + (f"  [{note}]" if note else "")


def print_dry_run(runs: list, rows: list[dict], visual: dict) -> int:
    """``--dry-run``: what the judge metrics among ``runs`` would send for ``rows``, sending nothing."""
    from .evaluation import dry_run

    plans = dry_run([row["candidate"] for row in rows], [row["references"] for row in rows], images=visual.get("images"),
                    metrics=[run.scorer for run in runs])
    print("\n".join(plan.line() for plan in plans) if plans else "No judge metric among these: nothing would be sent.")
    return 0


def check_spice(runs: list) -> None:
    """Before any work: a SPICE run that cannot start here (no Java, no CoreNLP) is one UsageError, which says how
    to score the other metrics."""
    for run in runs:
        if run.scorer.metric == "spice":
            from .scoring.spice import spice_missing

            if problem := spice_missing():
                others = [other.label for other in runs if other is not run]
                advice = f"; to score {', '.join(others)} without it, leave out --metric spice" if others else ""
                raise UsageError(f"{problem}{advice}")


def run_score(args: argparse.Namespace) -> int:
    from .atomic import partial_file
    from .benchmarks.stats import kendall
    from .evaluation import evaluate_runs
    from .readiness import not_run_line, unused_inputs_line
    from .reports.tables import markdown_table, score_text
    from .scoring.protocol import NotedWarning, score_checked

    check_output(args)
    runs = runs_from_arguments(args)
    check_spice(runs)
    if not args.metric and (left_out := not_run_line(run.scorer.metric for run in runs)):
        print(left_out)
    rows, source = read_input(args)
    if args.lmms_samples:
        rows = check_logged_samples(args, rows, runs)
    visual = visual_inputs(args, rows, runs)
    given = [flag for flag, value in (("--images", args.images), ("--features", args.features)) if value]
    if unused := unused_inputs_line(runs, given):
        print(unused)
    score: Callable[..., Scores] = score_checked
    if args.engine == "ray":
        from .distributed import score_on_ray

        def on_ray(scorer, predictions, references, **inputs):
            if inputs.get("images") is not None or inputs.get("region_features") is not None:
                raise UsageError("--engine ray scores text metrics here; for image metrics use capeval.distributed.score_dataset")
            return score_on_ray(scorer, predictions, references if scorer.needs_references else None,
                                ray_address=args.ray_address)

        score = on_ray
    if args.dry_run:
        return print_dry_run(runs, rows, visual)
    print(f"Scoring {len(rows)} captions ({source}).")
    try:
        with warnings.catch_warnings():  # what such a warning says comes as the metric's note, in its summary line
            warnings.simplefilter("ignore", NotedWarning)
            result = evaluate_runs(runs, [row["candidate"] for row in rows], [row["references"] for row in rows], score=score, **visual)
    except ValueError as error:  # what a metric refuses in the input, named by its label
        raise UsageError(str(error)) from None
    print(SUMMARY_HEADER)
    for run in runs:
        print(summary_line(run.label, result, len(rows)))
    primary = {run.label: result.columns[result.primary[run.label]] for run in runs}
    human = [row.get("human_score") for row in rows]
    has_human = None not in human
    with_human = len(rows) - human.count(None)
    if 0 < with_human < len(rows):
        print(f"\n({with_human} of {len(rows)} rows have a human_score: they are shown and correlated only when every row has one)")
    if len(rows) <= PRINTED_ROWS:
        header = ["#", *(["human"] if has_human else []), *primary, "candidate"]
        table = [[row.get("image_id", i), *([f"{human[i]:.2f}"] if has_human else []), *(score_text(v[i]) for v in primary.values()),
                  row["candidate"]] for i, row in enumerate(rows)]
        print("\n" + markdown_table(header, table))
    else:
        print(f"\n({len(rows)} rows: per-caption scores go to --output)")
    if has_human and len(rows) > 2 and importlib.util.find_spec("scipy") is None:
        print("\n(Kendall τ-b against the human scores needs scipy: pip install 'capeval[benchmarks]')")
    elif has_human and len(rows) > 2:
        print("\nKendall τ-b against the human scores (n = %d; a demo, not a benchmark):" % len(rows))
        for label, values in primary.items():
            print(f"- {label}: {kendall(values, human, 'b'):+.3f}")
    if args.output:
        per_image = [{"image_id": row.get("image_id", i), "candidate": row["candidate"],
                      **{key: values[i] for key, values in result.columns.items()}} for i, row in enumerate(rows)]
        about = {run.label: {"column": result.primary[run.label], "corpus": result.corpus_keys[run.label],
                             "note": result.notes.get(run.label, ""), "hashcode": result.provenance[run.label]} for run in runs}
        document = {"source": source, "system": result.corpus, "metrics": about, "images": per_image, "scores": result.columns}
        with partial_file(args.output, mode="w", overwrite=args.overwrite) as out:
            out.write(json.dumps(document, indent=1))
        print(f"\nWrote {args.output}")
    return 0


def add_score_arguments(score: argparse.ArgumentParser) -> None:
    score.add_argument("--input", help="JSON lines with 'candidate' and 'references' (and 'image' for image metrics; "
                                       "default: the bundled sample)")
    score.add_argument("--lmms-samples", metavar="FILE.jsonl",
                       help="lmms-eval's logged samples of a caption task (--log_samples: <date>_samples_<task>.jsonl, "
                            "lmms-eval 0.2.4 to 0.7.x): its captions with the references and image ids it logs, "
                            "re-scored without generating them again")
    score.add_argument("--results", help="COCO-format results: a JSON list (or JSON lines) of {image_id, caption}")
    score.add_argument("--annotations", help="COCO captions annotations (several captions per image) for --results")
    score.add_argument("--metric", action="append", metavar="NAME[:KEY=VALUE,...]",
                       help="a metric with its options, e.g. cider:idf=flickr8k or bert_tbr:model_name=...,layer=8; "
                            "repeatable (default: every configuration that runs offline)")
    score.add_argument("--offline", metavar="NAME[,NAME...]",
                       help="only the offline configurations of these metrics (default: every one that runs here)")
    score.add_argument("--metrics", action=RenamedFlag, use="--metric NAME (repeatable), or --offline NAME,... for the "
                                                            "offline configurations of some metrics")
    score.add_argument("--dry-run", action="store_true",
                       help="print how many requests and (estimated) tokens the judge metrics would send, and send none")
    score.add_argument("--images", help="folder of the images, for image metrics (each row's 'image' file; with "
                                        "--lmms-samples, the file each logged image id names: <id>.jpg, COCO's names)")
    score.add_argument("--features", help="folder of region features (<image stem>.npz), for image metrics")
    add_output_arguments(score, "write every metric's per-image and corpus values as JSON here")
    score.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (default); ray: Ray Data actors (pip install capeval[ray]; a cluster "
                            "when --ray-address or RAY_ADDRESS is set, else a local Ray instance)")
    score.add_argument("--ray-address", help="the Ray cluster --engine ray joins (default: $RAY_ADDRESS, else a local instance)")
    score.set_defaults(run=run_score)


#: ``command -> (module, help, extras)``: each module has ``add_arguments(parser)``, which sets ``run``. A command's
#: module is imported only when that command runs, so ``capeval --version`` and ``--help`` start at once; ``extras``:
#: capeval's extras it needs beyond the core install (and those of the metrics it runs).
COMMANDS = {
    "score": ("capeval.cli", "score captions with every metric that runs offline, or the ones named", ()),
    "benchmark": ("capeval.benchmarks.cli", "correlate a metric with human judgments on the benchmarks", ("benchmarks",)),
    "smurf-report": ("capeval.reports.smurf", "SMURF system-level report (the paper's Figure 1) as a PNG",
                     ("models", "benchmarks")),
    "reproduce": ("capeval.benchmarks.reproduce", "re-run every cell of the seed papers' correlation tables",
                  ("models", "benchmarks")),
    "download": ("capeval.downloads", "fetch what metrics need (weights, data, CoreNLP) once, never while scoring; "
                 "--to DIR for a machine without network", ()),
    "doctor": ("capeval.readiness", "which metrics run here, and what each of the others lacks", ()),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``score`` command's arguments (every command module has this function)."""
    add_score_arguments(parser)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """capeval's parser, with the arguments of the command named in ``argv`` (the others are listed by name)."""
    import importlib

    from . import __version__

    parser = argparse.ArgumentParser(prog="capeval", description="Image-caption evaluation metrics.")
    parser.add_argument("--version", action="version", version=f"capeval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((arg for arg in (sys.argv[1:] if argv is None else argv) if not arg.startswith("-")), None)
    for name, (module, summary, _) in COMMANDS.items():
        command = commands.add_parser(name, help=summary, description=summary)
        if name == chosen:
            importlib.import_module(module).add_arguments(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .caption_files import CaptionFileError
    from .models import ModelUnavailableError
    from .registry import MissingExtraError
    from .settings import SettingError, check_settings

    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except UsageError as error:  # a renamed flag
        command = next((arg for arg in (sys.argv[1:] if argv is None else argv) if not arg.startswith("-")), None)
        print(f"capeval {command}: {error}" if command else f"capeval: {error}", file=sys.stderr)
        return 2
    if args.command is None:
        parser.print_help()
        return 0
    try:
        check_settings()
        return int(args.run(args) or 0)
    except ModuleNotFoundError as error:
        extras = COMMANDS[args.command][2]
        if isinstance(error, MissingExtraError) or not extras or error.name is None or error.name.startswith("capeval"):
            raise
        print(f"capeval {args.command} needs capeval's {' and '.join(extras)} extra{'s' if len(extras) > 1 else ''} "
              f"({error.name} is not installed): pip install 'capeval[{','.join(extras)}]'", file=sys.stderr)
        return 2
    except (UsageError, CaptionFileError, ModelUnavailableError, FileExistsError, SettingError, MissingExtraError) as error:
        # A mistake in the input, the settings or a checkpoint that cannot be had is the user's to fix, not a crash:
        # say what to do.
        print(f"capeval {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: outputs are written whole or not at all, so one line says everything (130 = 128 + SIGINT).
        print(f"capeval {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
