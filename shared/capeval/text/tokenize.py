"""Word tokenization and SMURF's caption preprocessing, with no NLTK data files.

SMURF's SPARCS was computed with ``nltk.word_tokenize``. With ``preserve_line=True``
it skips the punkt sentence splitter (which needs downloaded data) and, on NLTK ≤ 3.9,
reproduces the published scores exactly; NLTK 3.10 changed how quotes split
(:func:`check_word_tokenizer` guards against it).
"""

from __future__ import annotations

import re
from functools import lru_cache

# Captions made only of these characters never trigger a rule of NLTK's word tokenizer
# (every rule needs punctuation, a quote or one of the contractions below), so they split on whitespace.
_PLAIN = re.compile(r"[A-Za-z0-9 \t\n]*")
# The whole-word contractions NLTK splits even without punctuation ("cannot" → "can not", "gonna" → "gon na", ...).
_SPLIT_CONTRACTIONS = re.compile(r"(?i)cannot|gimme|gonna|gotta|lemme|wanna")
# Plain text with commas and at most one period, at its end: of NLTK's rules only its comma rules and its final-period
# rule can fire there (the contractions above aside).
_COMMAS_AND_FINAL_PERIOD = re.compile(r"[A-Za-z0-9 \t\n,]*\.?[ \t\n]*")
# NLTK's two comma rules: a comma before anything but a digit, and a comma at the end, stand apart.
_COMMA_RULES = ((re.compile(r"([:,])([^\d])"), r" \1 \2"), (re.compile(r"([:,])$"), r" \1 "))

TOKENIZER_CANARY = "a man 'walk' on"
#: NLTK ≤ 3.9's tokens for :data:`TOKENIZER_CANARY` (NLTK 3.10 gives ``["a", "man", "'", "walk", "'", "on"]``).
TOKENIZER_CANARY_TOKENS = ["a", "man", "'walk", "'", "on"]


def smurf_preprocess(caption: str) -> str:
    """SMURF's ``preprocess``: lower-case, strip trailing whitespace, delete every " ." and then every
    remaining ".". Other punctuation and runs of spaces are kept.

    >>> smurf_preprocess("A man with a red helmet on a small moped on a dirt road. ")
    'a man with a red helmet on a small moped on a dirt road'
    >>> smurf_preprocess("Mr. Smith  waves , then leaves .")
    'mr smith  waves , then leaves'
    """
    # The released code also splits on " " and re-joins with " ", which changes nothing.
    return caption.lower().rstrip().replace(" .", "").replace(".", "")


@lru_cache(maxsize=None)
def check_word_tokenizer() -> None:
    """Raise ``RuntimeError`` unless NLTK's word tokenizer splits quotes as NLTK ≤ 3.9 does.

    >>> check_word_tokenizer()
    """
    from nltk import __version__ as nltk_version
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    tokens = nltk_word_tokenize(TOKENIZER_CANARY, preserve_line=True)
    if tokens != TOKENIZER_CANARY_TOKENS:
        raise RuntimeError(
            f"NLTK {nltk_version} tokenizes {TOKENIZER_CANARY!r} as {tokens}, not {TOKENIZER_CANARY_TOKENS} as NLTK <= 3.9 "
            "did when SMURF's published scores were computed; install nltk>=3.6.2,<3.10 to reproduce them"
        )


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text, preserve_line=True)`` (no punkt data needed), with fast paths for captions of
    plain letters, digits and spaces, where NLTK's rules reduce to a whitespace split, and for those with commas
    and one final period, where they reduce to the comma and final-period rules.

    >>> word_tokenize("a man 'walk' on the cloud-wreathed hill, cannot stop")
    ['a', 'man', "'walk", "'", 'on', 'the', 'cloud-wreathed', 'hill', ',', 'can', 'not', 'stop']
    >>> word_tokenize("two dogs  play in the snow"), word_tokenize("a dog, a cat,2,000 mice, and a bus.")
    (['two', 'dogs', 'play', 'in', 'the', 'snow'], ['a', 'dog', ',', 'a', 'cat,2,000', 'mice', ',', 'and', 'a', 'bus', '.'])
    """
    if not _SPLIT_CONTRACTIONS.search(text):
        if _PLAIN.fullmatch(text):
            return text.split()
        if _COMMAS_AND_FINAL_PERIOD.fullmatch(text):
            body = text.rstrip()
            period = body.endswith(".")
            body = body[:-1] if period else body
            for rule, replacement in _COMMA_RULES:
                body = rule.sub(replacement, body)
            return body.split() + (["."] if period else [])
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    return nltk_word_tokenize(text, preserve_line=True)
