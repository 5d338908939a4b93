"""BLEU-1..4 + ROUGE-L + CIDEr-D at COCO scale: capeval against pycocoevalcap (and aac-metrics where it runs).

The caption sets are SMURF's Karpathy-test ones bundled with capeval: ``--rows 5000`` is one system's 5,000
captions (~5 references each), ``--rows 20000`` all four systems. Every side runs in a fresh Python process
that times its first call (cold: lazy imports, regex compilation, the JVM of the Java tokenizer) and a second call
on the same inputs (warm: nothing carried over from the first call but the process), and reports its peak
memory (resource.getrusage: the Python process, and its children such as the JVM). Then each side runs once as a
whole process, as a user would: ``capeval score --metric bleu --metric rouge --metric cider`` against a script
calling pycocoevalcap. The outputs are checked equal (per caption, to 1e-12) and the ratios printed, cold
against cold and warm against warm, with the machine's load average before and after.

Usage: python speed/bench_coco.py [--rows 5000] [--cores 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METRICS = ("bleu", "rouge", "cider")
TOLERANCE = 1e-12


def caption_rows(rows: int) -> list[dict]:
    """The first ``rows`` captions of SMURF's Karpathy-test sets (system 0 first), raw text with references."""
    from importlib import resources

    import pandas as pd

    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden.sort_values("system", kind="stable")
    return [{"candidate": c, "references": list(r)} for c, r in zip(golden.candidate[:rows], golden.references[:rows])]


def capeval_call(candidates, references) -> dict:
    import capeval

    result = capeval.evaluate(candidates, references, metrics=list(METRICS))
    return {"bleu_4": result.columns["bleu"], "rouge_l": result.columns["rouge_l"], "cider": result.columns["cider"],
            "corpus_bleu": [result.corpus[f"bleu_{k}"] for k in range(1, 5)]}


def pycocoevalcap_call(candidates, references) -> dict:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(references)})
    res = tokenizer.tokenize({i: [{"caption": c}] for i, c in enumerate(candidates)})
    corpus_bleu, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    return {"bleu_4": list(bleu[3]), "rouge_l": list(map(float, Rouge().compute_score(gts, res)[1])),
            "cider": list(map(float, Cider().compute_score(gts, res)[1])), "corpus_bleu": list(corpus_bleu)}


def aac_metrics_call(candidates, references) -> dict:
    from aac_metrics.functional import bleu_4, cider_d, rouge_l
    from aac_metrics.utils.tokenization import preprocess_mono_sents, preprocess_mult_sents

    cands, refs = preprocess_mono_sents(candidates), preprocess_mult_sents(references)
    corpus, sentences = bleu_4(cands, refs, return_all_scores=True)
    return {"bleu_4": sentences["bleu_4"].tolist(), "rouge_l": rouge_l(cands, refs)[1]["rouge_l"].tolist(),
            "cider": cider_d(cands, refs)[1]["cider_d"].tolist(), "corpus_bleu": [None, None, None, float(corpus["bleu_4"])]}


SIDES = {"capeval": capeval_call, "pycocoevalcap": pycocoevalcap_call, "aac-metrics": aac_metrics_call}


def run_side(side: str, input_path: str, calls: int, output: str) -> None:
    """One side in this (fresh) process: ``calls`` timed calls, the last call's scores, peak memory."""
    start = time.perf_counter()
    call = SIDES[side]
    rows = [json.loads(line) for line in Path(input_path).read_text().splitlines()]
    candidates, references = [row["candidate"] for row in rows], [row["references"] for row in rows]
    times, cpu_times = [], []
    for _ in range(calls):
        begin, begin_cpu = time.perf_counter(), cpu_seconds()
        scores = call(candidates, references)
        times.append(time.perf_counter() - begin)
        cpu_times.append(cpu_seconds() - begin_cpu)
    peak = {"self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "children_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    Path(output).write_text(json.dumps({"times": times, "cpu_times": cpu_times, "scores": scores, "peak": peak,
                                        "process_s": time.perf_counter() - start}))


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the JVM of a Java tokenizer): on a shared machine
    they move less with the load than wall time does."""
    usage = os.times()
    return usage.user + usage.system + usage.children_user + usage.children_system


def timed_process(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``command`` run to the end as its own process (its children not counted)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {process.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def available(side: str) -> str | None:
    """Why ``side`` cannot run here, or None."""
    if side == "aac-metrics":
        try:
            import aac_metrics.functional  # noqa: F401
        except ImportError as error:
            return f"aac-metrics does not import here ({error}; pip install aac-metrics)"
    return None


def largest_difference(ours: dict, theirs: dict) -> float:
    pairs = [(a, b) for key in ("bleu_4", "rouge_l", "cider") for a, b in zip(ours[key], theirs[key], strict=True)]
    pairs += [(a, b) for a, b in zip(ours["corpus_bleu"], theirs["corpus_bleu"]) if b is not None]
    return max(abs(a - b) for a, b in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5000, help="captions to score (5000: one system, 20000: all four)")
    parser.add_argument("--cores", type=int, default=2, help="pin every process to this many cores (0: no pinning)")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # internal: one side in a fresh process
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        return run_side(args.side, args.input, args.calls, args.output)
    if args.cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cores])  # children inherit it

    load_before = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_coco_"))
    rows = caption_rows(args.rows)
    input_path = folder / "captions.jsonl"
    input_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"{len(rows):,} captions, {sum(len(r['references']) for r in rows):,} references; "
          f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores; "
          f"load average before {load_before[0]:.1f}")

    this = [sys.executable, __file__]
    results = {}
    for side in SIDES:
        if reason := available(side):
            print(f"skipped {side}: {reason}")
            continue
        output = folder / f"{side}.json"
        try:
            timed_process([*this, "--side", side, "--input", str(input_path), "--calls", "2", "--output", str(output)])
        except RuntimeError as error:
            print(f"skipped {side}: it does not run here ({str(error).strip().splitlines()[-1]})")
            continue
        results[side] = json.loads(output.read_text())

    ours = results["capeval"]
    print("\n| side | cold call (s) | warm call (s) | cold CPU (s) | warm CPU (s) | peak RSS, process (MiB) | "
          "peak RSS, children (MiB) | max abs diff vs capeval |")
    print("|---|---|---|---|---|---|---|---|")
    for side, result in results.items():
        difference = 0.0 if side == "capeval" else largest_difference(ours["scores"], result["scores"])
        print(f"| {side} | {result['times'][0]:.2f} | {result['times'][1]:.2f} | {result['cpu_times'][0]:.2f} | "
              f"{result['cpu_times'][1]:.2f} | {result['peak']['self_mib']:.0f} | {result['peak']['children_mib']:.0f} | "
              f"{difference:.1e} |")
        if difference > TOLERANCE and side == "pycocoevalcap":
            raise SystemExit(f"capeval and pycocoevalcap differ by {difference:.1e} (> {TOLERANCE:g})")
    for side, result in results.items():
        if side != "capeval":
            wall, cpu = (f"cold vs cold {peer[0] / mine[0]:.2f}x, warm vs warm {peer[1] / mine[1]:.2f}x"
                         for peer, mine in ((result["times"], ours["times"]), (result["cpu_times"], ours["cpu_times"])))
            print(f"capeval vs {side}, in process: wall time {wall}; CPU time {cpu}")

    capeval_cli = Path(sys.executable).with_name("capeval")
    metric_flags = [flag for metric in METRICS for flag in ("--metric", metric)]
    cli_output = folder / "capeval_score.json"
    ours_s, ours_mib = timed_process([str(capeval_cli), "score", "--input", str(input_path), *metric_flags,
                                      "--output", str(cli_output)])
    peer_s, peer_mib = timed_process([*this, "--side", "pycocoevalcap", "--input", str(input_path), "--calls", "1",
                                      "--output", str(folder / "pycocoevalcap_process.json")])
    cli_columns = json.loads(cli_output.read_text())["scores"]
    cli_difference = max(abs(a - b) for key in ("rouge_l", "cider") for a, b in zip(cli_columns[key], ours["scores"][key]))
    print(f"\nWhole processes (cold): capeval score {ours_s:.2f} s ({ours_mib:.0f} MiB) vs pycocoevalcap script "
          f"{peer_s:.2f} s ({peer_mib:.0f} MiB, its JVM not counted) -> {peer_s / ours_s:.2f}x; "
          f"capeval score equals capeval.evaluate to {cli_difference:.1e}")
    load_after = os.getloadavg()
    print(f"load average (1 min) before {load_before[0]:.1f}, after {load_after[0]:.1f}")


if __name__ == "__main__":
    main()
