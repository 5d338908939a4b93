"""Peak memory and time of one large text-metric call, each configuration in a fresh process.

Synthetic captions (``--rows`` of them, ``--references`` references each): words drawn from a Zipf-like vocabulary
of 20,000 made-up words, 8 to 15 words a caption with a period, the same seed on every run. Each configuration
(``--metrics``: comma-separated lists, one configuration per ``;``) runs ``capeval.evaluate`` once in a fresh
Python process and prints its wall and CPU seconds, the process's peak RSS (``resource.getrusage``: ru_maxrss),
its RSS before the call (the captions and the imports), and what the kept text work holds after it
(``capeval.text.call_cache.kept_text_work``: its own estimate, and its entries).

Usage: python speed/bench_memory.py [--rows 200000] [--references 5] [--metrics "bleu,rouge,cider;meteor"]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")


def synthetic_captions(rows: int, references: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """``rows`` candidates and ``references`` references each, all distinct sentences in practice."""
    import numpy as np

    generator = np.random.default_rng(seed)
    syllables = ["ka", "to", "ri", "mu", "se", "la", "no", "pe", "vi", "du", "ga", "zo"]
    vocabulary = ["".join(generator.choice(syllables, size=generator.integers(1, 5))) + str(i % 7 or "")
                  for i in range(20000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    total = rows * (references + 1)
    lengths = generator.integers(8, 16, size=total)
    words = generator.choice(len(vocabulary), size=int(lengths.sum()), p=weights)
    sentences, at = [], 0
    for length in lengths.tolist():
        sentences.append(" ".join(vocabulary[w] for w in words[at:at + length].tolist()) + ".")
        at += length
    candidates = sentences[:rows]
    grouped = [sentences[rows + i * references: rows + (i + 1) * references] for i in range(rows)]
    return candidates, grouped


def one_side(rows: int, references: int, metrics: list[str]) -> dict:
    """Score once in this process; the figures as a dict."""
    import capeval
    from capeval.text.call_cache import kept_text_work

    candidates, grouped = synthetic_captions(rows, references)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    result = capeval.evaluate(candidates, grouped, metrics=metrics)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    work = kept_text_work()
    return {"metrics": metrics, "rows": rows, "references": references, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "rss_before_call_mb": before // 1024, "kept_estimate_mb": work.size // 2**20,
            "kept_lines_mb": work.lines.bytes // 2**20, "kept_chunks_mb": work.chunks.bytes // 2**20,
            "kept_entries": len(work), "corpus": {key: round(value, 4) for key, value in result.corpus.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200000)
    parser.add_argument("--references", type=int, default=5)
    parser.add_argument("--metrics", default="bleu,rouge,cider", help="configurations separated by ';'")
    parser.add_argument("--side", action="store_true", help=argparse.SUPPRESS)  # internal: one configuration
    args = parser.parse_args()
    if args.side:
        print(json.dumps(one_side(args.rows, args.references, args.metrics.split(","))))
        return
    print(f"load average {os.getloadavg()[0]:.1f}, CAPEVAL_ENCODING_CACHE_MB={os.environ.get('CAPEVAL_ENCODING_CACHE_MB', '(default)')}")
    for configuration in args.metrics.split(";"):
        command = [sys.executable, __file__, "--side", "--rows", str(args.rows), "--references", str(args.references),
                   "--metrics", configuration]
        print("$", " ".join(command[1:]), flush=True)
        print(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip(), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
