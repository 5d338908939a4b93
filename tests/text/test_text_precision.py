"""The text-model metrics' ``dtype`` on CPU, through the metric modules: BERT-TBR, BERTScore and SMURF's SPURTS and
MIMA (real all-MiniLM-L6-v2 weights standing in for their encoders) on the Flickr8k-Expert sample rows in bfloat16
and float16 against float32, and the option's place in the hashcode. Polos' precision is tested with its tiny
checkpoint in tests/metrics/polos/test_polos.py."""

import numpy as np
import pytest

import capeval
from capeval.samples import sample_captions
from capeval.scoring.bert_tbr import BertTbrScorer
from capeval.scoring.bertscore import BERTScorer
from capeval.scoring.smurf import SmurfScorer

ROWS = sample_captions()
#: The sample rows whose candidate-reference and reference-reference cosines all lie 3e-3 or more from β = 0.4 in
#: float32 (1.7e-3 in bfloat16): β is a hard threshold, and a cosine that a reduced precision moves across it moves
#: a BERT-TBR score by up to 8e-2 (the card states it), a jump this tolerance test leaves out.
CLEAR_OF_BETA = [2, 8, 12, 15]

#: metric: (its options, the per-caption lists compared ("scores": the primary one, BERT-TBR's or SPURTS'), the
#: largest per-caption |Δ| allowed in bfloat16 and in float16).
#: Measured here (max over the lists, bfloat16 / float16): BERT-TBR 4.0e-4 / 7.3e-5 (its four rows), BERTScore
#: 1.3e-3 / 1.1e-4, SMURF 1.1e-3 / 2.1e-4 (all 16 rows: speed/precision_text.py; the README cards state them).
METRICS = {
    "bert_tbr": ({"model_name": "fixture:minilm_path", "layer": 6, "beta": 0.4}, ("scores",), {"bfloat16": 2e-3, "float16": 3e-4}),
    "bertscore": ({"model_name": "fixture:minilm_path", "layer": 6}, ("precision", "recall", "f1"), {"bfloat16": 3e-3, "float16": 3e-4}),
    # MiniLM for both attention models: a tiny random model's attention is near uniform, its flow near 0 in any precision.
    "smurf": ({"components": ["spurts", "mima"], "spurts_model": "fixture:minilm_path", "mima_model": "fixture:minilm_path"},
              ("scores", "mima"), {"bfloat16": 3e-3, "float16": 6e-4}),
}


def computed(name: str, options: dict) -> dict:
    rows = [ROWS[i] for i in CLEAR_OF_BETA] if name == "bert_tbr" else ROWS
    return capeval.load(name, device="cpu", **options).compute(predictions=[row["candidate"] for row in rows],
                                                               references=[row["references"] for row in rows])


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_reduced_precision_is_within_its_tolerance_of_float32(with_fixtures, name, dtype):
    options, columns, tolerances = METRICS[name]
    options = with_fixtures(options)
    exact, reduced = computed(name, options), computed(name, {**options, "dtype": dtype})
    differences = np.concatenate([np.abs(np.array(reduced[c]) - np.array(exact[c])) for c in columns])
    assert differences.max() < tolerances[dtype]
    assert differences.max() > 1e-6, "the option changes the arithmetic"
    assert f"dtype={dtype}" in reduced["hashcode"] and "dtype" not in exact["hashcode"]


@pytest.mark.parametrize("name", sorted(METRICS))
def test_float32_keeps_its_hashcode(with_fixtures, name):
    options = with_fixtures(METRICS[name][0])
    scorer_class = {"bert_tbr": BertTbrScorer, "bertscore": BERTScorer, "smurf": SmurfScorer}[name]
    assert scorer_class(**options, dtype="float32").hashcode() == scorer_class(**options).hashcode()
    with pytest.raises(ValueError, match="dtype must be one of"):
        scorer_class(**options, dtype="float64")


def test_sparcs_alone_runs_no_model_so_no_precision_enters_its_hashcode():
    assert SmurfScorer(["sparcs"], dtype="bfloat16").options() == SmurfScorer(["sparcs"]).options()
    assert SmurfScorer(["sparcs", "mima"], dtype="bfloat16").options()["dtype"] == "bfloat16"


def test_each_precision_keeps_its_own_encodings(minilm_path):
    from capeval.text.encoder import get_text_encoder

    exact, reduced = (get_text_encoder(minilm_path, layer=6, device="cpu", dtype=dtype) for dtype in ("float32", "bfloat16"))
    assert exact is not reduced and exact.model.embeddings is reduced.model.embeddings, "one copy of the weights"
    first, second = exact.encode(["a dog runs"])[0].hidden, reduced.encode(["a dog runs"])[0].hidden
    assert second.dtype == first.dtype and 1e-6 < (second - first).abs().max() < 0.05
