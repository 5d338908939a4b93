"""Behaviour of the text kernels that planted bugs showed no test pinned: an n-gram index of another order asked for in
one call (or a later one) is its own, and a line break inside a caption (\\r, U+2028, ...) is a space that leaves every
caption, its own and the next ones, tokenized as with a space."""

import pytest

from capeval.models import clear_feature_caches
from capeval.scoring.ngram import bleu_statistics, cider_d, cider_document_frequencies, rouge_l
from capeval.text.call_cache import shared_text_work
from capeval.text.ptb import ptb_tokenize

from .conftest import NEEDS_JAVA

CANDIDATES = ["a dog runs on the grass in the park today", "two men ride horses on a sunny beach", "a cat"]
REFERENCES = [["a dog running on grass in a park", "the brown dog runs in the park today"],
              ["two people riding horses by the sea on a beach", "men on horseback"], ["a cat sleeps", "a small cat"]]
ORDERS = (1, 4, 5, 6, 2)  # a larger order after a smaller one: an index kept without its order would be too short


def scored(n: int):
    return (bleu_statistics(CANDIDATES, REFERENCES, n), cider_d(CANDIDATES, REFERENCES, n),
            cider_document_frequencies(REFERENCES, n), rouge_l(CANDIDATES, REFERENCES))


@pytest.fixture(scope="module")
def alone() -> dict:
    """Each order's values, computed with nothing kept from another order."""
    values = {}
    for n in ORDERS:
        clear_feature_caches()
        values[n] = scored(n)
    return values


def test_each_order_reads_its_own_index_in_one_call(alone):
    clear_feature_caches()
    with shared_text_work():
        for n in ORDERS:
            assert scored(n) == alone[n], n
    assert len(alone[6][0][0]) == 2 + 2 * 6 and len(alone[2][0][0]) == 2 + 2 * 2


def test_each_order_reads_its_own_index_across_calls(alone):
    clear_feature_caches()
    for n in ORDERS:
        assert scored(n) == alone[n], n  # each call keeps its indexes for the next


BREAKS = ["\r", "\r\n", "\u2028", "\u2029", "\x0b", "\x0c"]  # the line breaks of Java's lexer (and of str.splitlines)
# Where a space matters to the lexer: a mixed number, "rock 'n roll", a single letter before a sentence start, a
# caption that ends in a break; the next captions must stay in their places.
LINES = ["A 2{}1/2 year old boy.", "rock 'n{}roll on the Wii U.{}A TV", "a dog runs.{}", "{}Two dogs", "Mr.{}Smith"]


@pytest.mark.parametrize("line_break", BREAKS, ids=[f"U+{ord(c[0]):04X}" for c in BREAKS])
def test_a_line_break_inside_a_caption_is_a_space(line_break):
    broken = [line.format(*[line_break] * line.count("{}")) for line in LINES]
    spaced = [line.format(*[" "] * line.count("{}")) for line in LINES]
    expected = ["a 2\u00a01/2 year old boy", "rock 'n roll on the wii u a tv", "a dog runs", "two dogs", "mr. smith"]
    assert ptb_tokenize(spaced) == expected
    assert ptb_tokenize(broken) == expected
    assert ptb_tokenize(broken[:1] + ["A TV."]) == ["a 2\u00a01/2 year old boy", "a tv"]


@NEEDS_JAVA
@pytest.mark.parametrize("line_break", BREAKS[:3], ids=[f"U+{ord(c[0]):04X}" for c in BREAKS[:3]])
def test_the_jar_gets_one_line_per_caption(line_break):
    pytest.importorskip("pycocoevalcap")
    broken = [line.format(*[line_break] * line.count("{}")) for line in LINES]
    assert ptb_tokenize(broken, backend="java") == ptb_tokenize(broken)
