"""Pure-Python COCO PTB tokenization against the CoreNLP jar pycocoevalcap runs."""

import shutil
from itertools import product

import pytest

from capeval.benchmarks import prepare
from capeval.text.call_cache import StringTable
from capeval.text.ptb import COCO_PUNCTUATION, chunked_tokenize, coco_tokenize, ptb_tokens
from capeval.text.ptb import ptb_tokenize
from capeval.text.ptb import tokenize_corpus
from capeval.text.call_cache import shared_text_work

from fixtures import NEEDS_JAVA


@pytest.mark.parametrize("text, expected", [
    ("A man (in red) isn't here.", "a man -lrb- in red -rrb- is n't here"),  # -lrb- survives: the toolkit's quirk
    ("The dog 's toy", "the dog 's toy"),
    ("He cannot see the U.S. flag at 12:30, 1,000 times", "he can not see the u.s. flag at 12:30 1,000 times"),
    ('A sign reading " free hugs " ...', "a sign reading free hugs"),
    ("scene.The person/people on a t-shirt", "scene.the person/people on a t-shirt"),
    ("What is this??", "what is this ??"),
    ("a horse &apos;s tail", "a horse 's tail"),
    ("Mr. Smith on St. Mark's Ave.", "mr. smith on st. mark 's ave."),
])
def test_known_cases(text, expected):
    assert coco_tokenize(text) == expected


def test_the_words_of_a_line_with_punctuation_are_tokenized_as_the_lexer_does():
    # Words of letters and digits beside chunks with punctuation: lowercased, "cannot", "gonna", ... split in two.
    lines = ["Two DOGS, 3 cats", "It CANNOT, be GONNA rain (yes)", "wanna? gotta! 5Gonna x"]
    expected = ["two dogs 3 cats", "it can not be gon na rain -lrb- yes -rrb-", "wan na got ta 5gonna x"]
    assert [coco_tokenize(line) for line in lines] == expected
    assert chunked_tokenize(lines, StringTable(10_000)) == expected


def test_a_word_and_a_mark_are_tokenized_as_the_lexer_does():
    # Words (hyphenated or not) with a mark after them skip the lexer: each equals the lexer's tokens, COCO's dropped.
    words = ["dog", "CANNOT", "Gonna", "5", "3d", "x", "T", "wanna", "lrb", "n", "s", "ll"]
    chunks = sorted({"-".join(parts) + mark for parts in product(words, repeat=2) for mark in ["", ",", ";", ":", "!", "?"]}
                    | {word + mark for word in words for mark in ["", ",", ";", ":", "!", "?"]})
    lexed = [" ".join(t for t in ptb_tokens(chunk) if t not in COCO_PUNCTUATION) for chunk in chunks]
    assert [lexed[chunks.index(chunk)] for chunk in ("CANNOT,", "T-dog!", "5-x:", "wanna")] == ["can not", "t-dog", "5-x", "wan na"]
    assert chunked_tokenize([f"{chunk} (x)" for chunk in chunks], StringTable(10_000)) == [f"{coco} -lrb- x -rrb-".lstrip()
                                                                                           for coco in lexed]


def test_corpus_tokenization():
    candidates, references = tokenize_corpus(["A dog.", "A dog."], [["A dog!"], ["A cat."]])
    assert candidates == ["a dog", "a dog"] and references == [["a dog"], ["a cat"]]
    with pytest.raises(ValueError, match="tokenizer"):
        tokenize_corpus(["a"], [["a"]], "spacy")


def test_the_scorers_of_a_call_share_one_tokenization_of_its_corpus():
    inputs = (["A dog."], [["A dog!", "The dog."]])
    with shared_text_work():
        first, again = tokenize_corpus(*inputs), tokenize_corpus(*inputs)
        other = tokenize_corpus(["A dog."], [["A dog!"], ["The dog."]][:1])
    assert first is again and first == (["a dog"], [["a dog", "the dog"]]) and other == (["a dog"], [["a dog"]])
    assert tokenize_corpus(*inputs) is not tokenize_corpus(*inputs)  # outside a call: fresh lists


@pytest.mark.skipif(shutil.which("java") is None, reason="needs Java for the CoreNLP jar")
def test_equals_the_jar_on_flickr8k_expert_rows():
    items = prepare("flickr8k_expert").items
    sentences = list(dict.fromkeys(items.candidates[:400] + [r for refs in items.references[:400] for r in refs]))
    sentences += ["A man (in red) isn't here.", 'She said "hi" ...', "Three dogs -- one brown; two white!"]
    assert ptb_tokenize(sentences, backend="python") == ptb_tokenize(sentences, backend="java")



LINE_BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c"]


def captions_with_breaks(separator: str) -> tuple[list[str], list[str]]:
    # "No." at the end of a line stays "no."; before a number on its own line it would be "no".
    return ([f"A dog{separator}runs.", "A cat sleeps.", f"Two{separator}{separator}men ride.", f"Room No.{separator}", "5 has a bed"],
            ["a dog runs", "a cat sleeps", "two men ride", "room no.", "5 has a bed"])


@pytest.mark.parametrize("separator", LINE_BREAKS)
def test_every_line_break_inside_a_caption_is_a_space(separator):
    """A caption holding any break Python's splitlines knows (\\r, U+2028, ...) is its parts joined by a space, alone or
    among others."""
    captions, expected = captions_with_breaks(separator)
    assert ptb_tokenize(captions) == expected
    assert [ptb_tokenize([caption])[0] for caption in captions[:3]] == expected[:3]


@NEEDS_JAVA
def test_the_jar_reads_a_caption_with_a_line_break_as_one_line():
    """The jar reads its input by lines (pycocoevalcap makes a newline a space): a break it knows left in a caption
    would start a line there and shift every caption after it."""
    pytest.importorskip("pycocoevalcap")
    captions, expected = map(sum, zip(*map(captions_with_breaks, LINE_BREAKS)), ([], []))
    assert ptb_tokenize(captions, backend="java") == expected
