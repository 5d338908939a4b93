"""A COCO table at COCO scale, BLEU-1..4 + METEOR + ROUGE-L + CIDEr-D: capeval against pycocoevalcap (and aac-metrics'
BLEU-4 + ROUGE-L + CIDEr-D where it runs); and METEOR alone, capeval's pure-Python engine against pycocoevalcap's jar.

The caption sets are SMURF's Karpathy-test ones bundled with capeval: ``--rows 5000`` is one system's 5,000
captions (~5 references each), ``--rows 20000`` all four systems. Every side runs in a fresh Python process
that times its first call (cold: lazy imports, regex compilation, METEOR's resources (capeval reads its cached
paraphrase table; the jar starts a JVM that loads it), the JVM of the Java tokenizer) and a second call on the same
inputs (warm: nothing carried over from the first call but the process; pycocoevalcap starts a new JVM per call, as
``COCOEvalCap.evaluate`` does). CPU time counts the process and its finished children (the JVMs). The sides:

- ``capeval`` / ``pycocoevalcap``: the whole table from raw captions (PTB tokenization included);
- ``capeval METEOR`` / ``pycocoevalcap METEOR``: METEOR alone on the same PTB-tokenized captions (capeval's
  ``engine="python"``, ``tokenizer="none"``; pycocoevalcap's ``Meteor`` wrapper around the jar).

Peak memory is reported three ways: the Python process alone (its VmHWM), its largest child (a JVM: the child's
VmHWM), and the whole process tree (the largest sum of the RSS of the process and its children alive at the same
time). The children are sampled from /proc every 20 ms, so a peak shorter than that can be missed (Linux only).
Then each side of the table runs once as a whole process, as a user would: ``capeval score --metric bleu --metric
meteor --metric rouge --metric cider`` against a script calling pycocoevalcap. The outputs are checked equal (per
caption and corpus, to 1e-12) and the ratios printed, cold against cold and warm against warm, CPU and wall, with
the machine's load average before each run and at the end.

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
import threading
import time
from pathlib import Path

METRICS = ("bleu", "meteor", "rouge", "cider")
TOLERANCE = 1e-12
#: The per-caption columns each side returns (a side may lack some: aac-metrics has no METEOR here).
COLUMNS = ("bleu_4", "meteor", "rouge_l", "cider")


def caption_rows(rows: int) -> list[dict]:
    """The first ``rows`` captions of SMURF's Karpathy-test sets (system 0 first), raw text with references."""
    from importlib import resources

    import pandas as pd

    golden = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    golden = golden.sort_values("system", kind="stable")
    return [{"candidate": c, "references": list(r)} for c, r in zip(golden.candidate[:rows], golden.references[:rows])]


def capeval_call(candidates, references, tokens) -> dict:
    import capeval

    result = capeval.evaluate(candidates, references, metrics=list(METRICS))
    return {"bleu_4": result.columns["bleu"], "meteor": result.columns["meteor"], "rouge_l": result.columns["rouge_l"],
            "cider": result.columns["cider"], "corpus_bleu": [result.corpus[f"bleu_{k}"] for k in range(1, 5)],
            "corpus_meteor": result.corpus["meteor"]}


def pycocoevalcap_call(candidates, references, tokens) -> dict:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(references)})
    res = tokenizer.tokenize({i: [{"caption": c}] for i, c in enumerate(candidates)})
    corpus_bleu, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    corpus_meteor, meteor = Meteor().compute_score(gts, res)
    return {"bleu_4": list(bleu[3]), "meteor": list(meteor), "rouge_l": list(map(float, Rouge().compute_score(gts, res)[1])),
            "cider": list(map(float, Cider().compute_score(gts, res)[1])), "corpus_bleu": list(corpus_bleu),
            "corpus_meteor": corpus_meteor}


def capeval_meteor_call(candidates, references, tokens) -> dict:
    from capeval.scoring.coco import MeteorScorer

    scores = MeteorScorer(tokenizer="none").score(tokens["candidates"], tokens["references"])
    return {"meteor": scores["meteor"], "corpus_meteor": scores.corpus["meteor"]}


def pycocoevalcap_meteor_call(candidates, references, tokens) -> dict:
    from pycocoevalcap.meteor.meteor import Meteor

    corpus, scores = Meteor().compute_score(dict(enumerate(tokens["references"])),
                                            {i: [candidate] for i, candidate in enumerate(tokens["candidates"])})
    return {"meteor": list(scores), "corpus_meteor": corpus}


def aac_metrics_call(candidates, references, tokens) -> dict:
    from aac_metrics.functional import bleu_4, cider_d, rouge_l
    from aac_metrics.utils.tokenization import preprocess_mono_sents, preprocess_mult_sents

    cands, refs = preprocess_mono_sents(candidates), preprocess_mult_sents(references)
    corpus, sentences = bleu_4(cands, refs, return_all_scores=True)
    return {"bleu_4": sentences["bleu_4"].tolist(), "rouge_l": rouge_l(cands, refs)[1]["rouge_l"].tolist(),
            "cider": cider_d(cands, refs)[1]["cider_d"].tolist(), "corpus_bleu": [None, None, None, float(corpus["bleu_4"])]}


SIDES = {"capeval": capeval_call, "pycocoevalcap": pycocoevalcap_call, "aac-metrics": aac_metrics_call,
         "capeval METEOR": capeval_meteor_call, "pycocoevalcap METEOR": pycocoevalcap_meteor_call}
#: (capeval's side, its peer): the comparisons printed.
PEERS = (("capeval", "pycocoevalcap"), ("capeval", "aac-metrics"), ("capeval METEOR", "pycocoevalcap METEOR"))


def run_side(side: str, input_path: str, calls: int, output: str) -> None:
    """One side in this (fresh) process: ``calls`` timed calls, the last call's scores, peak memory."""
    start = time.perf_counter()
    call = SIDES[side]
    rows = [json.loads(line) for line in Path(input_path).read_text().splitlines()]
    candidates, references = [row["candidate"] for row in rows], [row["references"] for row in rows]
    tokens = json.loads(Path(input_path).with_name("tokens.json").read_text())
    times, cpu_times = [], []
    for _ in range(calls):
        begin, begin_cpu = time.perf_counter(), cpu_seconds()
        scores = call(candidates, references, tokens)
        times.append(time.perf_counter() - begin)
        cpu_times.append(cpu_seconds() - begin_cpu)
    # This process's own high-water mark; the parent samples its children (TreeMemory).
    peak = {"self_mib": (memory_mib() or (0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))[1]}
    Path(output).write_text(json.dumps({"times": times, "cpu_times": cpu_times, "scores": scores, "peak": peak,
                                        "process_s": time.perf_counter() - start}))


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the JVM of a Java tokenizer): on a shared machine
    they move less with the load than wall time does."""
    usage = os.times()
    return usage.user + usage.system + usage.children_user + usage.children_system


class TreeMemory:
    """Peak memory of a process and its descendants, sampled from /proc in a thread (Linux; elsewhere None):
    ``self_mib`` the process's own high-water mark (VmHWM, exact until the last sample), ``children_mib`` the
    largest high-water mark of a descendant (e.g. a JVM), ``tree_mib`` the largest sum of their current RSS.

    The kernel's ru_maxrss would not do: a child forked from a large parent starts with the parent's RSS."""

    INTERVAL = 0.02

    def __init__(self, pid: int):
        self.pid = pid
        self.peaks = {"self_mib": None, "children_mib": None, "tree_mib": None}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        while not self.done.wait(self.INTERVAL):
            tree = {pid: memory_mib(pid) for pid in process_tree(self.pid)}
            tree = {pid: memory for pid, memory in tree.items() if memory}
            if self.pid not in tree:
                continue
            self.raise_peak("self_mib", tree[self.pid][1])
            self.raise_peak("tree_mib", sum(current for current, _ in tree.values()))
            for pid, (_, high) in tree.items():
                if pid != self.pid:
                    self.raise_peak("children_mib", high)

    def raise_peak(self, key: str, mib: float) -> None:
        self.peaks[key] = max(self.peaks[key] or 0.0, mib)

    def stop(self) -> dict:
        self.done.set()
        self.thread.join()
        return self.peaks


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants that are alive, from /proc/PID/task/TID/children."""
    tree, index = [pid], 0
    while index < len(tree):
        for task in Path(f"/proc/{tree[index]}/task").glob("*/children"):
            try:
                tree += [int(child) for child in task.read_text().split()]
            except OSError:  # the task ended meanwhile
                pass
        index += 1
    return tree


def memory_mib(pid: int = 0) -> tuple[float, float] | None:
    """Current and peak RSS (VmRSS, VmHWM) of a process (0: this one) in MiB, or None where /proc lacks them."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines())
        return float(fields["VmRSS"].split()[0]) / 1024, float(fields["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):  # not Linux, or the process ended meanwhile
        return None


def timed_process(command: list[str]) -> dict:
    """Wall and CPU seconds of ``command`` run to the end as its own process (CPU: it and every descendant it waited
    for, e.g. a JVM), with its peak memory in MiB (see :class:`TreeMemory`; 0 where it could not be sampled)."""
    start, start_cpu = time.perf_counter(), children_cpu_seconds()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    memory = TreeMemory(process.pid)
    process.wait()
    seconds, cpu = time.perf_counter() - start, children_cpu_seconds() - start_cpu
    peaks = memory.stop()
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {process.stderr.read().decode()[-2000:]}")
    peaks = {key: mib or 0.0 for key, mib in peaks.items()}
    return {"seconds": seconds, "cpu": cpu, **peaks, "tree_mib": max(peaks["tree_mib"], peaks["self_mib"])}


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def available(side: str) -> str | None:
    """Why ``side`` cannot run here, or None."""
    if side == "aac-metrics":
        try:
            import aac_metrics.functional  # noqa: F401
        except ImportError as error:
            return f"aac-metrics does not import here ({error}; pip install aac-metrics)"
    return None


def largest_difference(ours: dict, theirs: dict) -> float:
    """The largest difference of any per-caption or corpus value both sides computed."""
    pairs = [(a, b) for key in COLUMNS if key in ours and key in theirs for a, b in zip(ours[key], theirs[key], strict=True)]
    pairs += [(a, b) for a, b in zip(ours.get("corpus_bleu", ()), theirs.get("corpus_bleu", ())) if b is not None]
    if "corpus_meteor" in ours and "corpus_meteor" in theirs:
        pairs.append((ours["corpus_meteor"], theirs["corpus_meteor"]))
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
    # METEOR alone scores the captions as the toolkit tokenizes them (capeval's PTB port equals the jar's).
    from capeval.text.ptb import tokenize_corpus

    candidates, references = tokenize_corpus([r["candidate"] for r in rows], [r["references"] for r in rows], "ptb")
    (folder / "tokens.json").write_text(json.dumps({"candidates": candidates, "references": references}))
    print(f"{len(rows):,} captions, {sum(len(r['references']) for r in rows):,} references; "
          f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores; "
          f"load average before {load_before[0]:.1f}")

    this = [sys.executable, __file__]
    results, loads = {}, {}
    for side in SIDES:
        if reason := available(side):
            print(f"skipped {side}: {reason}")
            continue
        output = folder / f"{side}.json"
        loads[side] = os.getloadavg()[0]
        try:
            process = timed_process([*this, "--side", side, "--input", str(input_path), "--calls", "2", "--output", str(output)])
        except RuntimeError as error:
            print(f"skipped {side}: it does not run here ({str(error).strip().splitlines()[-1]})")
            continue
        results[side] = json.loads(output.read_text())
        results[side]["peak"].update(children_mib=process["children_mib"],
                                     tree_mib=max(process["tree_mib"], results[side]["peak"]["self_mib"]))

    print("\nIn process (a fresh Python process per side, two calls on the same inputs; CPU: the process and its JVMs):\n")
    print("| side | load (1 min) | cold call (s) | warm call (s) | cold CPU (s) | warm CPU (s) | peak RSS, Python process "
          "(MiB) | peak RSS, largest child (MiB) | peak RSS, process tree (MiB) | max abs diff vs capeval |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for side, result in results.items():
        mine = next((results[ours] for ours, peer in PEERS if peer == side and ours in results), result)
        difference = largest_difference(mine["scores"], result["scores"])
        peak = result["peak"]
        print(f"| {side} | {loads[side]:.1f} | {result['times'][0]:.2f} | {result['times'][1]:.2f} | "
              f"{result['cpu_times'][0]:.2f} | {result['cpu_times'][1]:.2f} | {peak['self_mib']:.0f} | "
              f"{peak['children_mib']:.0f} | {peak['tree_mib']:.0f} | {difference:.1e} |")
        if difference > TOLERANCE and side.startswith("pycocoevalcap"):
            raise SystemExit(f"capeval and {side} differ by {difference:.1e} (> {TOLERANCE:g})")
    print()
    for ours_name, peer_name in PEERS:
        if ours_name in results and peer_name in results:
            ours, peer = results[ours_name], results[peer_name]
            wall, cpu = (f"cold vs cold {theirs[0] / mine[0]:.2f}x, warm vs warm {theirs[1] / mine[1]:.2f}x"
                         for theirs, mine in ((peer["times"], ours["times"]), (peer["cpu_times"], ours["cpu_times"])))
            print(f"{ours_name} vs {peer_name}, in process: CPU time {cpu}; wall time {wall}; peak RSS of the Python "
                  f"process {peer['peak']['self_mib'] / ours['peak']['self_mib']:.2f}x, of the process tree "
                  f"{peer['peak']['tree_mib'] / ours['peak']['tree_mib']:.2f}x capeval's")

    capeval_cli = Path(sys.executable).with_name("capeval")
    metric_flags = [flag for metric in METRICS for flag in ("--metric", metric)]
    cli_output = folder / "capeval_score.json"
    load_whole = os.getloadavg()[0]
    ours_whole = timed_process([str(capeval_cli), "score", "--input", str(input_path), *metric_flags,
                                "--output", str(cli_output)])
    peer_whole = timed_process([*this, "--side", "pycocoevalcap", "--input", str(input_path), "--calls", "1",
                                "--output", str(folder / "pycocoevalcap_process.json")])
    cli_columns = json.loads(cli_output.read_text())["scores"]
    cli_difference = max(abs(a - b) for key in ("meteor", "rouge_l", "cider")
                         for a, b in zip(cli_columns[key], results["capeval"]["scores"][key]))
    print(f"\nWhole processes (cold, load {load_whole:.1f}): capeval score {ours_whole['cpu']:.2f} s CPU, "
          f"{ours_whole['seconds']:.2f} s wall (peak RSS {ours_whole['self_mib']:.0f} MiB, process tree "
          f"{ours_whole['tree_mib']:.0f} MiB) vs pycocoevalcap script {peer_whole['cpu']:.2f} s CPU, "
          f"{peer_whole['seconds']:.2f} s wall (Python process {peer_whole['self_mib']:.0f} MiB, process tree with its "
          f"JVMs {peer_whole['tree_mib']:.0f} MiB) -> CPU {peer_whole['cpu'] / ours_whole['cpu']:.2f}x, wall "
          f"{peer_whole['seconds'] / ours_whole['seconds']:.2f}x; capeval score equals capeval.evaluate to {cli_difference:.1e}")
    load_after = os.getloadavg()
    print(f"load average (1 min) before {load_before[0]:.1f}, after {load_after[0]:.1f}")

if __name__ == "__main__":
    main()
