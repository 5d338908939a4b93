"""The tables of a result, written one way for the runner's output and for the docs (scripts/write_speed.py)."""

from __future__ import annotations

from harness import MODES


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if value < 1 else f"{value:.2f}"


def times(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def rate(items: int | None, value: float | None) -> str:
    if not items or not value:
        return "—"
    per_second = items / value
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def machine_line(result: dict, benchmark: dict) -> str:
    """The machine, the load and the date a benchmark's figures were measured on."""
    machine = result["machine"]
    gpu = machine.get("gpu")
    where = f"{machine['cpu']}, {benchmark.get('cores', machine.get('usable_cores'))} of {machine['cores']} cores"
    if machine.get("memory_gib"):
        where += f", {machine['memory_gib']:g} GiB"
    if gpu:
        where = f"{gpu['name']} (driver {gpu.get('driver', '?')}), {where}"
    load = ""
    if benchmark.get("load_before") and benchmark.get("load_after"):
        load = f"; load average (1 min) {benchmark['load_before'][0]:.1f} before, {benchmark['load_after'][0]:.1f} after"
    return f"{where}{load}; {result['date'][:10]}"


def mode_order(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)


def benchmark_markdown(name: str, benchmark: dict, result: dict, source: str | None = None) -> str:
    """A benchmark's figures: what was measured, where and when, one row per side and mode, then the comparisons."""
    lines = [f"**`{name}`**: {benchmark['title']}."]
    if benchmark.get("skipped"):
        return "\n".join(lines + [f"Not measured: {benchmark['skipped']}."])
    about = benchmark.get("data", {})
    quick = " (quick: small data)" if result.get("quick") else ""
    stored = f"; `{source}`" if source else ""
    imported = f" Imported from {result['imported_from']} (the recorded output of those runs)." if result.get("imported_from") else ""
    lines.append(f"Data: {about.get('description', '')}; {about.get('items', '?'):,} {about.get('unit', 'captions')}{quick}. Measured on "
                 f"{machine_line(result, benchmark)} (`{result['command']}`{stored}).{imported}")
    unit = about.get("unit", "captions")
    lines += ["", f"| side | mode | CPU (s) | wall (s) | {unit}/s (wall) | peak RSS (MiB) |", "|---|---|---|---|---|---|"]
    notes = []
    for side_name, side in benchmark["sides"].items():
        label = side.get("label", side_name)
        if "skipped" in side or "failed" in side:
            notes.append(f"{label}: {'skipped, ' + side['skipped'] if 'skipped' in side else 'failed, ' + side['failed']}")
            continue
        for mode, run in sorted(side["runs"].items(), key=lambda item: mode_order(item[0])):
            peak = run.get("peak_rss_mib")
            lines.append(f"| {label} | {mode} | {seconds(run.get('cpu_s'))} | {seconds(run.get('wall_s'))} | "
                         f"{rate(about.get('items'), run.get('wall_s'))} | {'—' if peak is None else f'{peak:,.0f}'} |")
    for side in benchmark["sides"].values():
        for figures in side.get("figures", {}).values():
            lines += ["", figures_markdown(side.get("label", ""), figures)]
    comparisons = benchmark.get("comparisons", [])
    if comparisons:
        lines += ["", "| comparison | mode | CPU-time ratio | wall-time ratio | largest output difference |", "|---|---|---|---|---|"]
        for row in comparisons:
            mode = row["ours_mode"] if row["ours_mode"] == row["peer_mode"] else f"{row['ours_mode']} vs {row['peer_mode']}"
            gap = row.get("max_abs_diff")
            if "equal" in row:
                shown = "not comparable" if gap is None else ("0" if gap == 0 else f"{gap:.1e}")
                difference = shown if row["equal"] else f"**differs**: {shown}"
            else:
                difference = "not compared"
            peer = benchmark["sides"][row["peer"]].get("label", row["peer"])
            ours = benchmark["sides"][row["ours"]].get("label", row["ours"])
            lines.append(f"| {ours} vs {peer} | {mode} | {times(row['cpu_ratio'])} | {times(row['wall_ratio'])} | {difference} |")
    if notes:
        lines += ["", "; ".join(notes) + "."]
    return "\n".join(lines)


def figures_markdown(label: str, figures: dict) -> str:
    """A side's own figures (a GPU goal's rows: each variant's rate, MFU, ...), one row per variant, scalars only."""
    rows = figures.get("rows", [])
    columns = list(dict.fromkeys(key for row in rows for key, value in row.items() if not isinstance(value, (dict, list))))
    lines = [f"{label}, goal: {figures.get('goal', '—')}", "", "| " + " | ".join(columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join("—" if row.get(key) is None else str(row[key]) for key in columns) + " |" for row in rows]
    return "\n".join(lines)
