"""The pure-Python PTB tokenizer against pycocoevalcap's Java one on unusual text, and hand-pinned tokenizations
(the jar comparison shares COCO_PUNCTUATION with the code under test, so it cannot catch a change of that list)."""

import random

import pytest

from capeval.text.ptb import coco_tokenize, ptb_tokenize

from fixtures import NEEDS_JAVA

WORDS = ["a", "A", "dog", "runs", "on", "the", "grass", "Two", "men", "riding", "horses", "isn't", "dog's", "cafe", "Mr.",
         "U.S.", "12:30", "1,000", "3.5", "t-shirt", "person/people", "(in", "red)", "it", "cannot", "-", "--", ",", ".", "!",
         "?", ";", ":", "...", "&amp;", "50%", "$5", "#1", "1/2"]
# Each rewrites a word, or adds text beside it, the way captions copied from the web do.
UNUSUAL = [
    lambda w: f"“{w}”", lambda w: f"‘{w}’", lambda w: f"«{w}»", lambda w: w.replace("'", "’"),   # curly and angle quotes
    lambda w: w + "\u0301" if w.isalpha() else w, lambda w: w[:1] + "\u0308" + w[1:] if w.isalpha() else w,  # combining marks
    lambda w: w + "\u200b", lambda w: "\u200d" + w, lambda w: w + "\u2060",                        # zero-width characters
    lambda w: w[:1] + "\u00ad" + w[1:] if w.isalpha() and w != "cannot" else w,                    # soft hyphen
    lambda w: w + " 🐶", lambda w: w + "😀", lambda w: "𝐀 " + w,                                    # beyond the BMP
    lambda w: w + "\x07", lambda w: "\x01" + w, lambda w: w + "\x7f",                               # control characters
    lambda w: f"<b>{w}</b>", lambda w: f"{w} <br/>",                                                # HTML
    lambda w: f"see https://example.org/{plain(w)}?q=1 now", lambda w: f"(http://x.com/{plain(w)})",  # URLs
    lambda w: f"{w}—{w}", lambda w: f"{w} – {w}", lambda w: f"{w}…", lambda w: f"€{len(w)} £{len(w)}",  # dashes, ellipsis, currency
    lambda w: f"me{len(w)}@example.com", lambda w: f"#tag @user{plain(w)}",                          # e-mail, hashtags, handles
]


def plain(word: str) -> str:
    return "".join(c for c in word if c.isalnum()) or "x"


def varied_strings(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    strings = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 9))]
        for i in rng.sample(range(len(words)), rng.randint(1, min(3, len(words)))):
            words[i] = rng.choice(UNUSUAL)(words[i])
        strings.append(" ".join(words))
    return strings


@pytest.mark.parametrize("text, expected", [
    ("Three dogs -- one brown; two white!", "three dogs one brown two white"),
    ("a dog - a cat : a bird ... a fish", "a dog a cat a bird a fish"),
    ("\"Hi,\" she said. `Yes' (maybe) {x} [y]", "hi she said yes -lrb- maybe -rrb- -lcb- x -rcb- -lsb- y -rsb-"),
    ("What?! No... Really.", "what ?! no really"),
    ("a cafe\u0301 — “hi” <b>x</b> https://x.org/a?b=1.", "a cafe\u0301 hi <b> x </b> https://x.org/a?b=1"),
    ("a 2 1/2 year old", "a 2\u00a01/2 year old"),
    ("“a dog” runs on the grass", "a dog runs on the grass"),
    ("don’t — stop… now", "do n't stop now"),
])
def test_hand_pinned_tokenizations(text, expected):
    assert coco_tokenize(text) == expected


def test_curly_quotes_no_longer_change_bleu():
    from capeval.scoring.coco import BleuScorer

    for tokenizer in ("ptb", "ptb-java") if NEEDS_JAVA.args[0] is False else ("ptb",):
        scores = BleuScorer().score(["“a dog” runs on the grass"], [["a dog runs on the grass"]])
        assert scores["bleu"] == [pytest.approx(1.0)], tokenizer


@NEEDS_JAVA
def test_equals_the_java_tokenizer_on_thousands_of_varied_strings():
    pytest.importorskip("pycocoevalcap")
    strings = varied_strings(3000)
    python, java = ptb_tokenize(strings, backend="python"), ptb_tokenize(strings, backend="java")
    differing = [(s, p, j) for s, p, j in zip(strings, python, java) if p != j]
    assert not differing, f"{len(differing)} of {len(strings)} differ, e.g. {differing[:5]}"


#: Unicode 14's new case pairs, which the jar's lexer drops (its answers, Java 17), and their neighbours.
UNICODE_14 = {"a \u2c2f dog": "a dog", "\u2c2f\u2c5f \ua7c0 \ua7c1": "", "a\u2c2fb c": "a b c", "a\ua7d0b": "a b",
              "a\ua7c1b.": "a b.", "x \ua7d9 \ua7d7 \ua7d1 y": "x y", "x\U00010570y \U00010597": "x y",
              "dogs \ua7d6. The cat": "dogs the cat", "A\u03a3\u2c2f": "a\u03c2"}


def test_unicode_14_case_pairs_are_dropped_as_the_jar_drops_them():
    assert ptb_tokenize(list(UNICODE_14)) == list(UNICODE_14.values())


@NEEDS_JAVA
@pytest.mark.slow
def test_unicode_14_case_pairs_equal_the_java_tokenizer():
    assert ptb_tokenize(list(UNICODE_14), backend="java") == list(UNICODE_14.values())
