"""The harness's protocols pinned: P2's bootstrap draws captions (their three ratings together), and PASCAL-50S's
labels point at the caption humans preferred (known BLEU-4 accuracies per category)."""

import numpy as np
import pytest

from capeval.benchmarks import harness
from capeval.benchmarks.harness import run_benchmark


def test_the_p2_bootstrap_resamples_captions_not_rows(monkeypatch):
    drawn = []
    real = harness.estimate

    def spy(statistic, groups, *args, **kwargs):
        drawn.append(np.asarray(groups))
        return real(statistic, groups, *args, **kwargs)

    monkeypatch.setattr(harness, "estimate", spy)
    result = run_benchmark(lambda p, r: [len(c) for c in p], "flickr8k_expert", num_samples=2, verbose=False)
    p2 = next(i for i, rows in enumerate(result.prepared.correlations) if rows.name == "P2 all")
    rows = result.prepared.correlations[p2]
    groups = drawn[p2]
    assert np.array_equal(groups, rows.item)  # the caption of each row: its ratings are drawn together
    assert len(np.unique(groups)) * 3 == len(groups)


def test_pascal50s_accuracy_per_category_is_pinned_for_bleu_4():
    result = run_benchmark("bleu", "pascal50s", num_samples=0, verbose=False)
    accuracy = {row.row_set: row.value for row in result.rows}
    # Humans' preferred caption first: a flipped label would give 100 minus each value.
    assert accuracy == pytest.approx({"HC": 62.2, "HI": 92.95, "HM": 85.0, "MM": 58.3, "mean": 74.6125}, abs=1e-9)
