"""The harness's bootstrap options each change its intervals as stated: the seed, the interval level and the
stratification, in the statistics module and through run_benchmark."""

import numpy as np
import pytest

from capeval.benchmarks import run_benchmark
from capeval.benchmarks.stats import estimate, kendall_both, resamples

RNG = np.random.default_rng(0)
X = RNG.normal(size=120)
Y = X + RNG.normal(size=120)
GROUPS = np.repeat(np.arange(40), 3)  # three ratings per caption
STRATA = np.where(np.arange(120) < 90, "common", "rare")


def tau_b(rows):
    return {"b": kendall_both(X[rows], Y[rows])["b"]}


def percentile_interval(seed, level, strata=None):
    samples = [tau_b(rows)["b"] for rows in resamples(GROUPS, 100, seed, strata)]
    alpha = (1 - level) / 2
    return float(np.quantile(samples, alpha)), float(np.quantile(samples, 1 - alpha))


@pytest.mark.parametrize("seed, level, strata", [(3, 0.95, None), (4, 0.95, None), (3, 0.5, None), (3, 0.95, STRATA)])
def test_the_interval_is_the_percentiles_of_the_seeded_resamples(seed, level, strata):
    result = estimate(tau_b, GROUPS, num_samples=100, seed=seed, level=level, strata=strata)["b"]
    assert result.value == tau_b(np.arange(120))["b"]
    assert (result.low, result.high) == percentile_interval(seed, level, strata)


def test_seed_level_and_strata_each_change_the_interval():
    def interval(**options):
        result = estimate(tau_b, GROUPS, num_samples=100, **{"seed": 3, **options})["b"]
        return result.low, result.high

    base = interval()
    assert len({base, interval(seed=4), interval(level=0.5), interval(strata=STRATA)}) == 4
    narrow, wide = interval(level=0.5), base
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_stratified_resamples_keep_each_stratum_size_and_clusters():
    sizes = set()
    for rows in resamples(GROUPS, 50, seed=1, strata=STRATA):
        assert ((STRATA[rows] == "rare").sum(), len(rows)) == (30, 120)
        assert all(len(set(GROUPS[rows[i:i + 3]])) == 1 for i in range(0, 120, 3))
    for rows in resamples(GROUPS, 50, seed=1):
        sizes.add(int((STRATA[rows] == "rare").sum()))
    assert len(sizes) > 5  # without strata the rare stratum's share varies


def word_count(predictions, references):
    return [len(p.split()) for p in predictions]


def test_run_benchmark_passes_seed_and_level_to_its_intervals():
    def rows(**options):
        result = run_benchmark(word_count, "pascal50s", num_samples=30, verbose=False, **options)
        return result.settings, {row.row_set: (row.value, row.low, row.high) for row in result.rows}

    settings, base = rows()
    assert (settings["seed"], settings["level"], settings["bootstrap_samples"]) == (0, 0.95, 30)
    other_seed, other_level = rows(seed=1)[1], rows(level=0.5)[1]
    for row_set, (value, low, high) in base.items():
        assert other_seed[row_set][0] == other_level[row_set][0] == value
        assert other_level[row_set][1] >= low and other_level[row_set][2] <= high
    assert any(other_seed[k][1:] != base[k][1:] for k in base)
    assert any(other_level[k][1:] != base[k][1:] for k in base)


def test_three_strata_each_keep_their_size():
    """With more than two strata a pool is one stratum, not the complement of one."""
    groups = np.repeat(np.arange(10), 2)
    strata = np.repeat(["a"] * 2 + ["b"] * 3 + ["c"] * 5, 2)
    for rows in resamples(groups, 30, seed=5, strata=strata):
        assert [int((strata[rows] == s).sum()) for s in "abc"] == [4, 6, 10]
