"""Scatter plots of metric scores against human judgments (matplotlib, no display needed)."""

from __future__ import annotations

import numpy as np


def scatter_plot(result, path) -> None:
    """Correlation benchmarks: metric score vs human score of the first row set (human scores jittered when
    discrete). Pairs (PASCAL-50S, FOIL): per category, the metric's margin for the preferred caption."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bench, scores = result.prepared, result.scores
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
    if bench.correlations:
        rows = bench.correlations[0]
        human = rows.human
        jitter = 0.08 * np.ptp(human) / max(len(np.unique(human)) - 1, 1) if len(np.unique(human)) <= 25 else 0.0
        ax.scatter(scores[rows.item], human + rng.uniform(-jitter, jitter, len(human)), s=3, alpha=0.25)
        ax.set_xlabel(f"{result.metric} score")
        ax.set_ylabel(f"human: {rows.name}")
        tau = next(r for r in result.rows if r.row_set == rows.name and r.statistic == "tau-b").value
        ax.set_title(f"{result.title} — Kendall τ-b {tau:.3f} (n = {len(human):,})", fontsize=9)
    else:
        pairs = bench.pairs
        preferred = np.where(pairs.label == 1, pairs.first, pairs.second)
        other = np.where(pairs.label == 1, pairs.second, pairs.first)
        margin = scores[preferred] - scores[other]
        categories = [c for c in pairs.categories if (pairs.category == c).any()]
        for k, category in enumerate(categories):
            picked = pairs.category == category
            ax.scatter(margin[picked], k + rng.uniform(-0.3, 0.3, picked.sum()), s=3, alpha=0.3)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(range(len(categories)), categories)
        ax.set_xlabel(f"{result.metric}: score(human-preferred) − score(other)")
        ax.set_title(f"{result.title} — right of 0: the metric agrees with the humans", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
