#!/usr/bin/env python
"""capeval's speed suite: every benchmark declared once (speed/benchmarks/), run by this one runner.

    python speed/run.py --list                              the benchmarks, what each compares, its modes
    python speed/run.py NAME... [--quick] --output r.json   run them, write one result file (format capeval-speed/1)
    python speed/run.py --quick-set --quick --check speed/results/quick.json
                                                            the quick regression set: fails when a CPU-time ratio
                                                            falls below half its stored value, or outputs differ

Each side of a benchmark runs in fresh Python processes pinned to the benchmark's cores: the cold-machine process
(capeval's cache folder empty, where the side has one), the process making its calls (cold process, then warm), and
the whole process a user runs. CPU time counts the process and every child it waited for (the JVMs); wall time and
peak RSS are kept beside it; the outputs are compared in the same run. The result file holds the machine record (CPU
model, cores, memory, the GPU's name and driver where one is used), the load average before and after each benchmark,
the date and this checkout's commit. ``--quick`` runs small data, the cold process and warm modes only.
A benchmark declared for CUDA runs where a GPU is; elsewhere it is recorded as skipped, with why (``--device cpu``
runs it on the CPU, a check of the declaration, not a figure); so is one whose ``requires`` (e.g. lmms-eval) does not
import. docs/speed.md and the cards' speed tables are written from the stored result files in speed/results/ by
scripts/write_speed.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402  (this folder is on sys.path)
from benchmarks import BENCHMARKS  # noqa: E402
from tables import benchmark_markdown  # noqa: E402


def missing(requires: tuple[str, ...]) -> str | None:
    """Why a side cannot run here (a module that does not import, no Java, an unset variable, missing NLTK data), or
    None. A requirement ``"a|b"`` is met by either.

    >>> missing(("env:CAPEVAL_BENCH_UNSET_FOR_THE_DOCTEST|json",)) is None
    True
    """
    for name in requires:
        reasons = [unmet(alternative) for alternative in name.split("|")]
        if all(reasons):
            return ", and ".join(reason for reason in reasons if reason)
    return None


def unmet(name: str) -> str | None:
    """Why one requirement is not met here, or None."""
    import importlib

    if name.startswith("env:"):
        return None if os.environ.get(name[4:]) else f"{name[4:]} is not set (it names a file the repository does not hold)"
    if name.startswith("nltk:"):
        from capeval.text.english import _nltk_resource  # NLTK's data path, capeval's own folder first

        return None if _nltk_resource(name[5:]) is not None else f"NLTK's {name[5:]} is not installed"
    if name == "java":
        return None if shutil.which("java") else "no Java runtime on PATH"
    try:
        importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any failure to import is a reason to skip
        return f"{name} does not import here ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
    return None


def cuda_here() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def child_command(benchmark: str, side: str, inputs: Path, labels: tuple[str, ...], repeats: int, output: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", benchmark, side, "--inputs", str(inputs),
            "--calls", "|".join(labels), "--repeats", str(repeats), "--child-output", str(output)]


def side_env(side: harness.Side, device: str, cache: Path | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0", "CAPEVAL_BENCH_DEVICE": device, **dict(side.env)}
    if cache is not None:
        env["CAPEVAL_CACHE"] = str(cache)
    return env


def run_side(benchmark: harness.Benchmark, side: harness.Side, folder: Path, device: str, quick: bool) -> dict:
    """The side's processes: cold machine (where it has a machine cache), its calls, and the whole process."""
    inputs = folder / "inputs.json"
    record: dict = {"label": side.label or side.name, "role": side.role, "runs": {}, "outputs": {}, "processes": {}}
    # A side with a per-machine cache runs on a cache folder of this run: empty for the cold machine, then built.
    cache = folder / f"cache-{side.name.replace(' ', '_')}" if side.machine_cache and not quick else None
    if cache is not None:
        output = folder / f"{side.name}-cold-machine.json"
        process = harness.timed_process(child_command(benchmark.name, side.name, inputs, side.calls[:1], 1, output),
                                        env=side_env(side, device, cache))
        child = json.loads(output.read_text())
        record["runs"]["cold machine"] = child["runs"][side.calls[0]]
        record["outputs"]["cold machine"] = child["outputs"][side.calls[0]]
        record["processes"]["cold machine"] = {key: value for key, value in process.items() if key != "stdout"}
    output = folder / f"{side.name}-calls.json"
    process = harness.timed_process(child_command(benchmark.name, side.name, inputs, side.calls, side.repeats, output),
                                    env=side_env(side, device, cache))
    child = json.loads(output.read_text())
    record["runs"].update(child["runs"])
    record["outputs"].update(child["outputs"])
    record["processes"]["calls"] = {key: value for key, value in process.items() if key != "stdout"}
    # A side that measures on its own (the GPU goals) returns its figures: they are kept in the result.
    figures = {label: output["figures"] for label, output in child["outputs"].items()
               if isinstance(output, dict) and "figures" in output}
    if figures:
        record["figures"] = figures
    if benchmark.whole_process and not quick:
        output = folder / f"{side.name}-whole.json"
        command = side.command(inputs, output) if side.command else child_command(
            benchmark.name, side.name, inputs, side.calls[:1], 1, output)
        process = harness.timed_process(command, env=side_env(side, device, cache))
        record["runs"]["whole process"] = {"cpu_s": process["cpu_s"], "wall_s": process["wall_s"],
                                           "peak_rss_mib": process["peak_tree_rss_mib"]}
        if output.exists() and side.command is None:
            record["outputs"]["whole process"] = json.loads(output.read_text())["outputs"][side.calls[0]]
    return record


def run_benchmark(benchmark: harness.Benchmark, quick: bool, device: str | None) -> dict:
    """One benchmark's result (its sides' runs, the comparisons, the load before and after)."""
    result: dict = {"title": benchmark.title, "device": device or benchmark.device, "quick": quick}
    if benchmark.device == "cuda" and device != "cpu" and not cuda_here():
        result["skipped"] = "needs a CUDA GPU, and there is none here (it runs where one is; --device cpu checks it on the CPU)"
        return result
    reason = missing(benchmark.requires)
    if reason:
        result["skipped"] = reason
        print(f"{benchmark.name}: skipped: {reason}", file=sys.stderr)
        return result
    device = device or benchmark.device
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if affinity and benchmark.cores:
        os.sched_setaffinity(0, sorted(affinity)[:benchmark.cores])  # the children inherit it
    result["cores"] = len(os.sched_getaffinity(0)) if affinity else os.cpu_count()
    result["load_before"] = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix=f"capeval_speed_{benchmark.name}_"))
    try:
        inputs, about = benchmark.data(folder, quick)
        (folder / "inputs.json").write_text(json.dumps(inputs))
        result["data"] = about
        sides: dict = {}
        for side in benchmark.sides:
            reason = missing(side.requires)
            if reason:
                sides[side.name] = {"label": side.label or side.name, "role": side.role, "skipped": reason}
                print(f"{benchmark.name}: skipped {side.name}: {reason}", file=sys.stderr)
                continue
            print(f"{benchmark.name}: {side.name} ...", file=sys.stderr, flush=True)
            try:
                sides[side.name] = run_side(benchmark, side, folder, device, quick)
            except RuntimeError as error:
                sides[side.name] = {"label": side.label or side.name, "role": side.role,
                                    "failed": str(error).strip().splitlines()[-1][:300]}
                print(f"{benchmark.name}: {side.name} failed: {error}", file=sys.stderr)
        result["comparisons"] = harness.compare(benchmark, sides)
        result["versions"] = harness.versions(tuple(module for side in benchmark.sides for module in
                                                    benchmark.requires + side.requires if module != "java"))
        for record in sides.values():
            record.pop("outputs", None)
        result["sides"] = sides
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if affinity:
            os.sched_setaffinity(0, affinity)
    result["load_after"] = os.getloadavg()
    return result


def child(args) -> None:
    """``--child NAME SIDE``: make the side's calls in this fresh process and write their times and outputs."""
    side = next(side for side in BENCHMARKS[args.child[0]].sides if side.name == args.child[1])
    inputs = json.loads(Path(args.inputs).read_text())
    measured = harness.run_calls(side, inputs, tuple(args.calls.split("|")), args.repeats)
    Path(args.child_output).write_text(json.dumps(measured))


def listing() -> str:
    lines = []
    for name, benchmark in BENCHMARKS.items():
        sides = ", ".join(f"{side.name}{' (peer)' if side.role == 'peer' else ''}" for side in benchmark.sides)
        flags = [benchmark.device] + (["quick set"] if benchmark.quick else []) + (["whole process"] if benchmark.whole_process else [])
        lines.append(f"{name:24s} {benchmark.title} [{'; '.join(flags)}] sides: {sides}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (see --list)")
    parser.add_argument("--list", action="store_true", help="name every benchmark and exit")
    parser.add_argument("--quick", action="store_true", help="small data; cold process and warm only")
    parser.add_argument("--quick-set", action="store_true", help="run every benchmark of the quick regression set")
    parser.add_argument("--output", help="write the result file here (JSON)")
    parser.add_argument("--device", choices=("cpu", "cuda"), help="run every benchmark on this device")
    parser.add_argument("--check", help="a stored result file: exit 1 when a CPU-time ratio falls below half its value")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--calls", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--child-output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    if args.list:
        print(listing())
        return 0
    names = list(args.names) + ([name for name, benchmark in BENCHMARKS.items() if benchmark.quick] if args.quick_set else [])
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown or not names:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)} (see --list)" if unknown else "name a benchmark (see --list)")
    command = "python speed/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    gpu = any(BENCHMARKS[name].device == "cuda" for name in names) or args.device == "cuda"
    result = {"format": harness.FORMAT, "date": harness.now(), "command": command, "commit": harness.git_commit(),
              "quick": args.quick, "machine": harness.machine_record(gpu), "load_before": os.getloadavg(), "benchmarks": {}}
    for name in dict.fromkeys(names):
        result["benchmarks"][name] = run_benchmark(BENCHMARKS[name], args.quick, args.device)
        print(benchmark_markdown(name, result["benchmarks"][name], result), flush=True)
    result["load_after"] = os.getloadavg()
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.output}", file=sys.stderr)
    problems = [f"{name}: {comparison['ours']} and {comparison['peer']} differ by {comparison.get('max_abs_diff')} "
                f"(tolerance {comparison['tolerance']:g})" for name, benchmark in result["benchmarks"].items()
                for comparison in benchmark.get("comparisons", []) if comparison.get("equal") is False]
    if args.check:
        problems += [line for line in harness.regressions(result, harness.read_result(Path(args.check)))
                     if line not in problems]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
