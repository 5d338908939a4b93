"""The text metrics' speed work: one tokenization and one n-gram count per call, parity with pycocoevalcap on
the Karpathy-test tokens, light imports in a text-only call, METEOR's JVM started first."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import capeval
from capeval.scoring import ngram
from capeval.scoring.coco import BleuScorer, CiderScorer, RougeScorer
from capeval.text import ptb
from capeval.models import clear_feature_caches
from capeval.text.call_cache import call_table, shared_text_work
from fixtures import REPO

CANDIDATES = ["A dog runs on the grass.", "A cat sleeps on a mat", "Two men ride bikes."]
REFERENCES = [["A dog running on grass.", "The dog runs."], ["A cat is sleeping.", "A kitten naps on a mat."],
              ["Two people riding bicycles.", "Men on bikes."]]


def count_calls(monkeypatch, module, name: str) -> list:
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_call_tokenizes_and_counts_each_sentence_once(monkeypatch):
    clear_feature_caches()  # nothing kept from the tests before
    tokenized = count_calls(monkeypatch, ptb, "python_tokenize")
    indexed = count_calls(monkeypatch, ngram, "NgramIndex")
    together = capeval.evaluate(CANDIDATES, REFERENCES, metrics=["bleu", "rouge", "cider"])
    # Candidates and references once each, for three metrics; the 6 references' and the 3 candidates' n-grams counted
    # once, for three (ROUGE-L reads the words of the same index).
    assert len(tokenized) == 2 and [len(call[0]) for call in indexed] == [6, 3]
    alone = {**BleuScorer().score(CANDIDATES, REFERENCES), **RougeScorer().score(CANDIDATES, REFERENCES),
             **CiderScorer().score(CANDIDATES, REFERENCES)}
    assert len(tokenized) == 2 and len(indexed) == 2  # kept across calls: scored again, nothing is counted again
    clear_feature_caches()
    cold = {**BleuScorer().score(CANDIDATES, REFERENCES), **RougeScorer().score(CANDIDATES, REFERENCES),
            **CiderScorer().score(CANDIDATES, REFERENCES)}
    assert len(tokenized) == 2 + 2 and len(indexed) == 2 + 2  # the first scorer counts, the others read its work
    assert together.columns == alone == cold


def test_the_shared_tables_live_only_inside_the_block():
    with shared_text_work():
        call_table("ngrams")["a"] = 1
        with shared_text_work():  # a nested block shares the outer one's tables
            assert call_table("ngrams") == {"a": 1}
    assert call_table("ngrams") == {}


def test_karpathy_test_scores_equal_pycocoevalcap():
    """pycocoevalcap's BLEU-4, ROUGE-L and CIDEr-D (PTB tokens stored with the tests) on 1,000 Karpathy-test captions."""
    pytest.importorskip("pycocoevalcap")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    rows = pd.read_parquet(REPO / "tests/assets/karpathy_coco_tokens.parquet")[:1000]
    candidates = [row[0] for row in rows.candidates]
    references = [list(refs) for refs in rows.references]
    gts = {i: refs for i, refs in enumerate(references)}
    res = {i: [c] for i, c in enumerate(candidates)}
    result = capeval.evaluate(candidates, references, metrics=["bleu:tokenizer=none", "rouge:tokenizer=none",
                                                                "cider:tokenizer=none"])
    corpus_bleu, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    assert result.columns["bleu"] == pytest.approx(bleu[3], abs=1e-12, rel=0)
    assert [result.corpus[f"bleu_{k}"] for k in range(1, 5)] == pytest.approx(corpus_bleu, abs=1e-12, rel=0)
    assert result.columns["rouge_l"] == pytest.approx(list(Rouge().compute_score(gts, res)[1]), abs=1e-12, rel=0)
    assert result.columns["cider"] == pytest.approx(list(Cider().compute_score(gts, res)[1]), abs=1e-12, rel=0)


def run_python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)


def test_text_only_calls_import_nothing_heavy():
    """In fresh processes: a first text-only capeval.evaluate imports neither tqdm nor scipy (~0.4 s of a first
    call; numpy, 0.08 s, counts the n-grams; tests/core/test_evaluation.py checks torch), and ``capeval score`` with BLEU,
    ROUGE-L and CIDEr-D imports no torch."""
    heavy = "import sys; print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
    evaluated = run_python("import json, capeval; capeval.evaluate(['a dog'], [['a dog runs']], metrics=['bleu']); "
                           + heavy.format(modules=("tqdm", "scipy")))
    assert json.loads(evaluated.stdout.splitlines()[-1]) == []
    scored = run_python("import json; from capeval.cli import main; "
                        "main(['score', '--metric', 'bleu', '--metric', 'rouge', '--metric', 'cider']); "
                        + heavy.format(modules=("torch", "transformers")))
    assert "- bleu: mean" in scored.stdout and json.loads(scored.stdout.splitlines()[-1]) == []


def test_meteor_starts_its_jvm_first_and_is_scored_last(monkeypatch):
    from capeval.scoring.coco import MeteorScorer
    from capeval.scoring.protocol import Scores

    events = []
    monkeypatch.setattr(MeteorScorer, "start_in_background", lambda self: events.append("start jvm"))
    monkeypatch.setattr(MeteorScorer, "score", lambda self, predictions, references=None, **_: (
        events.append("meteor"), Scores({"meteor": [0.5] * len(predictions)}, corpus={"meteor": 0.5}))[1])
    original_bleu = BleuScorer.score
    monkeypatch.setattr(BleuScorer, "score", lambda self, *args, **kwargs: (events.append("bleu"), original_bleu(self, *args, **kwargs))[1])
    result = capeval.evaluate(CANDIDATES, REFERENCES, metrics=["meteor", "bleu"])
    assert events == ["start jvm", "bleu", "meteor"]
    assert list(result.columns) == ["meteor", "bleu"] and result.columns["meteor"] == [0.5] * 3


def test_a_failed_jvm_start_leaves_its_error_to_the_scoring(monkeypatch):
    from capeval.scoring.coco import MeteorScorer

    def no_java(self):
        raise RuntimeError("METEOR needs a Java runtime")

    monkeypatch.setattr(MeteorScorer, "start_in_background", no_java)
    monkeypatch.setattr(MeteorScorer, "score", lambda self, *args, **kwargs: no_java(self))
    with pytest.raises(RuntimeError, match="Java runtime"):
        capeval.evaluate(CANDIDATES, REFERENCES, metrics=["meteor", "bleu"])


def test_collection_paused_restores_the_collector():
    import gc

    from capeval.text.call_cache import collection_paused

    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller that had paused it keeps it paused
    finally:
        gc.enable()
