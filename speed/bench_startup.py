"""How long a user waits before capeval does anything: ``capeval --version`` as a whole process, ``import capeval``,
and the first ``capeval.evaluate`` after the import (BLEU alone, and BLEU + ROUGE-L + CIDEr-D, on 5 captions), each
in a fresh process, the best of ``--repeats``; then whether that first call imported torch. Prints the machine's
load average, since on a shared machine these times move with it.

Usage: python speed/bench_startup.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

FIRST_CALL = """
import json, sys, time
start = time.perf_counter()
import capeval
imported = time.perf_counter()
capeval.evaluate(["a dog runs on the grass"] * 5, [["a dog running on grass", "the dog runs"]] * 5, metrics={metrics!r})
print(json.dumps({{"import_s": imported - start, "first_call_s": time.perf_counter() - imported,
                  "torch": "torch" in sys.modules}}))
"""


def best_process_time(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def first_call(metrics: list[str], repeats: int) -> dict:
    """The fastest of ``repeats`` fresh processes: the import time, the first call's time, whether torch came in."""
    runs = [json.loads(subprocess.run([sys.executable, "-c", FIRST_CALL.format(metrics=metrics)], check=True,
                                      capture_output=True, text=True).stdout) for _ in range(repeats)]
    return min(runs, key=lambda run: run["import_s"] + run["first_call_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per measurement; the fastest counts")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = os.getloadavg()[0]
    version_s = best_process_time([str(Path(sys.executable).with_name("capeval")), "--version"], args.repeats)
    print(f"load average (1 min) before: {load_before:.1f}")
    print(f"capeval --version (whole process): {version_s:.2f} s")
    for metrics in (["bleu"], ["bleu", "rouge", "cider"]):
        run = first_call(metrics, args.repeats)
        print(f"import capeval {run['import_s']:.2f} s; first capeval.evaluate({'+'.join(metrics)}) "
              f"{run['first_call_s']:.2f} s; torch imported: {run['torch']}")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
