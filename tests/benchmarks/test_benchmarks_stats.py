"""Kendall τ-b/τ-c, pair accuracy and the cluster bootstrap."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from capeval.benchmarks.stats import estimate
from capeval.benchmarks.stats import kendall
from capeval.benchmarks.stats import kendall_both
from capeval.benchmarks.stats import pair_outcomes
from capeval.benchmarks.stats import resamples


def test_spec_vectors():
    assert kendall([1, 2, 3, 4, 5], [1, 3, 2, 4, 5], "b") == pytest.approx(0.8)
    assert kendall([1, 2, 3, 4, 5], [1, 3, 2, 4, 5], "c") == pytest.approx(0.8)
    assert kendall([1, 1, 2, 3], [1, 2, 2, 3], "b") == pytest.approx(0.8)
    assert kendall([1, 1, 2, 3], [1, 2, 2, 3], "c") == pytest.approx(0.75)


@pytest.mark.parametrize("seed", range(5))
def test_both_variants_equal_scipy_with_heavy_ties(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=500).round(1)
    y = rng.integers(1, 5, 500) + (x > 0)
    both = kendall_both(x, y)
    assert both["b"] == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)
    assert both["c"] == pytest.approx(kendalltau(x, y, variant="c").statistic, abs=1e-12)


def test_undefined_inputs_raise():
    with pytest.raises(ValueError, match="constant"):
        kendall([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        kendall([1, float("nan"), 2], [1, 2, 3])
    with pytest.raises(ValueError, match="one length"):
        kendall([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="variant"):
        kendall([1, 2], [1, 2], "a")


def test_pair_ties_count_half_or_fail():
    first, second, label = [1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [1, 1, 1]
    assert pair_outcomes(first, second, label, "half").tolist() == [1.0, 0.0, 0.5]
    assert pair_outcomes(first, second, label, "fail").tolist() == [1.0, 0.0, 0.0]
    assert pair_outcomes(first, second, [0, 0, 0], "fail").tolist() == [0.0, 1.0, 0.0]


def test_bootstrap_keeps_clusters_and_strata_together():
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    for rows in resamples(groups, 20, seed=1):
        assert len(rows) == 9 and all((groups[rows[i:i + 3]] == groups[rows[i]]).all() for i in range(0, 9, 3))
    strata = np.array(["a"] * 4 + ["b"] * 2)
    for rows in resamples(np.arange(6), 20, seed=2, strata=strata):
        assert (strata[rows] == "a").sum() == 4


def test_interval_brackets_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = x + rng.normal(size=300)
    first = estimate(lambda r: kendall_both(x[r], y[r]), np.arange(300), num_samples=200, seed=3)
    again = estimate(lambda r: kendall_both(x[r], y[r]), np.arange(300), num_samples=200, seed=3)
    assert first == again
    assert first["b"].low < first["b"].value < first["b"].high
    assert estimate(lambda r: kendall_both(x[r], y[r]), np.arange(300), num_samples=0)["c"].low is None
