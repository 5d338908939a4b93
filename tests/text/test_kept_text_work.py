"""What the text metrics keep across calls (capeval.text.call_cache.kept_text_work): a repeated call, or the Trainer
hook's next evaluation on the same references, tokenizes and counts only what it has not seen; the scores equal a
cold call's; the kept work stays within CAPEVAL_ENCODING_CACHE_MB."""

import pytest

import capeval
from capeval.integrations.trainer import CaptionEvaluator
from capeval.models import clear_feature_caches
from capeval.scoring import ngram
from capeval.text import ptb
from capeval.text.call_cache import kept_text_work

REFERENCES = [["A dog running on grass.", "The brown dog runs in a park!"], ["Two people riding horses by the sea.", "Men on horseback"],
              ["A cat (quietly) sleeps on a mat.", "A kitten naps."]]
FIRST = ["A dog runs on the grass.", "Two men ride horses on a beach", "A cat sleeps."]
SECOND = ["A brown dog in a park.", "Two men ride horses on a beach", "A sleeping kitten."]
METRICS = ["bleu", "rouge", "cider"]


@pytest.fixture
def counted(monkeypatch):
    """The lines each call tokenizes and the sentences each n-gram index counts, from nothing kept."""
    clear_feature_caches()
    calls = {"lines": [], "indexed": []}
    tokenize_lines, index = ptb.tokenize_lines, ngram.NgramIndex

    def counting_tokenize_lines(lines, rows, chunks):
        calls["lines"] += [lines[row] for row in rows]
        return tokenize_lines(lines, rows, chunks)

    def counting_index(sentences, n):
        calls["indexed"].append(list(sentences))
        return index(sentences, n)

    monkeypatch.setattr(ptb, "tokenize_lines", counting_tokenize_lines)
    monkeypatch.setattr(ngram, "NgramIndex", counting_index)
    yield calls
    clear_feature_caches()


def cold(predictions) -> dict:
    clear_feature_caches()
    return capeval.evaluate(predictions, REFERENCES, metrics=METRICS).columns


def test_a_repeated_call_computes_nothing_again(counted):
    first = capeval.evaluate(FIRST, REFERENCES, metrics=METRICS)
    assert len(counted["lines"]) == 3 + 6 and [len(sentences) for sentences in counted["indexed"]] == [6, 3]
    again = capeval.evaluate(FIRST, REFERENCES, metrics=METRICS)
    assert len(counted["lines"]) == 9 and len(counted["indexed"]) == 2
    assert again.columns == first.columns and again.corpus == first.corpus


def test_new_predictions_cost_only_themselves(counted):
    capeval.evaluate(FIRST, REFERENCES, metrics=METRICS)
    seen = len(counted["lines"])
    second = capeval.evaluate(SECOND, REFERENCES, metrics=METRICS).columns
    # The references and the caption both sets share are not tokenized again; only the new set is counted.
    assert counted["lines"][seen:] == ["A brown dog in a park.", "A sleeping kitten."]
    assert counted["indexed"][2:] == [[ptb.coco_tokenize(caption) for caption in SECOND]]
    assert second == cold(SECOND)


def test_the_trainer_hooks_next_evaluation_counts_only_the_new_predictions(counted):
    evaluator = CaptionEvaluator(METRICS, references=REFERENCES)
    first = evaluator.evaluate_texts(FIRST)
    seen_lines, seen_indexes = len(counted["lines"]), len(counted["indexed"])
    second = evaluator.evaluate_texts(SECOND)
    assert counted["lines"][seen_lines:] == ["A brown dog in a park.", "A sleeping kitten."]
    assert len(counted["indexed"]) == seen_indexes + 1
    assert evaluator.evaluate_texts(FIRST) == first and len(counted["indexed"]) == seen_indexes + 1
    assert second == CaptionEvaluator(METRICS, references=REFERENCES).evaluate_texts(SECOND)


def test_a_line_that_reads_the_next_one_is_kept_with_it(counted):
    # "U." ends a sentence before a line starting "A ", not before "Two ": kept by the line and the lines after it.
    assert ptb.ptb_tokenize(["Wii U.", "A TV."]) == ["wii u", "a tv"]
    assert ptb.ptb_tokenize(["Wii U.", "Two TVs."]) == ["wii u.", "two tvs"]
    assert ptb.ptb_tokenize(["Two TVs.", "Wii U.", "A TV."]) == ["two tvs", "wii u", "a tv"]
    assert counted["lines"] == ["Wii U.", "A TV.", "Wii U.", "Two TVs."]
    assert kept_text_work().lines["Wii U."] == ptb.DEPENDS_ON_NEXT_LINES


def test_the_budget_bounds_what_is_kept(counted, monkeypatch):
    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", "0")
    nothing = capeval.evaluate(FIRST, REFERENCES, metrics=METRICS).columns
    work = kept_text_work()
    assert (len(work), work.size, len(work.lines), len(work.chunks)) == (0, 0, 0, 0)
    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", "0.02")  # about 20 kB: room for a few entries
    for predictions in (FIRST, SECOND, FIRST):
        assert capeval.evaluate(predictions, REFERENCES, metrics=METRICS).columns == cold(predictions)
    work = kept_text_work()
    assert work.budget == int(0.02 * 2 ** 20) and 0 < work.size <= work.max_size
    assert work.lines.bytes <= work.lines.max_bytes and work.chunks.bytes <= work.chunks.max_bytes
    # A quarter of the budget for the lines (a call's 9 lines, about 2.3 kB, fit in 5 kB), a sixteenth for the chunks.
    assert (work.lines.max_bytes, work.chunks.max_bytes) == (work.budget // 4, work.budget // 16)
    assert 2000 < work.lines.bytes and set(FIRST) <= set(work.lines)
    monkeypatch.delenv("CAPEVAL_ENCODING_CACHE_MB")
    assert nothing == cold(FIRST)


def test_clearing_the_feature_caches_empties_it():
    capeval.evaluate(FIRST, REFERENCES, metrics=METRICS)
    work = kept_text_work()
    assert len(work) and work.lines and work.chunks
    clear_feature_caches()
    assert (len(work), work.size, len(work.lines), len(work.chunks)) == (0, 0, 0, 0)


def test_no_value_over_an_eighth_of_the_budget_is_kept(counted, monkeypatch):
    # A call of three captions computes 14 values; the largest, its corpus index (about 15 kB), is over an eighth of
    # 80 kB (10 kB) while all of them would fit in the budget: it is computed again from the kept indexes.
    expected = capeval.evaluate(FIRST, REFERENCES, metrics=METRICS).columns
    assert len(kept_text_work()) == 14
    monkeypatch.setenv("CAPEVAL_ENCODING_CACHE_MB", "0.08")
    for _ in range(2):
        assert capeval.evaluate(FIRST, REFERENCES, metrics=METRICS).columns == expected
    work = kept_text_work()
    assert (len(work), work.max_entry) == (13, int(0.08 * 2 ** 20) // 8) and work.size < work.max_size
    assert len(counted["indexed"]) == 4  # the blocks counted once per budget: the corpus index is rebuilt from them
