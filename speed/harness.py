"""What every benchmark of the suite shares, written once: the declarations (:class:`Benchmark`, :class:`Side`,
:class:`Compare`), running a side in fresh processes (cold machine, cold process, warm, whole process), timing a call
(wall, and CPU of the process and of every child it waited for, JVMs included), peak memory, the machine record,
the comparison of outputs and the result file's format.

A side is a function ``call(inputs, label) -> outputs`` run in a fresh Python process (``speed/run.py --child``) that
makes the side's calls one after the other (``Side.calls``: by default ``"cold process"``, the first call of a new
process on a machine whose caches are built, then ``"warm"``, the same call again). A side with a per-machine cache
(``machine_cache``: capeval's ``CAPEVAL_CACHE``, e.g. METEOR's paraphrase table) runs once more in a process whose
cache folder is empty: its first call is the ``"cold machine"`` one. ``Benchmark.whole_process`` adds a process that
makes one call and exits (or the side's own command, e.g. ``capeval score``), timed from outside as a user would time
it. The outputs of the sides are compared in the same run (``Compare``).
"""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from timing import synchronize  # the GPU-aware timer's wait for queued CUDA work

#: The result file's format; a reader refuses another one.
FORMAT = "capeval-speed/1"
SPEED = Path(__file__).resolve().parent
REPO = SPEED.parent
#: The modes, in the order tables show them.
MODES = ("cold machine", "cold process", "cold call", "warm", "whole process")


@dataclass(frozen=True)
class Side:
    """One implementation being timed. ``call(inputs, label)`` returns the outputs compared with the other sides' (a
    dict of lists or numbers, JSON-able); ``label`` names which of ``calls`` it is (a side may behave differently per
    call, e.g. empty capeval's caches first). ``role``: ``"capeval"`` or ``"peer"``."""

    name: str
    call: Callable[[dict, str], Any]
    role: str = "capeval"
    calls: tuple[str, ...] = ("cold process", "warm")
    #: Runs of each call in the process (after the first label's single run): the least CPU (and wall) time counts.
    repeats: int = 1
    #: Modules that must import, ``"java"`` for a Java runtime on PATH, ``"env:NAME"`` for a variable naming a file;
    #: without them the side is skipped, with why.
    requires: tuple[str, ...] = ()
    #: Set in the side's processes (e.g. ``CAPEVAL_ENCODING_CACHE_MB=0``).
    env: tuple[tuple[str, str], ...] = ()
    #: The side has a per-machine cache (``CAPEVAL_CACHE``): a cold-machine process runs with it empty.
    machine_cache: bool = False
    #: The whole-process command a user runs (``(inputs_path, output_path) -> argv``); None: a process making one call.
    command: Callable[[Path, Path], list[str]] | None = None
    #: What it is, for the tables (default: ``name``).
    label: str = ""
    #: Run untimed in the side's process before its calls (``inputs -> inputs``): e.g. captions made from a seed.
    prepare: Callable[[dict], dict] | None = None


@dataclass(frozen=True)
class Compare:
    """A ratio of ``peer``'s time over ``ours``' (above 1: ours is faster) per pair of modes, and the largest difference
    of their outputs (``tolerance`` None: not compared)."""

    ours: str
    peer: str
    modes: tuple[tuple[str, str], ...] = (("cold process", "cold process"), ("warm", "warm"))
    tolerance: float | None = 1e-12
    #: In the quick regression check (its CPU-time ratios).
    check: bool = True


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, declared once. ``data(folder, quick)`` returns ``(inputs, about)``: the inputs every side
    reads (JSON-able; files may be written to ``folder``) and what they are (``description``, ``items``: what a rate
    counts, e.g. captions)."""

    name: str
    title: str
    data: Callable[[Path, bool], tuple[dict, dict]]
    sides: tuple[Side, ...]
    compare: tuple[Compare, ...] = ()
    #: "cpu", or "cuda": measured where a CUDA GPU is (elsewhere skipped and said so, unless ``--device cpu``).
    device: str = "cpu"
    #: Cores every process is pinned to (None: no pinning).
    cores: int | None = 2
    whole_process: bool = False
    #: In the ``--quick`` regression set run by the test suite.
    quick: bool = False
    #: What every side needs (as ``Side.requires``): without it the benchmark is recorded as skipped, with why.
    requires: tuple[str, ...] = ()
    #: What the docs say of it beyond the tables (one sentence), e.g. which stand-ins it uses.
    note: str = ""
    #: The family (module) declaring it, for ``--list``.
    family: str = field(default="", compare=False)



def side_device(default: str) -> str:
    """The device a side runs on: the runner's ``--device`` (``CAPEVAL_BENCH_DEVICE``), else ``default`` (a side
    called outside the runner)."""
    return os.environ.get("CAPEVAL_BENCH_DEVICE", default)


# ---------------------------------------------------------------------------------------------------------------- timing


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the JVM of a Java tokenizer)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def memory_mib(pid: int = 0) -> tuple[float, float] | None:
    """Current and peak RSS (VmRSS, VmHWM) of a process (0: this one) in MiB, or None where /proc lacks them."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines())
        return float(fields["VmRSS"].split()[0]) / 1024, float(fields["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):  # not Linux, or the process ended meanwhile
        return None


def peak_mib() -> float:
    """This process's peak RSS in MiB."""
    memory = memory_mib()
    return memory[1] if memory else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


class TreeMemory:
    """Peak memory of a process and its descendants, sampled from /proc every 20 ms in a thread: ``self_mib`` the
    process's own high-water mark, ``children_mib`` the largest of a descendant's (e.g. a JVM), ``tree_mib`` the
    largest sum of their current RSS. (The kernel's ru_maxrss would not do: a forked child starts with its parent's.)"""

    INTERVAL = 0.02

    def __init__(self, pid: int):
        self.pid = pid
        self.peaks: dict[str, float | None] = {"self_mib": None, "children_mib": None, "tree_mib": None}
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
        return {key: value or 0.0 for key, value in self.peaks.items()}


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_process(command: list[str], env: dict | None = None) -> dict:
    """Wall and CPU seconds of ``command`` run to its end (CPU: it and every descendant it waited for, e.g. a JVM),
    with its peak memory (:class:`TreeMemory`)."""
    start, start_cpu = time.perf_counter(), children_cpu_seconds()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    memory = TreeMemory(process.pid)
    out, err = process.communicate()
    seconds, cpu = time.perf_counter() - start, children_cpu_seconds() - start_cpu
    peaks = memory.stop()
    if process.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))} failed ({process.returncode}): {err.decode(errors='replace')[-3000:]}")
    return {"cpu_s": cpu, "wall_s": seconds, "peak_rss_mib": peaks["self_mib"], "peak_child_rss_mib": peaks["children_mib"],
            "peak_tree_rss_mib": max(peaks["tree_mib"], peaks["self_mib"]), "stdout": out.decode(errors="replace")[-4000:]}


# ------------------------------------------------------------------------------------------------------ child process


def run_calls(side: Side, inputs: dict, labels: tuple[str, ...], repeats: int) -> dict:
    """In this (fresh) process: every call of ``labels`` (each after the first ``repeats`` times, the least CPU time
    kept), its CPU and wall seconds and the process's peak RSS after it, and the outputs of each label's last run."""
    runs, outputs = {}, {}
    if side.prepare is not None:
        inputs = side.prepare(inputs)
    for index, label in enumerate(labels):
        best = None
        for _ in range(1 if index == 0 else repeats):
            synchronize()
            start, start_cpu = time.perf_counter(), cpu_seconds()
            value = side.call(inputs, label)
            synchronize()
            measured = {"cpu_s": cpu_seconds() - start_cpu, "wall_s": time.perf_counter() - start}
            if best is None or measured["cpu_s"] < best["cpu_s"]:
                best = measured
            outputs[label] = value
        runs[label] = {**best, "peak_rss_mib": peak_mib(), **({"repeats": repeats} if index and repeats > 1 else {})}
    return {"runs": runs, "outputs": outputs}


# ------------------------------------------------------------------------------------------------------------ machine


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_record() -> dict | None:
    """The GPU's name and driver (nvidia-smi), with torch's CUDA version, or None where there is none."""
    try:
        line = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None
    name, driver, memory = (part.strip() for part in line.split(","))
    record = {"name": name, "driver": driver, "memory": memory}
    try:
        import torch

        record["torch"], record["cuda"] = torch.__version__, torch.version.cuda
    except ImportError:
        pass
    return record


def git_commit() -> str | None:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+changes" if dirty else "")


def machine_record(gpu: bool) -> dict:
    """CPU model, cores (all and usable), memory, Python, and the GPU where one is used."""
    try:
        memory = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 ** 2
    except (OSError, ValueError, IndexError):
        memory = None
    return {"cpu": cpu_model(), "cores": os.cpu_count(),
            "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "memory_gib": round(memory, 1) if memory else None, "python": platform.python_version(),
            "platform": platform.platform(), "gpu": gpu_record() if gpu else None}


def versions(modules: tuple[str, ...]) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("capeval", *modules):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------------------------------------------ comparisons


def numbers(value) -> list[float] | None:
    """The numbers of an output, flattened, or None where it holds something else (then compared for equality)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        parts = [numbers(value[key]) for key in sorted(value)]
    elif isinstance(value, (list, tuple)):
        parts = [numbers(item) for item in value]
    else:
        return None
    if any(part is None for part in parts):
        return None
    return [number for part in parts for number in part]


def largest_difference(ours: Any, theirs: Any) -> float:
    """The largest absolute difference of the values both outputs hold (dicts: the keys they share; numbers
    flattened), ``inf`` where something else differs (tokens, lengths), 0.0 where equal.

    >>> largest_difference({"a": [1.0, 2.0], "b": 3}, {"a": [1.0, 2.5]})
    0.5
    >>> largest_difference({"tokens": ["a", "b"]}, {"tokens": ["a", "c"]})
    inf
    """
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = [key for key in ours if key in theirs]
        return max((largest_difference(ours[key], theirs[key]) for key in keys), default=0.0)
    a, b = numbers(ours), numbers(theirs)
    if a is None or b is None:
        return 0.0 if ours == theirs else math.inf
    if len(a) != len(b):
        return math.inf
    return max((abs(x - y) for x, y in zip(a, b) if not (math.isnan(x) and math.isnan(y))), default=0.0)


def ratio(peer: float | None, ours: float | None) -> float | None:
    return peer / ours if peer is not None and ours else None


def compare(benchmark: Benchmark, sides: dict) -> list[dict]:
    """Every declared comparison whose two sides ran: per pair of modes, the CPU and wall ratios (peer over ours) and
    the largest difference of the outputs."""
    rows = []
    for spec in benchmark.compare:
        ours, peer = sides.get(spec.ours, {}), sides.get(spec.peer, {})
        if "runs" not in ours or "runs" not in peer:
            continue
        for our_mode, peer_mode in spec.modes:
            mine, theirs = ours["runs"].get(our_mode), peer["runs"].get(peer_mode)
            if not mine or not theirs:
                continue
            row = {"ours": spec.ours, "peer": spec.peer, "ours_mode": our_mode, "peer_mode": peer_mode,
                   "cpu_ratio": ratio(theirs["cpu_s"], mine["cpu_s"]), "wall_ratio": ratio(theirs["wall_s"], mine["wall_s"]),
                   "check": spec.check}
            if spec.tolerance is not None and our_mode in ours.get("outputs", {}) and peer_mode in peer.get("outputs", {}):
                difference = largest_difference(ours["outputs"][our_mode], peer["outputs"][peer_mode])
                row.update(max_abs_diff=difference if math.isfinite(difference) else None, tolerance=spec.tolerance,
                           equal=difference <= spec.tolerance)
            rows.append(row)
    return rows


# ------------------------------------------------------------------------------------------------------ result files


def read_result(path: Path) -> dict:
    """A stored result file, refused where its format is not this suite's."""
    result = json.loads(Path(path).read_text(encoding="utf-8"))
    if result.get("format") != FORMAT:
        raise ValueError(f"{path}: format {result.get('format')!r}, not {FORMAT!r}")
    return result


def regressions(new: dict, stored: dict, factor: float = 0.5) -> list[str]:
    """The CPU-time ratios of ``new`` that fell below ``factor`` times the same ratio in ``stored`` (same benchmark,
    sides and modes), or whose outputs differ, one line each.

    >>> row = {"ours": "capeval", "peer": "peer", "ours_mode": "warm", "peer_mode": "warm", "check": True}
    >>> stored = {"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 8.0}]}}}
    >>> regressions({"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 5.0, "equal": True}]}}}, stored)
    []
    >>> regressions({"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 3.9}]}}}, stored)
    ['b: capeval vs peer, warm: CPU-time ratio 3.90x, under half the stored 8.00x']
    """
    problems = []
    for name, result in new["benchmarks"].items():
        before = {(r["ours"], r["peer"], r["ours_mode"], r["peer_mode"]): r
                  for r in stored.get("benchmarks", {}).get(name, {}).get("comparisons", [])}
        for row in result.get("comparisons", []):
            mode = row["ours_mode"] if row["ours_mode"] == row["peer_mode"] else f"{row['ours_mode']} vs {row['peer_mode']}"
            if row.get("equal") is False:
                problems.append(f"{name}: {row['ours']} and {row['peer']} differ by {row.get('max_abs_diff')} ({mode})")
            old = before.get((row["ours"], row["peer"], row["ours_mode"], row["peer_mode"]))
            if not row.get("check", True) or not old or not old.get("cpu_ratio") or row.get("cpu_ratio") is None:
                continue
            if row["cpu_ratio"] < factor * old["cpu_ratio"]:
                problems.append(f"{name}: {row['ours']} vs {row['peer']}, {mode}: CPU-time ratio {row['cpu_ratio']:.2f}x, "
                                f"under half the stored {old['cpu_ratio']:.2f}x")
    return problems
