"""The bertscore module: bert_score.score's numbers under the canonical evaluate module's output names, with and
without baseline rescaling, and every option."""

import numpy as np
import pytest

import capeval
from capeval.scoring.bertscore import BERTScorer, read_baseline, shipped_baseline

bert_score = pytest.importorskip("bert_score")

# No empty candidate: bert_score 0.3.13 fails on one with transformers 5 (build_inputs_with_special_tokens is gone).
CANDIDATES = ["a man rides a bicycle on the street", "A black dog is running through the grass .", "a dog",
              "a woman in a red coat walks past a shop window"]
REFERENCES = [
    ["a man riding a red bike down the street", "a person cycles along a road"],
    ["A dog runs in the grass .", "The black dog is running .", "a dog running outside"],
    ["a cat on a chair", "two dogs"],
    ["a woman walking in the city"],
]


def write_baseline(path, values):
    """A baseline file in bert_score's format: one LAYER,P,R,F row per layer 0..6."""
    rows = ["LAYER,P,R,F"] + [f"{layer},{p},{r},{f}" for layer, (p, r, f) in enumerate(values)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory):
    folder = tmp_path_factory.mktemp("baselines")
    return (write_baseline(folder / "a.tsv", [(0.1 * k, 0.1 * k + 0.02, 0.1 * k + 0.01) for k in range(7)]),
            write_baseline(folder / "b.tsv", [(0.05 * k, 0.05 * k + 0.03, 0.05 * k + 0.04) for k in range(7)]))


@pytest.mark.parametrize("rescale", [False, True])
@pytest.mark.parametrize("idf", [False, True])
def test_module_equals_bert_score(minilm_path, baselines, rescale, idf):
    options = {"rescale_with_baseline": True, "baseline_path": baselines[0]} if rescale else {}
    module = capeval.load("bertscore", model_name=minilm_path, layer=6, idf=idf, **options)
    result = module.compute(predictions=CANDIDATES, references=REFERENCES)
    precision, recall, f1 = bert_score.score(CANDIDATES, REFERENCES, model_type=minilm_path, num_layers=6, idf=idf,
                                             lang="en", **options)
    for name, expected in (("precision", precision), ("recall", recall), ("f1", f1)):
        np.testing.assert_allclose(result[name], expected.tolist(), atol=1e-6, rtol=0)
    assert result["scores"] == result["f1"] and result["bertscore"] == pytest.approx(float(f1.mean()), abs=1e-6)
    assert ("rescaled=a.tsv@" in result["hashcode"]) is rescale


def test_rescaling_maps_each_column_with_its_own_baseline(minilm_path, baselines):
    inputs = {"predictions": [*CANDIDATES, ""], "references": [*REFERENCES, ["a cat"]]}
    plain = capeval.load("bertscore", model_name=minilm_path, layer=6).compute(**inputs)
    rescaled = capeval.load("bertscore", model_name=minilm_path, layer=6, rescale_with_baseline=True,
                            baseline_path=baselines[0]).compute(**inputs)
    for name, b in zip(("precision", "recall", "f1"), (0.6, 0.62, 0.61)):  # layer 6 of baseline a
        np.testing.assert_allclose(rescaled[name], (np.array(plain[name]) - b) / (1 - b), atol=1e-12)
    assert rescaled["f1"][4] == pytest.approx(-0.61 / 0.39)  # an empty candidate: 0, rescaled like bert_score


def test_shipped_baselines_are_read_as_bert_score_reads_them():
    import pandas as pd

    path = shipped_baseline("roberta-large")
    expected = pd.read_csv(path).iloc[17].to_numpy()[1:].astype(float)  # bert_score's baseline_vals
    np.testing.assert_array_equal(read_baseline(path, 17), expected)
    scorer = BERTScorer(rescale_with_baseline=True)  # roberta-large at bert_score's layer 17; no model loads
    assert scorer.layer == 17 and scorer.hashcode().startswith("bertscore(model=roberta-large,layer=17,idf=False,rescaled=bert_score)")


@pytest.mark.slow
def test_every_option_changes_the_scores(minilm_path, tiny_bert_path, baselines):
    base = {"model_name": minilm_path, "layer": 6}
    variants = {
        "default": {},
        "model_name": {"model_name": tiny_bert_path},
        "layer": {"layer": 3},
        "idf": {"idf": True},
        "idf_sentences": {"idf": True, "idf_sentences": ["a dog", "a dog runs", "the street"]},
        "rescale_with_baseline": {"rescale_with_baseline": True, "baseline_path": baselines[0]},
        "baseline_path": {"rescale_with_baseline": True, "baseline_path": baselines[1]},
        "dtype": {"dtype": "bfloat16"},
    }
    # pad_like_bert_score's effect: tests/reliability/test_scores.py (it needs chosen negative similarities).
    compared_with = {"idf_sentences": "idf", "baseline_path": "rescale_with_baseline"}
    scores = {name: BERTScorer(**{**base, **options}).score(CANDIDATES, REFERENCES, batch_size=3)
              for name, options in variants.items()}
    for name in variants:
        if name != "default":
            other = scores[compared_with.get(name, "default")]
            assert any(scores[name][c] != other[c] for c in ("precision", "recall", "f1")), name


def test_bad_options_raise_clear_errors(minilm_path, baselines):
    with pytest.raises(ValueError, match="bert_score ships no English baseline for .*; pass baseline_path="):
        capeval.load("bertscore", model_name=minilm_path, layer=6, rescale_with_baseline=True)
    with pytest.raises(ValueError, match="baseline_path is used only with rescale_with_baseline=True"):
        BERTScorer(minilm_path, layer=6, baseline_path=baselines[0])
    with pytest.raises(ValueError, match="the baseline 'a.tsv' has no row for layer 7 \\(it covers layers 0 to 6\\)"):
        BERTScorer("roberta-base", layer=7, rescale_with_baseline=True, baseline_path=baselines[0])
    with pytest.raises(ValueError, match="rescale_with_baseline must be True or False, got 'yes'"):
        BERTScorer(minilm_path, rescale_with_baseline="yes")


def test_offline_run_scores_with_minilm(minilm_path):
    (run,) = [run for run in capeval.registry.offline_runs() if run.metric == "bertscore"]
    assert run.resolved_options() == {"model_name": minilm_path, "layer": 6}
