"""The two text kernels of a COCO call, before and after a change, in one process: PTB tokenization (the pure-Python
port, ``capeval.text.ptb``) and the n-gram index that BLEU and CIDEr-D read (``capeval.scoring.ngram``), on SMURF's
Karpathy-test captions bundled with capeval (``--rows 5000``: one system's 5,000 captions and their ~25,000
references, as one ``capeval.evaluate`` call tokenizes and indexes them).

"Before" is the code of a git revision (``--before``, default ``main``), read with ``git show`` into this process;
"after" is this checkout's. Each kernel is timed cold, as the first call of a process meets it: nothing kept from an
earlier call (``capeval.models.clear_feature_caches()`` before each run), its least CPU time over ``--repeats`` runs
(CPU time moves less than wall time with the load of a shared machine). The outputs are checked equal: the tokens,
and BLEU's statistics and CIDEr-D from each index. Then what the kernels cost in a repeated call with new candidates
and the same references (a training loop's next evaluation): "before" kept nothing across calls, so it is its cold
time; "after" is the least of three calls, each with another captioner's candidates, once the references are kept.

Usage: python speed/bench_text_kernels.py [--rows 5000] [--before main] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from itertools import chain
from pathlib import Path

import numpy as np

from bench_coco import caption_rows
from capeval.models import clear_feature_caches
from capeval.scoring import ngram
from capeval.text import ptb

ROOT = Path(__file__).resolve().parents[1]


def module_at(revision: str, module: str):
    """``capeval.<module>`` as it is at git ``revision``, loaded beside this checkout's (its relative imports resolve
    to this checkout's package)."""
    source = subprocess.run(["git", "show", f"{revision}:shared/capeval/{module.replace('.', '/')}.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    name = f"capeval.{module}"
    spec = importlib.util.spec_from_loader(f"{name}_at_{revision.replace('-', '_')}", loader=None)
    loaded = importlib.util.module_from_spec(spec)
    loaded.__package__ = name.rpartition(".")[0]
    exec(compile(source, f"{revision}:{module}", "exec"), loaded.__dict__)
    return loaded


def least_cpu(function, repeats: int):
    """``(value, least CPU seconds)`` of ``repeats`` cold runs."""
    times = []
    for _ in range(repeats):
        clear_feature_caches()
        start = time.process_time()
        value = function()
        times.append(time.process_time() - start)
    return value, min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5000, help="captions (5000: one system of the Karpathy test split)")
    parser.add_argument("--before", default="main", help="git revision of the code to compare with")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = caption_rows(args.rows)
    candidates = tuple(row["candidate"] for row in rows)
    references = [row["references"] for row in rows]
    flat = tuple(chain.from_iterable(references))
    old_ptb, old_ngram = module_at(args.before, "text.ptb"), module_at(args.before, "scoring.ngram")
    print(f"{len(candidates):,} captions, {len(flat):,} references; before = {args.before}; least CPU time of "
          f"{args.repeats} cold runs; load average {os.getloadavg()[0]:.1f}\n")

    def tokenize(module):
        return lambda: (module.python_tokenize(candidates), module.python_tokenize(flat))

    (old_candidates, old_references), old_tokens_s = least_cpu(tokenize(old_ptb), args.repeats)
    (new_candidates, new_references), new_tokens_s = least_cpu(tokenize(ptb), args.repeats)
    if (old_candidates, old_references) != (list(new_candidates), list(new_references)):
        raise SystemExit("the tokenizations differ")

    tokenized = [list(new_references[start:start + len(refs)])
                 for start, refs in zip(np.cumsum([0, *map(len, references)]), references)]
    old_index, old_index_s = least_cpu(lambda: old_ngram.NgramIndex([*new_candidates, *new_references], 4), args.repeats)
    new_index, new_index_s = least_cpu(lambda: ngram.ngram_index(tuple(new_candidates), tuple(new_references), 4),
                                       args.repeats)
    del old_index, new_index
    old_bleu, new_bleu = old_ngram.bleu_statistics(new_candidates, tokenized), ngram.bleu_statistics(new_candidates, tokenized)
    old_cider, new_cider = old_ngram.cider_d(new_candidates, tokenized), ngram.cider_d(new_candidates, tokenized)
    cider_difference = float(np.abs(np.subtract(old_cider, new_cider)).max())
    if old_bleu != new_bleu or cider_difference > 1e-12:
        raise SystemExit(f"the indexes give different scores (BLEU statistics equal: {old_bleu == new_bleu}; "
                         f"CIDEr-D {cider_difference:.1e} apart)")

    clear_feature_caches()
    ngram.ngram_index(tuple(ptb.python_tokenize(candidates)), tuple(ptb.ptb_tokenize(list(flat))), 4)
    others = iter([tuple(row["candidate"] for row in caption_rows(4 * 5000)[start:start + len(rows)]) for start in (5000, 10000, 15000)])
    repeated_tokens_s = repeated_index_s = float("inf")
    for _ in range(3):
        start = time.process_time()
        new_candidates = ptb.ptb_tokenize(list(next(others)))
        references_again = ptb.ptb_tokenize(list(flat))
        tokenized_s = time.process_time() - start
        ngram.ngram_index(tuple(new_candidates), tuple(references_again), 4)
        repeated_tokens_s, repeated_index_s = min(repeated_tokens_s, tokenized_s), min(repeated_index_s, time.process_time() - start - tokenized_s)

    print("| kernel | before, cold (CPU s) | after, cold (CPU s) | speed-up | after, repeated call with new candidates (CPU s) | speed-up |")
    print("|---|---|---|---|---|---|")
    for name, before, after, repeated in (
            ("PTB tokenization (candidates + references)", old_tokens_s, new_tokens_s, repeated_tokens_s),
            ("n-gram index (1..4-grams, candidates + references)", old_index_s, new_index_s, repeated_index_s)):
        print(f"| {name} | {before:.3f} | {after:.3f} | {before / after:.1f}x | {repeated:.3f} | {before / repeated:.1f}x |")
    print(f"\nEqual tokens; equal BLEU statistics; CIDEr-D at most {cider_difference:.1e} apart (the order of a sum). "
          f"Load average (1 min) at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
