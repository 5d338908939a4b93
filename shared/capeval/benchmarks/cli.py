"""``capeval benchmark``: run the meta-evaluation harness from the command line.

    capeval benchmark --metric bleu --metric cider --dataset flickr8k_expert --output results/
    capeval benchmark --metric path/to/my_metric --option model_name=... --dataset pascal50s --protocol refs=random5:0
    capeval benchmark --metric bleu:order=1 --metric bleu:order=4 --dataset all    # per-metric options after ':'
    capeval benchmark --metric cider --dataset polaris --data /data    # /data/polaris holds polaris_test.csv
    capeval benchmark --metric amber --dataset amber --results responses.json      # AMBER's generative evaluation
"""

from __future__ import annotations

import argparse
from pathlib import Path

from capeval.usage import UsageError, add_output_arguments, check_output


def load_metric(spec: str, options: dict):
    """An evaluate module from a folder or .py path, or a capeval metric's scorer from ``name[:key=value,...]`` (scored
    as its module would, without ``evaluate``); ``options`` (``--option``) go to either."""
    from capeval.registry import METRICS, UnknownMetricError, resolve, split_spec

    try:
        # A registry name wins over a file of that name in the working folder: scoring it needs no evaluate.
        if split_spec(spec)[0] not in METRICS and Path(spec).exists():
            import evaluate

            return evaluate.load(spec, **options)
        return resolve(spec, options)
    except UnknownMetricError as error:
        raise UsageError(f"--metric {spec}: {error}; or give an evaluate module path") from None
    except (TypeError, ValueError) as error:  # an unknown option or a bad value, named by the scorer
        raise UsageError(f"--metric {spec}: {error}") from None


def check_folder(flag: str, folder: str | None) -> None:
    """A ``--images``/``--features`` folder must exist and hold files."""
    if folder is not None and (not Path(folder).is_dir() or not any(Path(folder).iterdir())):
        raise UsageError(f"{flag} {folder}: {'no such folder' if not Path(folder).is_dir() else 'the folder is empty'}")


def run(args: argparse.Namespace) -> int:
    from capeval.benchmarks.harness import as_scoring_metric, results_markdown, run_benchmarks, write_outputs
    from capeval.benchmarks.released import BenchmarkFileError, data_note
    from capeval.benchmarks.rowsets import BENCHMARKS, with_data
    from capeval.benchmarks.stats import UndefinedCorrelation
    from capeval.evaluation import run_labels
    from capeval.registry import parse_options, spec_options

    check_output(args, folder=True)
    if args.samples < 0:
        raise UsageError(f"--samples {args.samples}: give 0 (no confidence intervals) or more")
    if "amber" in args.dataset:
        return run_amber(args)
    check_folder("--images", args.images)
    check_folder("--features", args.features)
    datasets = list(dict.fromkeys(args.dataset))
    if "all" in datasets:
        datasets, missing = with_data(data_root=args.data)
        print(data_note(missing))
    try:
        options = parse_options(args.option, "--option")
        protocol = parse_options(args.protocol, "--protocol")
    except ValueError as error:
        raise UsageError(str(error)) from None
    accepted = {name: BENCHMARKS[name].options() for name in datasets}
    unknown = sorted(set(protocol) - {option for names in accepted.values() for option in names})
    if unknown:
        raise UsageError(f"--protocol {unknown}: no chosen benchmark takes it; they take "
                         + "; ".join(f"{name}: {names or 'none'}" for name, names in accepted.items()))
    composite = None
    if args.composite_references and "composite" in datasets:
        from capeval.benchmarks.references import composite_with_references

        composite = composite_with_references(args.composite_references)
    metrics = [load_metric(spec, options) for spec in args.metric]  # every metric is checked before any is scored
    try:
        labels = run_labels([spec_options(spec, options) for spec in args.metric])  # distinct, or one line naming the clash
    except ValueError as error:
        raise UsageError(f"--metric: {error}") from None
    scorings = []
    for metric, label in zip(metrics, labels):
        try:
            scorings.append(as_scoring_metric(metric, args.score_key, label))
        except ValueError as error:
            raise UsageError(f"--score-key: {error}") from None
    results = []
    for scoring in scorings:
        for dataset in datasets:
            # Protocol options apply to the benchmarks that take them.
            chosen = {k: v for k, v in protocol.items() if k in accepted[dataset]}
            try:
                source = composite if dataset == "composite" else released_source(dataset, args.data)
                results += run_benchmarks(scoring, [dataset], source=source, images_dir=args.images, features_dir=args.features,
                                          num_samples=args.samples, seed=args.seed, ties=args.ties, verbose=False, **chosen)
            except (FileNotFoundError, BenchmarkFileError, UndefinedCorrelation) as error:  # missing or unusable data
                raise UsageError(str(error)) from None
    print(results_markdown(results))
    if args.output:
        for path in write_outputs(results, args.output, plots=not args.no_plots, overwrite=args.overwrite):
            print(f"wrote {path}")
    return 0


def released_source(dataset: str, data_root: str | None) -> str | None:
    """The folder of a released benchmark's files under ``--data`` (``None``: capeval's data folder)."""
    from capeval.benchmarks.rowsets import BENCHMARKS

    return None if data_root is None or BENCHMARKS[dataset].bundled else str(Path(data_root) / dataset)


def run_amber(args: argparse.Namespace) -> int:
    """``--dataset amber``: AMBER's generative evaluation of ``--results`` (a JSON of ``{id, response}``) by each
    ``--metric amber[:options]``."""
    from capeval.benchmarks.amber import evaluate_results, results_table, write_results
    from capeval.registry import parse_options, split_spec

    if args.dataset != ["amber"]:
        raise UsageError("--dataset amber scores a results file: run it alone, not with other benchmarks")
    if not args.results:
        raise UsageError("--dataset amber needs --results FILE: the model's responses as AMBER's inference.py reads them, "
                         'a JSON list of {"id": ..., "response": ...}')
    try:
        options = parse_options(args.option, "--option")
    except ValueError as error:
        raise UsageError(str(error)) from None
    rows = []
    for spec in args.metric:
        if split_spec(spec)[0] != "amber":
            raise UsageError(f"--metric {spec}: AMBER's generative set is scored by the amber metric (--metric amber)")
        scorer = load_metric(spec, options)
        try:
            rows.append((spec, evaluate_results(args.results, scorer)))
        except ValueError as error:
            raise UsageError(str(error)) from None
    print(results_table(rows))
    for label, result in rows:
        if result["discriminative_left_out"]:
            print(f"{label}: {result['discriminative_left_out']} answers to discriminative questions left out "
                  "(capeval scores AMBER's generative task)")
    if args.output:
        for path in write_results(rows, args.output, overwrite=args.overwrite):
            print(f"wrote {path}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``benchmark`` command's arguments."""
    from capeval.benchmarks.rowsets import BENCHMARKS
    from capeval.registry import METRICS

    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--metric", action="append", required=True,
                        help=f"a capeval metric ({', '.join(METRICS)}), with options after ':', or an evaluate module path; "
                             "repeatable")
    parser.add_argument("--dataset", action="append", required=True, choices=[*BENCHMARKS, "amber", "all"],
                        help="benchmark to run; repeatable, or 'all' (every human-judgment benchmark whose data is "
                             "here); 'amber': AMBER's generative evaluation of --results with --metric amber")
    parser.add_argument("--data", metavar="DIR",
                        help="folder with one folder of released files per downloaded benchmark (DIR/polaris, "
                             "DIR/nebula, DIR/foil, DIR/longcap_arena); default $CAPEVAL_DATA or ~/.cache/capeval/data")
    parser.add_argument("--results", help="--dataset amber: the responses, a JSON list of {\"id\", \"response\"} as "
                                          "AMBER's inference.py reads")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="metric constructor option for every --metric, e.g. order=2 (JSON values)")
    parser.add_argument("--protocol", action="append", metavar="KEY=VALUE",
                        help="protocol option, e.g. refs=random5:0, candidate_reference=keep, include_self_captions=true")
    parser.add_argument("--ties", choices=["half", "fail"], default="half", help="PASCAL-50S: how a metric tie counts")
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap resamples for the 95%% CIs (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--images", help="folder with the benchmarks' images, for metrics that need them")
    parser.add_argument("--features", help="folder with each image's region features (<image stem>.npz), for image metrics")
    parser.add_argument("--composite-references", metavar="DIR",
                        help="folder with captions_val2014.json and/or the Flickr30k captions (results_20130124.token): "
                             "Composite's COCO and Flickr30k rows get references (else only its Flickr8k rows are scored)")
    parser.add_argument("--score-key", default="scores", help="result key holding per-caption scores")
    add_output_arguments(parser, "write results.md/.csv/.json and scatter plots into this folder", folder=True)
    parser.add_argument("--no-plots", action="store_true", help="skip the scatter plots")
    parser.set_defaults(run=run)
