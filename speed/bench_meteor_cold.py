"""METEOR on a cold machine: capeval's Java-free engine, whose first use on a machine builds its paraphrase table
(``capeval.scoring.meteor.build_paraphrase_table``), against pycocoevalcap's jar, which loads the table at every
start, on the same PTB-tokenized captions (SMURF's Karpathy-test ones bundled with capeval).

Each side runs in a fresh Python process that makes two calls on the same inputs (``speed/bench_coco.py``'s
``--side``): capeval first with an empty cache (``CAPEVAL_CACHE`` a new folder: the cold machine, its first call
building the table), then again in a new process on that cache (cold process: the table mapped, not built), the
second call of a process being warm; the jar's calls each start a JVM (as ``COCOEvalCap.evaluate`` does), so its
cold machine and cold process are the same. CPU time counts the process and its finished children (the JVMs); the
whole process (imports, start-up) is timed too. The scores are checked equal (per caption and corpus, to 1e-12).

Usage: python speed/bench_meteor_cold.py [--rows 1000 5000] [--cores 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_coco import caption_rows, largest_difference, timed_process  # noqa: E402  (this folder is on sys.path)

TOLERANCE = 1e-12


def side(name: str, folder: Path, cache: Path) -> dict:
    """One fresh process of ``bench_coco.py --side name``: its two calls' CPU and wall times, its whole-process CPU,
    its scores."""
    output = folder / f"{name}-{len(list(folder.glob('*.out')))}.out"
    command = [sys.executable, str(Path(__file__).with_name("bench_coco.py")), "--side", name, "--input",
               str(folder / "captions.jsonl"), "--calls", "2", "--output", str(output)]
    previous = os.environ.get("CAPEVAL_CACHE")
    os.environ["CAPEVAL_CACHE"] = str(cache)
    try:
        process = timed_process(command)
    finally:
        if previous is None:
            del os.environ["CAPEVAL_CACHE"]
        else:
            os.environ["CAPEVAL_CACHE"] = previous
    return {**json.loads(output.read_text()), "process_cpu": process["cpu"], "process_mib": process["tree_mib"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 5000], help="caption counts to measure")
    parser.add_argument("--cores", type=int, default=2, help="pin every process to this many cores (0: no pinning)")
    args = parser.parse_args()
    if args.cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cores])  # children inherit it
    from capeval.text.ptb import tokenize_corpus

    print("| captions | side | first call CPU (s) | warm call CPU (s) | whole process CPU (s) | peak RSS, process tree "
          "(MiB) | load (1 min) |")
    print("|---|---|---|---|---|---|---|")
    for rows in args.rows:
        folder = Path(tempfile.mkdtemp(prefix="bench_meteor_cold_"))
        captions = caption_rows(rows)
        (folder / "captions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in captions))
        candidates, references = tokenize_corpus([r["candidate"] for r in captions], [r["references"] for r in captions], "ptb")
        (folder / "tokens.json").write_text(json.dumps({"candidates": candidates, "references": references}))
        cache = folder / "cache"  # empty: the cold machine
        results = {}
        for label, name in (("capeval, cold machine (builds the table)", "capeval METEOR"),
                            ("capeval, cold process (table cached)", "capeval METEOR"),
                            ("pycocoevalcap jar (every call starts a JVM)", "pycocoevalcap METEOR")):
            load = os.getloadavg()[0]
            results[label] = result = side(name, folder, cache)
            print(f"| {rows:,} | {label} | {result['cpu_times'][0]:.2f} | {result['cpu_times'][1]:.2f} | "
                  f"{result['process_cpu']:.2f} | {result['process_mib']:.0f} | {load:.1f} |", flush=True)
        jar = results["pycocoevalcap jar (every call starts a JVM)"]
        for label, result in results.items():
            difference = largest_difference(result["scores"], jar["scores"])
            if difference > TOLERANCE:
                raise SystemExit(f"{label} and the jar differ by {difference:.1e} at {rows} captions")
        cold = results["capeval, cold machine (builds the table)"]
        print(f"\n{rows:,} captions: cold machine, whole process: capeval {cold['process_cpu']:.2f} s of CPU against the "
              f"jar's {jar['process_cpu']:.2f} s ({jar['process_cpu'] / cold['process_cpu']:.2f}x); first call "
              f"{cold['cpu_times'][0]:.2f} s against {jar['cpu_times'][0]:.2f} s; scores equal\n", flush=True)


if __name__ == "__main__":
    main()
