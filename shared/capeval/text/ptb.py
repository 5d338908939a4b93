"""PTB-style tokenization as the COCO caption toolkit does it, in pure Python.

pycocoevalcap's ``PTBTokenizer`` runs Stanford CoreNLP 3.4.1's ``PTBTokenizer -preserveLines
-lowerCase`` on every caption and then drops the tokens in :data:`COCO_PUNCTUATION`. Because the
lowercasing happens first, bracket tokens come out as ``-lrb-``/``-rrb-`` and are *not* dropped
(the list holds the upper-case forms): a quirk reproduced here. :func:`ptb_tokenize` rebuilds
the tokenizer's output without Java; ``backend="java"`` runs the jar (from pycocoevalcap, or
``$CAPEVAL_CORENLP_JAR``) for exact parity on arbitrary text.

The port follows the jar's lexer rules: abbreviations and acronyms that keep their period ("mr.", "u.s.", a single
letter: "b."), matched as the lexer matches them (mostly without regard to case; "Mass." but not "mass."), and the
look across the line break that makes "Wii U." end in "u" before a line starting "A " (so a caption can depend on
the next: :func:`ptb_tokenize` tokenizes a list as the jar tokenizes it, one caption a line); contractions in any
case ("ISN'T" is "is n't"), words with apostrophes the lexer keeps whole ("o'clock", "rock 'n' roll", "'90s"), the
entities "&lt;"/"&gt;" (never a tag). It equals the jar on every caption of Flickr8k, PASCAL-50S (all 50
references), Composite, THumB, CapEval1k, the Karpathy-test caption sets and the reformulations data set (tested
against the jar's output stored with the tests) and on thousands of varied strings: curly and angle quotes, dashes,
the ellipsis, € and £, combining marks inside words, zero-width, control and format characters (they separate
tokens), characters beyond the Basic Multilingual Plane such as emoji and variation selectors (dropped), simple HTML
tags, URLs, e-mail addresses, hashtags and handles, mixed numbers ("2 1/2"). Known differences remain on rarer text:
words glued together without a space where the lexer's longest match decides ("isn'tdog"), a combining mark after a
digit or inside a hyphenated or slashed word (the jar splits there), a soft hyphen inside "cannot"/"gonna" (the jar
keeps the word whole), a "www." address with a path, HTML tags with attributes, other symbols the jar drops (₹), a
control character (U+0000-U+001F, U+007F-U+009F) right after a number before a fraction, after "'n" or after a
single letter's period (the jar does not read it as a space there; it reads U+0080 as "$"), and the direction of
quotes among the PTB tokens (the COCO output drops them); use ``tokenizer="ptb-java"`` where such text matters. A
line break inside a caption (\\r, U+2028, ...) is a space, as pycocoevalcap makes a \\n one (the jar would
otherwise start a new line there and shift every caption after it).
"""

from __future__ import annotations

import operator
import os
import re
import shutil
import subprocess
import string
import tempfile
import unicodedata
from itertools import chain, compress, count, islice, repeat
from pathlib import Path
from typing import Sequence

from .call_cache import StringTable, call_table, kept, kept_text_work

# pycocoevalcap's list, verbatim in meaning: these tokens are removed after tokenization.
COCO_PUNCTUATION = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                              ".", "?", "!", ",", ":", "-", "--", "...", ";"])

# CoreNLP's lexer keeps the final period of an abbreviation or acronym in the token ("u.s.", "mr.", "b."); other
# words lose it to a "." token. It matches these abbreviations without regard to case, and after the first group
# it also ends the sentence (adds a ".") where the text ends or a space and then a space, a capital or a tag follow.
SENTENCE_FINAL_ABBREVIATIONS = frozenset("""
jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thurs fri
ala ariz calif colo conn ct dak fla ga ind kan kans ky md mich minn mo mont neb nev okla penn tenn va vt wis wisc wyo
inc co cos corp pty pte ptys ptes ppty ppte pptys pptes ltd plc rt bancorp bhd assn univ intl sys
tel est ext sq jr sr bros ed.d ph.d blvd rd esq etc al seq bldg
""".split())
ABBREVIATIONS = frozenset("""
mr mrs ms dr drs prof profs sen sens rep reps atty attys lt col gen messrs gov govs adm rev maj sgt cpl pvt capt
st ste ave pres lieut hon brig cmdr comdr pfc spc supt supts det mt ft adj adv asst assoc ens insp mlle mme msgr sfc
vs alex wm jos cie cf treas ph invt elec natl mfg mtg dept
""".split())
# These need a capital first letter (the lexer matches that letter case-sensitively): "Mass." and "MASS." stay
# whole, "mass." is a word and a period. "Miss." is a title: it keeps its period but ends no sentence.
CAPITALIZED_SENTENCE_FINAL = frozenset("az ark del ill la mass ore pa tex wash".split())
CAPITALIZED_ABBREVIATIONS = frozenset(["miss"])
# These keep their period only before a number: "no. 5", "fig. 2".
NUMBER_ABBREVIATIONS = frozenset("ca fig figs prop no nos art pp op".split())
BEFORE_NUMBER = re.compile(r"\s?[0-9]")
ACRONYM = re.compile(r"(?:[a-z]\.)+")
# An acronym followed by a space, one of these words with a capital first letter and a space ends a sentence:
# a one-letter one ("I. The") is then a letter and a period, a longer one keeps its period and adds a ".".
SENTENCE_STARTERS = frozenset("""
about according additionally after an a as at but earlier he her here however if in it last many more mr. ms. now once
one other our she since so some such that the their then there these they this we when while what yet you
""".split())
HTML_TAG = r"</?[A-Za-z][A-Za-z0-9]*/?>"
NEXT_WORD = re.compile(r"\s+(\S+)\s")
SENTENCE_END = re.compile(r"\s*$|\s(?:\s|[A-Z<])")
QUOTES = {'"': ("``", "''"), "'": ("`", "'")}
BRACKETS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-", "]": "-rsb-"}
# "&lt;" and "&gt;" stay entities until tokenization: the lexer reads "&lt;b&gt;" as "<", "b", ">", never as a tag.
ENTITIES = {"&apos;": "'", "&quot;": '"', "&amp;": "&"}
ANGLE_ENTITIES = {"&lt;": "<", "&gt;": ">"}
SPLIT_WORDS = {"cannot": ("can", "not"), "gonna": ("gon", "na"), "gotta": ("got", "ta"), "wanna": ("wan", "na")}
# CoreNLP 3.4.1 rewrites these while tokenizing: curly and angle quotes become ASCII quotes (so they are dropped as
# punctuation, and the ’ of "don’t" is an apostrophe), dashes "--", the ellipsis "...", € and £ its $ and #; a soft
# hyphen vanishes.
CORENLP_CHARACTERS = str.maketrans({"“": '"', "”": '"', "«": '"', "»": '"', "‹": "'", "›": "'", "‘": "'", "’": "'",
                                    "—": " -- ", "–": " -- ", "―": " -- ", "…": " ... ", "€": "$", "£": "#", "\u00ad": ""})
_BMP = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
# Control and format characters (zero-width spaces and joiners, direction marks) separate tokens in CoreNLP, and
# characters beyond the Basic Multilingual Plane (emoji, math letters) and variation selectors (the U+FE0F of "❤️")
# are dropped: all become a space here.
VARIATION_SELECTORS = "\ufe00-\ufe0f"
# The letters of the case pairs Unicode 14 added (Ⱟ ⱟ, Ꟁ ꟁ, ...; the Vithkuqi ones lie beyond the Basic Multilingual
# Plane): the jar's lexer knows none of them and drops them.
UNICODE_14_CASE_PAIRS = "\u2c2f\u2c5f\ua7c0\ua7c1\ua7d0\ua7d1\ua7d6-\ua7d9"
SEPARATORS = re.compile("[" + "".join(re.escape(c) for c in _BMP if unicodedata.category(c) in ("Cc", "Cf")
                                      and not c.isspace() and c != "\u00ad")
                        + VARIATION_SELECTORS + UNICODE_14_CASE_PAIRS + "\U00010000-\U0010ffff]")
# Combining marks (a decomposed "é") stay inside their word.
WORD_CHAR = r"(?:[^\W_]|[" + "".join(re.escape(c) for c in _BMP if unicodedata.category(c).startswith("M")
                                     and not "\ufe00" <= c <= "\ufe0f") + "])"
LETTER = rf"(?:(?![\d_]){WORD_CHAR})"
# Words join across hyphens, slashes and underscores, and across a period when a letter follows ("scene.The").
WORD = rf"{WORD_CHAR}+(?:[-/_]{WORD_CHAR}+|\.{LETTER}{WORD_CHAR}*)*"
# Contractions are found without regard to case ("ISN'T", "UMBRELLA'S"), except where a longer word wins.
CONTRACTION = r"(?i:n't|'s|'re|'ve|'ll|'d|'m)(?![A-Za-z])"
# A word may start with a letter and an apostrophe: "o'clock", "O'Neil", "d'Angelo", "B'day" (not "o's", "d're":
# where both rules match as much, the lexer prefers the contraction).
NOT_A_CONTRACTION = r"(?!(?i:[smd]|re|ve|ll)(?![^\W_]))"
ELIDED_START = rf"(?:[dDoOlL]|[A-HJ-XZn](?=.{LETTER}{LETTER}))'(?=[^\W_]{{2}}){NOT_A_CONTRACTION}"
# Words with an apostrophe inside or in front that the lexer keeps whole: "Hawai'i", "'90s", "'em", "'til".
APOSTROPHE_WORD = rf"""(?:{LETTER}+[aeiouyAEIOUY]'{NOT_A_CONTRACTION}[aeiouA-Z]{LETTER}*
                       | (?i:'[2-9]0s|'em|'till?|'cause|'n'|'n(?=[ \t\n\r\u00a0]|$)|o'o(?![^\W_])))"""
# Emoticons, when no letter or digit follows; their brackets become -lrb-/-rrb-.
SMILEY = r"[<>]?[:;=][-o*']?[()DPdpO\\{@|\[\]](?![A-Za-z0-9])"
# Three to five periods, or three with spaces between, are one "..." token.
ELLIPSIS = r"\.{3,5}|\.(?:[ \u00a0]\.){2,4}"
TOKEN = re.compile(rf"""
    (?i:-[lr][rcs]b-)                         # bracket tokens already escaped in the text
  | &lt; | &gt;                              # "<" and ">" as entities
  | {HTML_TAG}                                # simple HTML tags: <b>, </b>, <br/>
  | (?:https?|ftp)://[^\s()<>"]*[^\s()<>".,;:!?']   # URLs, without a final period or bracket
  | [^\W_](?:[\w.+-]*[^\W_])?@[^\W_]+(?:[.-][^\W_]+)*   # e-mail addresses
  | \#[^\W\d_]+ | @[^\W\d_]\w*              # hashtags (letters only) and handles
  | {SMILEY}                                  # emoticons
  | {ELLIPSIS} | --+ | [?!]+                  # ellipsis, dashes (three or four hyphens are "--"), repeated ?/!
  | {CONTRACTION}                             # contractions, attached or written apart
  | {APOSTROPHE_WORD}                         # rock 'n' roll, rock 'n roll (but 'No is a quote and a word)
  | (?i:'t)(?=(?i:is|was))                    # 'tis and 'twas: 't and the verb
  | (?i:y')(?={LETTER})                       # y'all
  | [0-9]+\ [0-9]+/[0-9]+                     # a mixed number, one token: 2 1/2 (joined by a no-break space)
  | [A-Za-z0-9][A-Za-z0-9.,]*(?:-[A-Za-z0-9]+)+\.?   # hyphenated, numbers included: 2.5-inch
  | [0-9]*(?:[:,.][0-9]+)+                    # numbers and times: 1,000  3.5  12:30  .5
  | [-+](?:[0-9]+(?:[:,.][0-9]+)*|(?:[:,.][0-9]+)+)   # signed numbers: -5, -1,000
  | [A-Z]+&[A-Z]+                             # AT&T
  | [^\W_]+(?=(?i:n't)(?![A-Za-z]))           # the word before n't
  | {ELIDED_START}{WORD}\.?                  # o'clock, O'Neil
  | [lLdDjJ]'{NOT_A_CONTRACTION}              # l', d' before a word too short for the rule above
  | {WORD}\.?                                 # words, hyphenated and dotted words, a final period
  | [^\s\ufffd]                               # any other single character (U+FFFD is dropped)
""", re.VERBOSE)
SMILEY_TOKEN, ELLIPSIS_TOKEN = re.compile(SMILEY), re.compile(ELLIPSIS)
# Most captions are ASCII words and spaces, perhaps with one final period: the lexer splits them on the spaces,
# so they skip the token loop (only a final word with its period needs the lexer's rules).
PLAIN_LINE = re.compile(r"[A-Za-z0-9 ]*(?:[A-Za-z0-9]\. *)?")
# The rest of a line after a word with a period through which the lexer's look at what follows (NEXT_WORD,
# SENTENCE_END, BEFORE_NUMBER) reaches the next line: nothing but spaces, or spaces and one more word.
REACHES_NEXT_LINE = re.compile(r"\s*|\s+\S+")


def word_with_period(word: str, following: str) -> tuple[str, bool]:
    """The token CoreNLP's lexer makes of a word written with a final period, given the text that follows it, and
    whether it gives the period back to be read again (as a "." token, or the start of a number: "v1.2")."""
    lowered, stem = word.lower(), word[:-1].lower()
    capitalized = word[0].isupper()
    if following[:1] in (",", ";", ":"):  # the lexer keeps the period of any word before these
        return lowered, False
    if ACRONYM.fullmatch(lowered):
        starter = NEXT_WORD.match(following)
        if starter and (re.fullmatch(HTML_TAG, starter.group(1)) or starter.group(1)[0].isupper()
                        and starter.group(1).lower() in SENTENCE_STARTERS):
            return (stem if len(word) == 2 else lowered), True
        return lowered, False
    if stem in SENTENCE_FINAL_ABBREVIATIONS or (capitalized and stem in CAPITALIZED_SENTENCE_FINAL):
        return lowered, bool(SENTENCE_END.match(following))
    if (stem in ABBREVIATIONS or (capitalized and stem in CAPITALIZED_ABBREVIATIONS)
            or (stem in NUMBER_ABBREVIATIONS and BEFORE_NUMBER.match(following))):
        return lowered, False
    return stem, True


def ptb_tokens(sentence: str, following: str = "") -> list[str]:
    """CoreNLP-3.4.1-style lowercased PTB tokens of one line (punctuation not yet removed).

    ``following`` is the tokenizer's input after the line, from its line break on (empty: the input ends here). The
    lexer looks across the line break: "Wii U." stays "u." at the end of the input but is "u" and "." before a line
    that starts with "A " or "The ", as most captions do.
    """
    return line_tokens(sentence, following)[0]


def line_tokens(sentence: str, following: str) -> tuple[list[str], bool]:
    """:func:`ptb_tokens`, and whether they may change with ``following`` (:func:`reads_next_line`)."""
    if PLAIN_LINE.fullmatch(sentence):
        return plain_line_tokens(sentence, following)
    for entity, char in ENTITIES.items():
        sentence = sentence.replace(entity, char)
    sentence = SEPARATORS.sub(" ", sentence.translate(CORENLP_CHARACTERS))
    tokens: list[str] = []
    reads_following = False
    position = 0
    while match := TOKEN.search(sentence, position):
        token, position = match.group().lower().replace(" ", "\u00a0"), match.end()
        if token.isalnum():  # most tokens: a plain word, which none of the rules below changes
            tokens += SPLIT_WORDS.get(token, (token,))
        elif token in BRACKETS:
            tokens.append(BRACKETS[token])
        elif SMILEY_TOKEN.fullmatch(match.group()):
            tokens.append(token.replace("(", "-lrb-").replace(")", "-rrb-"))
        elif ELLIPSIS_TOKEN.fullmatch(token):
            tokens.append("...")
        elif token in ("---", "----"):
            tokens.append("--")
        elif token in QUOTES:
            # An opening quote follows a space (or the line start) and touches the next word.
            start, end = match.span()
            opening = ((start == 0 or sentence[start - 1].isspace()) and end < len(sentence)
                       and not sentence[end].isspace())
            tokens.append(QUOTES[token][0 if opening else 1])
        elif token in ANGLE_ENTITIES:
            tokens.append(ANGLE_ENTITIES[token])
        elif token.endswith(".") and len(token) > 1 and token[0].isalnum():
            reads_following = reads_following or reads_next_line(match.group(), sentence[position:])
            token, gives_back_period = word_with_period(match.group(), sentence[position:] + following)
            tokens += SPLIT_WORDS.get(token, (token,))
            position -= gives_back_period
        else:
            tokens += SPLIT_WORDS.get(token, (token,))
    return tokens, reads_following


def reads_next_line(word: str, rest: str) -> bool:
    """Whether the token :func:`word_with_period` makes of ``word`` may change with the lines after its own, ``rest``
    being the rest of its line. Only two of its looks ahead decide a token that COCO keeps (the others add or leave a
    "." token, which it drops): a single letter's look for a sentence start ("U." or "u") and a number abbreviation's
    look for a number ("no." or "no"); they reach the next line only through spaces and at most one more word.

    >>> reads_next_line("U.", " A"), reads_next_line("U.", " A dog"), reads_next_line("dog.", ""), reads_next_line("No.", " ")
    (True, False, False, True)
    """
    lowered = word.lower()
    decides_by_next_line = (len(word) == 2 and bool(ACRONYM.fullmatch(lowered))) or lowered[:-1] in NUMBER_ABBREVIATIONS
    return decides_by_next_line and REACHES_NEXT_LINE.fullmatch(rest) is not None


def plain_line_tokens(line: str, following: str) -> tuple[list[str], bool]:
    """:func:`line_tokens` of a line of ASCII words and spaces, perhaps with a period right after the last word."""
    stripped = line.rstrip(" ")
    if not stripped.endswith("."):
        return split_words(stripped.lower().split()), False
    words = stripped[:-1].lower().split()
    # The last word with its period, in its own case (lowercasing ASCII keeps every position).
    word, rest = stripped[-1 - len(words[-1]):], line[len(stripped):]
    words[-1], gives_back_period = word_with_period(word, rest + following)
    return split_words(words) + (["."] if gives_back_period else []), reads_next_line(word, rest)


def split_words(tokens: list[str]) -> list[str]:
    """The tokens with "cannot", "gonna", ... split in two, as the lexer splits them."""
    if SPLIT_WORDS.keys().isdisjoint(tokens):
        return tokens
    return [part for token in tokens for part in SPLIT_WORDS.get(token, (token,))]


def coco_tokenize(sentence: str, following: str = "") -> str:
    """One caption as pycocoevalcap's PTBTokenizer returns it: lowercased PTB tokens joined by spaces,
    punctuation removed. ``following``: the tokenizer's input after the caption, as in :func:`ptb_tokens`.

    >>> coco_tokenize("A man (in a red shirt) isn't riding the dog's bike.")
    "a man -lrb- in a red shirt -rrb- is n't riding the dog 's bike"
    """
    return " ".join([t for t in ptb_tokens(one_line(sentence), following) if t not in COCO_PUNCTUATION])


def one_line(sentence: str) -> str:
    """The caption as one line of the tokenizer's input: every line break Java knows (U+2028, \\r, ...) a space."""
    return " ".join(sentence.splitlines())


def corenlp_jar() -> Path:
    """The CoreNLP 3.4.1 jar: ``$CAPEVAL_CORENLP_JAR`` or the copy inside pycocoevalcap."""
    if os.environ.get("CAPEVAL_CORENLP_JAR"):
        return Path(os.environ["CAPEVAL_CORENLP_JAR"])
    try:
        import pycocoevalcap
    except ImportError as error:
        raise RuntimeError("the Java PTB tokenizer needs pycocoevalcap (pip install capeval[meteor]) "
                           "or $CAPEVAL_CORENLP_JAR") from error
    return Path(list(pycocoevalcap.__path__)[0]) / "tokenizer" / "stanford-corenlp-3.4.1.jar"


def java_tokenize(sentences: Sequence[str]) -> list[str]:
    """pycocoevalcap's exact output, from one run of the CoreNLP jar (needs ``java`` on PATH)."""
    if not sentences:
        return []
    if shutil.which("java") is None:
        raise RuntimeError("the Java PTB tokenizer needs a Java runtime (java on PATH); use backend='python'")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "captions.txt"
        path.write_text("\n".join(map(one_line, sentences)), encoding="utf-8")
        command = ["java", "-cp", str(corenlp_jar()), "edu.stanford.nlp.process.PTBTokenizer",
                   "-preserveLines", "-lowerCase", str(path)]
        lines = subprocess.run(command, capture_output=True, check=True).stdout.decode("utf-8").split("\n")
    return [" ".join(t for t in line.rstrip().split(" ") if t not in COCO_PUNCTUATION) for line in lines[:len(sentences)]]


def ptb_tokenize(sentences: list[str], backend: str = "python") -> list[str]:
    """COCO-toolkit tokenization of many captions, as the jar tokenizes them one per line of one input (a caption
    can depend on the next one: see :func:`ptb_tokens`); ``backend`` is ``"python"`` or ``"java"``. An input
    tokenized before is read from :func:`~capeval.text.call_cache.kept_text_work`.

    >>> ptb_tokenize(["A Nintendo Wii U.", "A TV."]), ptb_tokenize(["A Nintendo Wii U.", "Two TVs."])
    (['a nintendo wii u', 'a tv'], ['a nintendo wii u.', 'two tvs'])
    """
    if backend not in ("python", "java"):
        raise ValueError(f"backend must be 'python' or 'java', got {backend!r}")
    lines = tuple(sentences)
    known = call_table(("ptb", backend))  # the same input in one call (e.g. the references of each metric)
    if lines not in known:
        tokenize = python_tokenize if backend == "python" else java_tokenize
        known[lines] = kept(("ptb", backend, lines), lambda: tuple(tokenize(lines)))
    return list(known[lines])


#: Kept in place of a line's tokens where they depend on the next lines: they are kept with those lines.
DEPENDS_ON_NEXT_LINES = "\n"


def python_tokenize(sentences: tuple[str, ...]) -> list[str]:
    """:func:`ptb_tokenize` in pure Python (``backend="python"``) without the inputs kept whole: each line's tokens
    come from the lines tokenized before (``kept_text_work().lines``: by the line, and where its tokens depend on the
    next lines (:func:`reads_next_line`) by the line and those lines) or are computed (:func:`tokenize_lines`)."""
    lines = input_lines(sentences)
    work = kept_text_work()
    known = work.lines
    tokenized = list(map(known.get, lines))
    for row in [row for row, text in enumerate(tokenized) if text is DEPENDS_ON_NEXT_LINES]:
        tokenized[row] = known.get((lines[row], following_lines(lines, row)))
    missing = [row for row, text in enumerate(tokenized) if text is None]
    computed, depending = tokenize_lines(lines, missing, work.chunks)
    new: dict = {}
    for row, text in zip(missing, computed):
        tokenized[row] = new[lines[row]] = text
    for row in depending:
        new[lines[row]] = DEPENDS_ON_NEXT_LINES
        new[lines[row], following_lines(lines, row)] = tokenized[row]
    known.add(new)
    return tokenized  # type: ignore[return-value]


def input_lines(sentences: tuple[str, ...]) -> list[str]:
    """The captions as the lines of the tokenizer's input (:func:`one_line`): the few with a line break found by
    splitting them all, joined, at their breaks.

    >>> input_lines(("a dog", "a\\r\\ncat\\n", "two\\u2028cats"))
    ['a dog', 'a cat', 'two cats']
    """
    lines = list(sentences)
    joined = SENTENCE_BREAK.join(lines)
    if joined.count(SENTENCE_BREAK) != len(lines) - 1:  # a caption holds the separator: look at each
        return [one_line(line) for line in lines]
    row = 0
    for part in joined.splitlines(keepends=True):
        row += part.count(SENTENCE_BREAK)
        if part.splitlines()[0] != part:  # the part ends at a line break, in caption `row`
            lines[row] = one_line(lines[row])
    return lines


def rows_with_others(strings: list[str], kept: dict[int, int | None]) -> list[int]:
    """The positions of the strings that hold a character not deleted by the translation table ``kept``,
    found in one translation of the strings joined by line breaks (``kept`` must delete no line break).

    >>> rows_with_others(["a, b", "c", "d;"], str.maketrans("", "", "abcd "))
    [0, 2]
    """
    return [row for row, rest in enumerate("\n".join(strings).translate(kept).split("\n")) if rest]


def following_lines(lines: list[str], row: int) -> str:
    """What follows line ``row`` as far as the lexer looks (:func:`ptb_tokens`' ``following``): the next line and
    the line break after it."""
    return "".join(["\n" + line for line in lines[row + 1:row + 3]])


def tokenize_lines(lines: list[str], rows: list[int], chunks: StringTable) -> tuple[list[str], list[int]]:
    """The COCO tokens of the lines ``rows`` of ``lines``, each joined by spaces, and those of ``rows`` whose tokens
    depend on the next lines: the lines :func:`chunked_pieces` accepts are tokenized all at once
    (:func:`chunked_tokenize`), the others one by one (:func:`line_tokens`)."""
    pieces = chunked_pieces([lines[row] for row in rows])
    tokenized = chunked_tokenize([piece for piece in pieces if piece is not None], chunks)
    tokenized.reverse()
    texts, depending = [], []
    for row, piece in zip(rows, pieces):
        if piece is not None:
            texts.append(tokenized.pop())
            continue
        tokens, depends = line_tokens(lines[row], following_lines(lines, row))
        texts.append(" ".join([t for t in tokens if t not in COCO_PUNCTUATION]))
        if depends:
            depending.append(row)
    return texts, depending


# Most captions are printable ASCII without "&" (entities) or "/" (fractions, slashed words, URLs), and without a
# period but perhaps a final one after a word or alone. In such a line no rule of the lexer joins or looks across
# the spaces between chunks (no "2 1/2", no ". . .", no look after a period; a quote's side is dropped), so its
# tokens are those of its space-separated chunks, each distinct chunk tokenized once; a final period is dropped as
# COCO drops it, unless the word before it is one whose period the lexer may keep (a single letter, an abbreviation).
PERIOD_WORDS = (SENTENCE_FINAL_ABBREVIATIONS | ABBREVIATIONS | CAPITALIZED_SENTENCE_FINAL | CAPITALIZED_ABBREVIATIONS
                | NUMBER_ABBREVIATIONS)
# Translations that delete all but what marks a chunk that needs the lexer (punctuation), and a line that cannot be
# chunked (a character not printable ASCII, "&", "/").
ALPHANUMERIC = str.maketrans("", "", string.ascii_letters + string.digits + " ")
CHUNKABLE = str.maketrans("", "", "".join(c for c in map(chr, range(0x20, 0x7f)) if c not in "&/"))
SENTENCE_BREAK = "\x00"
SPLIT_WORD = re.compile(r"(?<![^ \n])(?:cannot|gonna|gotta|wanna)(?![^ \n])")
# The commonest chunks with punctuation: a word of letters and digits, or such words joined by hyphens, perhaps
# followed by one of , ; : ! ? ("dog,", "t-shirt"). The lexer reads the word as one token and the mark as another,
# which COCO drops (no rule before the word's or the hyphenated word's reads on through one of these marks).
WORD_AND_MARK = re.compile(r"([A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)[,;:!?]?")


def chunked_pieces(lines: list[str]) -> list[str | None]:
    """Of each line, the part whose chunks give its tokens (:func:`chunked_tokenize`): the line without its final
    period; None where the lexer's rules may reach across chunks.

    >>> chunked_pieces(["Two dogs, one cat.", "A dog .", "Wii U.", "a 2 1/2 mile run", "Mt. Fuji"])
    ['Two dogs, one cat', 'A dog ', None, None, None]
    """
    pieces = [line if "." not in line else without_final_period(line) for line in lines]
    for row in rows_with_others(lines, CHUNKABLE):
        pieces[row] = None
    return pieces


def without_final_period(line: str) -> str | None:
    """``line`` without the period that ends it (and any spaces after), or None where another period or the word
    before it (a single letter, an abbreviation, not a word of letters and digits) may keep a period in the tokens."""
    stripped = line.rstrip(" ")
    if line.count(".") > 1 or stripped[-1] != ".":
        return None
    word = stripped[:-1].rpartition(" ")[2]
    if word and not (word.isalnum() and len(word) > 1 and word.lower() not in PERIOD_WORDS):
        return None
    return stripped[:-1]


def chunked_tokenize(pieces: list[str], chunks: StringTable) -> list[str]:
    """COCO tokenization of :func:`chunked_pieces` lines, all at once: a line of letters, digits and spaces is its
    words (lowercased; "cannot", "gonna", ... split in two), any other line the tokens of its chunks, each distinct
    chunk tokenized by the lexer's rules once and remembered in ``chunks``.

    >>> chunked_tokenize(["Two dogs, one cat", "It CANNOT  be (yes) "], StringTable(10_000))
    ['two dogs one cat', 'it can not be -lrb- yes -rrb-']
    """
    if not pieces:
        return []
    joined = "\n".join(pieces)
    text = joined.lower()
    if any(word in text for word in SPLIT_WORDS):
        text = SPLIT_WORD.sub(lambda word: " ".join(SPLIT_WORDS[word[0]]), text)
    lines = list(map(str.strip, text.split("\n")))
    for row in compress(count(), map(operator.contains, lines, repeat("  "))):
        lines[row] = " ".join(lines[row].split())
    new: dict[str, str] = {}
    for row in rows_with_others(pieces, ALPHANUMERIC):
        tokens = []
        for chunk in pieces[row].split():
            word = chunk if chunk.isalnum() else word_before_mark(chunk)
            if word is not None:  # most chunks of such a line: a word, its token its own lowercased
                lowered = word.lower()
                tokens.append(" ".join(SPLIT_WORDS[lowered]) if lowered in SPLIT_WORDS else lowered)
                continue
            coco = chunks.get(chunk, new.get(chunk))
            if coco is None:
                coco = new[chunk] = " ".join([t for t in ptb_tokens(chunk) if t not in COCO_PUNCTUATION])
            if coco:
                tokens.append(coco)
        lines[row] = " ".join(tokens)
    chunks.add(new)
    return lines


def word_before_mark(chunk: str) -> str | None:
    """The word of a chunk :data:`WORD_AND_MARK` matches, else None.

    >>> word_before_mark("T-shirt,"), word_before_mark("dog"), word_before_mark("dog,,"), word_before_mark("(dog")
    ('T-shirt', 'dog', None, None)
    """
    match = WORD_AND_MARK.fullmatch(chunk)
    return match[1] if match else None


TOKENIZERS = ("ptb", "ptb-java", "none")


def check_tokenizer(tokenizer: str) -> str:
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    return tokenizer


def tokenize_corpus(predictions: list[str], references: list[list[str]], tokenizer: str = "ptb") -> tuple[list[str], list[list[str]]]:
    """Candidates and references as the COCO toolkit scores them: like pycocoevalcap, the candidates and the
    references are tokenized as two inputs, one caption a line in the order given (a caption can depend on the
    next one, see :func:`ptb_tokens`).

    ``tokenizer``: ``"ptb"`` (pure Python, default), ``"ptb-java"`` (the CoreNLP jar) or ``"none"``
    (the text is used as given: already tokenized, space-separated).

    >>> tokenize_corpus(["A dog."], [["The dog runs.", "A dog!"]])
    (['a dog'], [['the dog runs', 'a dog']])

    Within :func:`~capeval.text.call_cache.shared_text_work` the same inputs give the same lists (the scorers of a
    call share them and change none).
    """
    if check_tokenizer(tokenizer) == "none":
        return list(predictions), [list(refs) for refs in references]
    backend = "java" if tokenizer == "ptb-java" else "python"
    flat = list(chain.from_iterable(references))
    done = call_table(("ptb-corpus", backend))
    key = (tuple(predictions), tuple(flat), tuple(map(len, references)))
    if key not in done:
        tokenized_references = iter(ptb_tokenize(flat, backend=backend))
        done[key] = (ptb_tokenize(list(predictions), backend=backend),
                     [list(islice(tokenized_references, len(refs))) for refs in references])
    return done[key]
