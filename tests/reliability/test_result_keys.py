"""Result keys do not change with the metric set: CHAIR's recall is chair_recall alone and beside BERTScore (it was
recall alone, chair_recall beside BERTScore), one rule, the one the README states."""

from pathlib import Path

import pytest

from capeval.evaluation import SHARED_KEYS, flat_keys, metric_runs

ROOT = Path(__file__).resolve().parents[2]
CHAIR = ["chair_s", "chair_i", "recall"]
BERTSCORE = ["precision", "recall", "f1"]


def keys(*metrics: tuple[str, list[str]]) -> list[dict[str, str]]:
    return flat_keys(metric_runs([name for name, _ in metrics]), [columns for _, columns in metrics])


def test_a_metrics_keys_are_the_same_alone_and_beside_others():
    alone = keys(("chair", CHAIR))
    beside = keys(("bleu", ["bleu"]), ("chair", CHAIR), ("bertscore", BERTSCORE))
    assert alone[0] == beside[1] == {"chair_s": "chair_s", "chair_i": "chair_i", "recall": "chair_recall"}
    assert keys(("bertscore", BERTSCORE))[0] == beside[2] == {key: f"bertscore_{key}" for key in BERTSCORE}
    assert keys(("bleu", ["bleu"]))[0] == beside[0] == {"bleu": "bleu"}
    # The same metric twice: told apart by the run's label, the shared keys too.
    twice = flat_keys(metric_runs(["cider", "cider:idf=flickr8k", ("bertscore", {"layer": 3})]), [["cider"], ["cider"], ["f1"]])
    assert twice == [{"cider": "cider"}, {"cider": "cider_idf_flickr8k"}, {"f1": "bertscore_f1"}]


@pytest.mark.models
def test_the_shared_keys_are_those_several_registered_metrics_report():
    from collections import Counter

    from capeval.registry import METRICS

    reported = Counter(key for entry in METRICS.values() for key in set(entry.scorer_class().all_columns()))
    assert SHARED_KEYS == {key for key, count in reported.items() if count > 1}


def test_the_readme_states_the_rule():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    shared = ", ".join(f"`{key}`" for key in sorted(SHARED_KEYS, key=["precision", "recall", "f1"].index))
    assert (f"Result keys follow one rule, whatever else runs: the names several metrics report ({shared}) always carry "
            "their metric's name (`bertscore_f1`, `vilbertscore_f1`, `chair_recall`)") in readme
