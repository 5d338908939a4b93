"""Correlation and accuracy statistics of the harness, with bootstrap confidence intervals.

Kendall τ is exact (scipy's O(n log n) count of discordant pairs; no sampling). One pass gives
both variants: τ-b = S / sqrt((n0 − n1)(n0 − n2)) and τ-c = 2S / (n² (m − 1) / m), where
S = n_c − n_d, n0 = n(n − 1)/2, n1 and n2 count the pairs tied in x and in y, and m is the smaller
number of distinct values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capeval.progress import progress

KENDALL_VARIANTS = ("b", "c")
TIE_RULES = ("fail", "half")


class UndefinedCorrelation(ValueError):
    """Kendall τ of inputs where it is undefined: fewer than two rows, or one input constant."""


def tied_pairs(values: np.ndarray) -> tuple[int, int]:
    """(pairs tied in ``values``, number of distinct values)."""
    _, counts = np.unique(values, return_counts=True)
    return int((counts * (counts - 1) // 2).sum()), len(counts)


def kendall_both(x, y) -> dict[str, float]:
    """τ-b and τ-c of ``x`` against ``y`` from one count of concordant minus discordant pairs.

    >>> {k: round(v, 6) for k, v in kendall_both([1, 2, 3, 4, 5], [1, 3, 2, 4, 5]).items()}
    {'b': 0.8, 'c': 0.8}
    >>> {k: round(v, 6) for k, v in kendall_both([1, 1, 2, 3], [1, 2, 2, 3]).items()}
    {'b': 0.8, 'c': 0.75}
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"Kendall τ needs two 1-d arrays of one length, got shapes {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("Kendall τ input holds NaN")
    n = len(x)
    n0 = n * (n - 1) // 2
    n1, distinct_x = tied_pairs(x)
    n2, distinct_y = tied_pairs(y)
    if n0 in (n1, n2):
        raise UndefinedCorrelation(f"Kendall τ is undefined: {'fewer than two rows' if n < 2 else 'an input is constant'}")
    from scipy.stats import kendalltau  # scipy.stats takes ~1 s to import: only when a correlation is asked for

    tau_b = float(kendalltau(x, y, variant="b").statistic)
    s = tau_b * np.sqrt(float(n0 - n1) * float(n0 - n2))
    m = min(distinct_x, distinct_y)
    return {"b": tau_b, "c": float(2 * s / (n * n * (m - 1) / m))}


def kendall(x, y, variant: str = "b") -> float:
    """Kendall τ-b (scipy's default) or τ-c (Stuart) between two score lists.

    >>> round(kendall([1, 1, 2, 3], [1, 2, 2, 3], variant="c"), 6)
    0.75
    """
    if variant not in KENDALL_VARIANTS:
        raise ValueError(f"Kendall variant must be one of {KENDALL_VARIANTS}, got {variant!r}")
    return kendall_both(x, y)[variant]


#: Correlation statistics a published table may have used.
CORRELATIONS = ("tau-b", "tau-c", "pearson", "spearman")


def correlate(x, y, statistic: str = "tau-b") -> float:
    """Kendall τ-b or τ-c, Pearson's r or Spearman's ρ of two score lists.

    >>> [round(correlate([1, 1, 2, 3], [1, 2, 2, 3], s), 4) for s in CORRELATIONS]
    [0.8, 0.75, 0.8528, 0.8333]
    """
    from scipy.stats import pearsonr, spearmanr

    if statistic not in CORRELATIONS:
        raise ValueError(f"statistic must be one of {CORRELATIONS}, got {statistic!r}")
    if statistic in ("tau-b", "tau-c"):
        return kendall_both(x, y)[statistic[-1]]
    return float((pearsonr if statistic == "pearson" else spearmanr)(x, y)[0])


def pair_outcomes(first_scores, second_scores, label, ties: str = "half") -> np.ndarray:
    """Per pair: 1 when the metric prefers the human-preferred caption, 0 when not; a metric tie scores
    0.5 (``ties="half"``) or 0 (``ties="fail"``). ``label`` is 1 when humans preferred the first caption.

    >>> pair_outcomes([0.9, 0.2, 0.5], [0.1, 0.3, 0.5], [1, 1, 0]).tolist()
    [1.0, 0.0, 0.5]
    """
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {TIE_RULES}, got {ties!r}")
    first_scores = np.asarray(first_scores, dtype=float)
    second_scores = np.asarray(second_scores, dtype=float)
    label = np.asarray(label)
    first_wins = first_scores > second_scores
    outcome = np.where(label == 1, first_wins, second_scores > first_scores).astype(float)
    outcome[first_scores == second_scores] = 0.5 if ties == "half" else 0.0
    return outcome


@dataclass
class Estimate:
    """A statistic with its percentile bootstrap confidence interval (``None`` when not bootstrapped)."""

    value: float
    low: float | None = None
    high: float | None = None


def resamples(groups, num_samples: int, seed: int = 0, strata=None):
    """Row index arrays of a cluster bootstrap: the groups (e.g. the captions, so that the three ratings
    of a caption stay together) are drawn with replacement, within each stratum when ``strata`` is given.

    >>> [rows.tolist() for rows in resamples([0, 0, 1], num_samples=2, seed=3)]
    [[2, 0, 1], [0, 1, 0, 1]]
    """
    _, group_ids = np.unique(np.asarray(groups), return_inverse=True)
    order = np.argsort(group_ids, kind="stable")
    sizes = np.bincount(group_ids)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    if strata is None:
        pools = [np.arange(len(sizes))]
    else:
        strata_of_group = np.asarray(strata)[order[starts]]
        pools = [np.flatnonzero(strata_of_group == s) for s in np.unique(strata_of_group)]
    rng = np.random.default_rng(seed)
    for _ in range(num_samples):
        picked = np.concatenate([pool[rng.integers(0, len(pool), len(pool))] for pool in pools])
        lengths = sizes[picked]
        shift = np.repeat(starts[picked] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        yield order[shift + np.arange(lengths.sum())]


def estimate(statistic, groups, num_samples: int = 1000, seed: int = 0, level: float = 0.95,
             strata=None) -> dict[str, Estimate]:
    """``statistic(rows)`` (a dict of named numbers for an index array of rows) on all rows, with a
    percentile bootstrap interval for each name (``num_samples=0`` skips the bootstrap).

    >>> x = np.arange(50.0); y = x + np.random.default_rng(1).normal(0, 10, 50)
    >>> est = estimate(lambda rows: kendall_both(x[rows], y[rows]), np.arange(50), num_samples=200)
    >>> est["b"].low < est["b"].value < est["b"].high
    True
    """
    full = statistic(np.arange(len(groups)))
    if num_samples <= 0:
        return {name: Estimate(float(value)) for name, value in full.items()}
    draws = resamples(groups, num_samples, seed, strata)
    samples = [statistic(rows) for rows in progress(draws, total=num_samples, desc="bootstrap")]
    alpha = (1 - level) / 2
    return {name: Estimate(float(value), *(float(np.quantile([s[name] for s in samples], q)) for q in (alpha, 1 - alpha)))
            for name, value in full.items()}
