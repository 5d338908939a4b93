"""Behaviour of the text kernels that planted bugs showed no test pinned: an n-gram index of another order asked for in
one call (or a later one) is its own, and a line break inside a caption (\\r, U+2028, ...) is a space that leaves every
caption, its own and the next ones, tokenized as with a space."""

import pytest

from capeval.models import clear_feature_caches
from capeval.scoring.ngram import bleu_statistics, cider_d, cider_document_frequencies, rouge_l
from capeval.text.call_cache import shared_text_work
from capeval.text.ptb import input_lines, ptb_tokenize, ptb_tokens, reads_next_line

from fixtures import NEEDS_JAVA

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


@pytest.mark.parametrize("text, tokens", [
    ('"Hi there" he said', "`` hi there '' he said"),  # as the jar gives them (COCO's output drops the quotes)
    ('he said "hi" to me.', "he said `` hi '' to me ."),
    ("a dog 'runs' fast", "a dog ` runs ' fast"),
    ('it is 5 " long', "it is 5 '' long"),  # a quote between spaces closes
])
def test_quotes_open_after_a_space_and_close_before_one(text, tokens):
    assert " ".join(ptb_tokens(text)) == tokens


@pytest.mark.parametrize("word, rest, reads", [
    ("U.", " A", True), ("U.", "", True), ("u.", "  ", True), ("No.", " ", True), ("no.", "", True),  # the look ends past the line
    ("U.", " A dog", False), ("U.", ", a", False), ("No.", " 5 dogs", False),  # it ends within the line
    ("dog.", "", False), ("U.S.", "", False), ("etc.", " A", False), ("Mr.", "", False),  # only a "." token depends on it
])
def test_which_words_with_a_period_read_the_next_line(word, rest, reads):
    assert reads_next_line(word, rest) is reads


def test_a_caption_holding_the_separator_of_the_line_search():
    # input_lines finds line breaks in the captions joined by NUL: a caption that holds one is looked at on its own.
    assert input_lines(("a\x00dog", "two\r\ncats", "a\x00\x00bird\u2028flies")) == ["a\x00dog", "two cats", "a\x00\x00bird flies"]
    assert ptb_tokenize(["a\x00dog", "two\r\ncats"]) == ["a dog", "two cats"]
