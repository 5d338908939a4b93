"""SMURF's system-level report (the paper's Figure 1) and the bundled golden caption sets.

For each captioning system: its captions' standardized SPARCS (x) against standardized SPURTS (y),
a confidence ellipse of that cloud, the share of the ellipse's area that overlaps the reference
(human) system's ellipse, and the sum of its grammar penalties. Systems whose ellipse lies inside the
human one write like humans; a large negative penalty total means many grammatical outliers.

The ellipse is the Mahalanobis ball {z : (z − μ)ᵀ Σ⁻¹ (z − μ) ≤ k²} of the sample mean μ and
covariance Σ (n − 1 denominator), with k = 1.15 as in the released plot: ±1.15 σ holds 75% of a
normal along each axis. Overlap = area(human ∩ system) / area(system), on 360-gon approximations.

Write the report of the bundled golden caption sets::

    python -m capeval.reports.smurf --output smurf_system_report.png
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from ..atomic import partial_file
from ..scoring.smurf import OUTLIER_THRESHOLD, fuse, standardize
from .tables import markdown_table

#: ±1.15 σ covers 75% of a normal distribution along each axis (the released plot's ``n_std``).
ELLIPSE_STDS = 1.15
GOLDEN_LABELS = ("C1 (human)", "C2", "C3", "C4")


def load_golden():
    """The bundled SMURF example caption sets with their golden scores (provenance and licence in
    ``resources/smurf_golden_provenance.txt``): a pandas DataFrame of 20,000 rows with ``image_id``,
    ``system`` (0–3), raw ``candidate``, raw ``references``, ``SPARCS``, ``SPURTS``, ``MIMA``, ``SMURF``.

    >>> golden = load_golden()
    >>> len(golden), golden.system.tolist()[:5], float(golden.SMURF[0])
    (20000, [0, 1, 2, 3, 0], 0.6883860267891432)
    """
    import pandas as pd

    with resources.as_file(resources.files("capeval").joinpath("resources", "smurf_golden.parquet")) as path:
        return pd.read_parquet(path)


def confidence_ellipse(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *, n_std: float = ELLIPSE_STDS, vertices: int = 360) -> np.ndarray:
    """(vertices, 2) counter-clockwise points on the boundary of the ``n_std`` Mahalanobis ellipse of the points.

    >>> ring = confidence_ellipse([-1.0, 1.0, -1.0, 1.0], [-1.0, -1.0, 1.0, 1.0], n_std=1.0)
    >>> np.round(np.abs(ring).max(axis=0), 6).tolist()  # σ = sqrt(4/3) on both axes, no correlation
    [1.154701, 1.154701]
    """
    points = np.stack([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
    root = np.linalg.cholesky(np.cov(points))
    angles = np.linspace(0.0, 2 * np.pi, vertices, endpoint=False)
    circle = np.stack([np.cos(angles), np.sin(angles)])
    return (points.mean(axis=1, keepdims=True) + n_std * root @ circle).T


def polygon_area(polygon: np.ndarray) -> float:
    """Shoelace area of a simple polygon given as (n, 2) vertices in order.

    >>> polygon_area(np.array([[0, 0], [2, 0], [2, 1], [0, 1]], dtype=float))
    2.0
    """
    x, y = polygon[:, 0], polygon[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _inside_convex(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Which points lie inside (or on) a counter-clockwise convex polygon."""
    edges = np.roll(polygon, -1, axis=0) - polygon
    return np.asarray((_cross(edges[None, :, :], points[:, None, :] - polygon[None, :, :]) >= -1e-12).all(axis=1))


def convex_intersection_area(first: np.ndarray, second: np.ndarray) -> float:
    """Area of the intersection of two counter-clockwise convex polygons: the hull of each one's
    vertices inside the other and of the crossings of their edges.

    >>> square = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    >>> convex_intersection_area(square, square + 1), convex_intersection_area(square, square + 3)
    (1.0, 0.0)
    """
    p, r = first, np.roll(first, -1, axis=0) - first
    q, s = second, np.roll(second, -1, axis=0) - second
    offset = q[None, :, :] - p[:, None, :]
    denominator = _cross(r[:, None, :], s[None, :, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _cross(offset, s[None, :, :]) / denominator
        u = _cross(offset, r[:, None, :]) / denominator
    rows, cols = np.nonzero((denominator != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1))
    crossings = p[rows] + t[rows, cols][:, None] * r[rows]
    corners = np.concatenate([first[_inside_convex(first, second)], second[_inside_convex(second, first)], crossings])
    if len(corners) < 3:
        return 0.0
    centre = corners.mean(axis=0)
    order = np.argsort(np.arctan2(corners[:, 1] - centre[1], corners[:, 0] - centre[0]))
    return polygon_area(corners[order])


@dataclass
class SystemSummary:
    """One captioning system in the report (scores standardized)."""

    label: str
    captions: int
    sparcs_mean: float
    spurts_mean: float
    smurf_mean: float
    #: The caption nearest the mean (S', D'), marked in the plot, and its index within the system.
    center: tuple[float, float]
    center_index: int
    ellipse: np.ndarray
    #: area(reference ∩ this) / area(this); 1 for the reference system itself.
    overlap: float
    grammar_penalty: float


def summarize_systems(
    sparcs_values: Sequence[float],
    spurts_values: Sequence[float],
    mima_values: Sequence[float],
    n_systems: int,
    *,
    reference_system: int = 0,
    labels: Sequence[str] | None = None,
    n_std: float = ELLIPSE_STDS,
    fusion: str = "code",
) -> list[SystemSummary]:
    """Per-system summaries from raw per-caption scores interleaved
    [system 1 image 1, system 2 image 1, …, system 1 image 2, …] (SMURF's system-analysis layout).

    >>> golden = load_golden()
    >>> summary = summarize_systems(golden.SPARCS, golden.SPURTS, golden.MIMA, 4)
    >>> [round(s.grammar_penalty, 3) for s in summary]
    [-44.925, -7.467, -7.561, -4.465]
    """
    if len(sparcs_values) % n_systems or not len(sparcs_values) == len(spurts_values) == len(mima_values):
        raise ValueError(f"need the same number of SPARCS, SPURTS and MIMA values, a multiple of n_systems={n_systems}")
    if not 0 <= reference_system < n_systems:
        raise ValueError(f"reference_system must be in [0, {n_systems})")
    labels = list(labels) if labels is not None else [f"C{i + 1}" for i in range(n_systems)]
    if len(labels) != n_systems:
        raise ValueError(f"got {len(labels)} labels for {n_systems} systems")
    parts = fuse(sparcs_values, spurts_values, mima_values, fusion=fusion)
    x, y = parts["sparcs_standardized"], parts["spurts_standardized"]
    ellipses = [confidence_ellipse(x[i::n_systems], y[i::n_systems], n_std=n_std) for i in range(n_systems)]
    reference = ellipses[reference_system]
    summaries = []
    for i, ellipse in enumerate(ellipses):
        xs, ys = x[i::n_systems], y[i::n_systems]
        center_index = int(np.argmin((xs - xs.mean()) ** 2 + (ys - ys.mean()) ** 2))
        summaries.append(SystemSummary(
            label=labels[i], captions=len(xs), sparcs_mean=float(xs.mean()), spurts_mean=float(ys.mean()),
            smurf_mean=float(parts["smurf"][i::n_systems].mean()),
            center=(float(xs[center_index]), float(ys[center_index])), center_index=center_index, ellipse=ellipse,
            overlap=1.0 if i == reference_system else convex_intersection_area(reference, ellipse) / polygon_area(ellipse),
            grammar_penalty=float(parts["grammar_penalty"][i::n_systems].sum()),
        ))
    return summaries


def summary_table(summaries: Sequence[SystemSummary], reference_label: str) -> list[list[str]]:
    """Header (line breaks for the plot) and rows of the report's table."""
    header = ["system", "mean\nSPARCS'", "mean\nSPURTS'", "mean\nSMURF", f"overlap with\n{reference_label}", "grammar\npenalty (Σ)"]
    rows = [[s.label, f"{s.sparcs_mean:+.3f}", f"{s.spurts_mean:+.3f}", f"{s.smurf_mean:+.3f}", f"{s.overlap:.3f}", f"{s.grammar_penalty:.3f}"]
            for s in summaries]
    return [header, *rows]


def plot_system_report(
    summaries: Sequence[SystemSummary],
    sparcs_standardized: np.ndarray,
    spurts_standardized: np.ndarray,
    output: str | Path,
    *,
    reference_system: int = 0,
    sample: int = 100,
    seed: int = 10,
) -> Path:
    """Write the PNG: ellipses, ``sample`` random images' captions per system (the same images for
    every system) and each system's centre caption (triangle), with the table beside the plot."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.patches import Polygon

    n_systems = len(summaries)
    images = len(sparcs_standardized) // n_systems
    centers = {s.center_index for s in summaries}
    candidates = np.array([i for i in range(images) if i not in centers])
    shown = np.random.default_rng(seed).choice(candidates, size=min(sample, len(candidates)), replace=False)
    colors = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]  # a ListedColormap
    fig, (ax, table_ax) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1, 1.15]})
    for i, summary in enumerate(summaries):
        color = colors[i % len(colors)]
        ax.add_patch(Polygon(summary.ellipse, closed=True, facecolor=color, edgecolor="black", alpha=0.18))
        ax.add_patch(Polygon(summary.ellipse, closed=True, fill=False, edgecolor=color, linewidth=1.2))
        rows = shown * n_systems + i
        ax.scatter(sparcs_standardized[rows], spurts_standardized[rows], s=6, color=color, label=summary.label)
    for i, summary in enumerate(summaries):
        ax.scatter(*summary.center, s=70, color=colors[i % len(colors)], marker="^", edgecolors="black", zorder=3)
    ax.set(xlim=(-2, 2), ylim=(-2, 2), aspect="equal", xlabel="SPARCS' (semantic, standardized)", ylabel="SPURTS' (style, standardized)")
    ax.set_title("SMURF system analysis", fontsize=11)
    ax.legend(loc="lower right", fontsize=8, markerscale=2)
    ax.grid(alpha=0.3)
    table_ax.axis("off")
    header, *cells = summary_table(summaries, summaries[reference_system].label)
    drawn = table_ax.table(cellText=cells, colLabels=header, loc="center", cellLoc="center")
    drawn.auto_set_font_size(False)
    drawn.set_fontsize(9)
    drawn.scale(1.0, 2.2)
    for column in range(len(header)):
        drawn[0, column].set_height(drawn[0, column].get_height() * 1.6)
    table_ax.text(0.5, 0.12, f"Ellipses: ±{ELLIPSE_STDS} σ of each system's captions (75% per axis); triangles: the caption\n"
                  f"nearest each mean. Overlap: area shared with the {summaries[reference_system].label} ellipse / the system's\n"
                  f"ellipse area. Grammar penalty: Σ min(MIMA' − ({OUTLIER_THRESHOLD}), 0) over the system's captions.",
                  ha="center", va="top", fontsize=8.5, transform=table_ax.transAxes)
    fig.tight_layout()
    with partial_file(output) as out:  # the caller decides about an existing file (--overwrite)
        fig.savefig(out, dpi=150, format="png")
    plt.close(fig)
    return Path(output)


def read_scores(path: str | Path) -> dict[str, list[float]]:
    """Per-caption SPARCS, SPURTS and MIMA from JSON: the released ``smurf_scores.json`` layout
    (upper-case keys) or a saved result of ``metrics/smurf`` (lower-case keys)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    scores = {}
    for name in ("SPARCS", "SPURTS", "MIMA"):
        values = data.get(name, data.get(name.lower()))
        if values is None:
            raise ValueError(f"{path} has no {name} (or {name.lower()}) list")
        scores[name] = [float(v) for v in values]
    return scores


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..usage import add_output_arguments

    parser.set_defaults(run=run)
    add_output_arguments(parser, "PNG to write", default="smurf_system_report.png")
    parser.add_argument("--scores", help="JSON with per-caption SPARCS, SPURTS, MIMA lists, systems interleaved "
                                         "(default: the bundled golden caption sets, 4 systems)")
    parser.add_argument("--systems", type=int, default=4, help="number of interleaved systems (default: %(default)s)")
    parser.add_argument("--reference-system", type=int, default=0, help="index of the human system (default: %(default)s)")
    parser.add_argument("--labels", nargs="+", help="one label per system")
    parser.add_argument("--fusion", choices=("code", "paper"), default="code", help="SMURF fusion for the table's mean")


def run(args: argparse.Namespace) -> int:
    from ..usage import check_output

    check_output(args)
    if args.scores is None:
        golden = load_golden()
        scores = {name: golden[name].tolist() for name in ("SPARCS", "SPURTS", "MIMA")}
        labels = args.labels or (list(GOLDEN_LABELS) if args.systems == 4 else None)
    else:
        scores = read_scores(args.scores)
        labels = args.labels
    summaries = summarize_systems(scores["SPARCS"], scores["SPURTS"], scores["MIMA"], args.systems,
                                  reference_system=args.reference_system, labels=labels, fusion=args.fusion)
    path = plot_system_report(summaries, standardize(scores["SPARCS"], "sparcs"), standardize(scores["SPURTS"], "spurts"),
                              args.output, reference_system=args.reference_system)
    header, *rows = summary_table(summaries, summaries[args.reference_system].label)
    print(markdown_table(header, rows))
    print(f"\nWrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capeval.reports.smurf", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
