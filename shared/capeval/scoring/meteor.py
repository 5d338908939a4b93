"""METEOR 1.5 (Denkowski & Lavie, 2014) in pure Python, equal to the jar the COCO caption toolkit runs.

pycocoevalcap scores METEOR with ``java -jar meteor-1.5.jar - - -stdio -l en -norm``: English, the default
("ranking") task, text normalized and lowercased. This module computes the same statistics and scores without Java:

- **normalization** (``-norm``, :func:`normalize`): the jar's Moses-style tokenizer with its own additions (quotes
  and dashes unified, dashes between words split, dots dropped from "U.S."-like words, English nonbreaking
  prefixes), then lowercasing;
- **matching**, in four stages, each adding candidate matches between the words of the candidate (line 1) and of
  a reference (line 2): exact (equal words), stem (different words with equal Snowball English stems,
  :func:`english_stem`), synonym (different words sharing a WordNet synset, directly or through WordNet's
  morphology, :class:`SynonymDictionary`) and paraphrase (a phrase of one line has a phrase of the other among its
  paraphrases in the jar's table, both ways, :class:`ParaphraseTable`). Words are compared by their Java hash
  codes, as the jar compares them;
- **alignment** (:func:`best_alignment`): a match that is the only one at its place is fixed; the rest is resolved
  by the jar's beam search (40 partial alignments ranked by matched words, exact matches counting 1 and the others
  1/2 rounded down per match, then fewer chunks, then a shorter distance), with its order of candidates, its
  tie-breaking and its quirks: a path's distance grows with each alternative tried from it;
- **score** (:func:`score_from_statistics`): precision and recall with function words weighing 1 - δ and the
  others δ, matches weighing 1, 0.6, 0.8 and 0.6 by stage, their α-weighted harmonic mean, times 1 minus the
  fragmentation penalty γ · (chunks / mean matched words)^β; a candidate takes its first best reference (a
  reference whose score cannot reach the best one found, :func:`score_bound`, is not aligned);
- **corpus score** (:func:`aggregate`): the same formula on the statistics summed over the candidates, where a
  candidate that equals its reference adds no chunk, as the jar's ``EVAL`` line computes it.

The function words, the nonbreaking prefixes and the synonym data are read from the jar, the paraphrase table from
the file beside it (``data/paraphrase-en.gz``), at first use (:func:`load_resources`); the paraphrase table is kept
in a compact numpy form in capeval's cache directory, keyed by the jar's digest and checked at every load (built once
per machine by :func:`build_paraphrase_table`, in numpy, with a progress bar).

>>> corpus, scores, statistics = meteor(["a dog runs on the grass"], [["a dog running on grass", "the dog runs"]])
>>> scores, statistics[0][:4]
([0.4398732861414338], (6.0, 5.0, 3.0, 2.0))
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import threading
import time
import warnings
import zipfile
import zlib
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..progress import progress
from ..settings import SettingError, cache_dir
from ..text.call_cache import collection_paused

#: The English "ranking" task's parameters: α (precision against recall), β and γ (shape and weight of the
#: fragmentation penalty) and δ (content against function words).
ALPHA, BETA, GAMMA, DELTA = 0.85, 0.20, 0.60, 0.75
#: The matching stages in the order they run, and their weights in the score.
EXACT, STEM, SYNONYM, PARAPHRASE = range(4)
MODULE_WEIGHTS = (1.0, 0.6, 0.8, 0.6)
#: Partial alignments the search keeps at each word of the reference.
BEAM_SIZE = 40
#: A candidate's statistics (the jar's ``SCORE`` answer): lengths (candidate, reference), function words (same),
#: per stage the matched content and function words of each side, then chunks and matched words of each side.
STATISTICS = 23
CHUNKS = 20

# --- Java's string primitives --------------------------------------------------------------------------------

_JAVA_WHITESPACE = re.compile("[ \t\n\r\f]+")
# What Python's str.split splits at in ASCII text and Java's tokenizer does not.
_PYTHON_ONLY_WHITESPACE = re.compile("[\x0b\x1c-\x1f]")
_JAVA_TRIMMED = "".join(map(chr, range(33)))


def java_tokens(text: str) -> list[str]:
    """``text`` split as ``java.util.StringTokenizer`` splits it: on space, tab, newline, carriage return, form feed.

    >>> java_tokens(" a\\tdog\\u00a0runs ")
    ['a', 'dog\\xa0runs']
    """
    if text.isascii() and not _PYTHON_ONLY_WHITESPACE.search(text):
        return text.split()
    return [token for token in _JAVA_WHITESPACE.split(text) if token]


#: The capitals that Python lower-cases and Java 17 does not: the case pairs Unicode 14 added (Java 17 follows Unicode
#: 13), U+2C2F, U+A7C0, U+A7D0, U+A7D6, U+A7D8 and the 35 Vithkuqi capitals. Found by printing Java 17's
#: ``String.toLowerCase`` of every code point against ``str.lower``: Python 3.10 (Unicode 13) differs nowhere, Python
#: 3.11, 3.12 and 3.13 (Unicode 14, 15, 15.1) at these 40 code points (tests/metrics/meteor/test_meteor_parts.py
#: compares every code point with the Java on PATH).
JAVA_UNCASED = "\u2c2f\ua7c0\ua7d0\ua7d6\ua7d8" + "".join(
    chr(code) for code in range(0x10570, 0x10596) if code not in (0x1057B, 0x1058B, 0x10593))
_JAVA_UNCASED_SPLIT = re.compile(f"([{JAVA_UNCASED}])")


def java_lower(text: str) -> str:
    """``text`` lowercased as Java 17's ``String.toLowerCase`` lowercases it: as ``str.lower`` but for
    :data:`JAVA_UNCASED`, characters Java does not know, which stay as they are and neither are cased nor let a
    final sigma see past them.

    >>> java_lower("A \u2c2f\u2c5f DOG"), java_lower("\u0391\u03a3\u2c2f\u0391")
    ('a \u2c2f\u2c5f dog', '\u03b1\u03c2\u2c2f\u03b1')
    """
    if text.isascii() or not _JAVA_UNCASED_SPLIT.search(text):
        return text.lower()
    return "".join(piece if k % 2 else piece.lower() for k, piece in enumerate(_JAVA_UNCASED_SPLIT.split(text)))


def java_lines(text: str) -> list[str]:
    """``text`` split into lines as ``BufferedReader.readLine`` reads them (``\\n``, ``\\r`` or ``\\r\\n`` ends one).

    >>> java_lines("a\\r\\nb\\rc\\n")
    ['a', 'b', 'c']
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def as_utf16(text: str) -> str:
    """``text`` with each character beyond the Basic Multilingual Plane written as its two UTF-16 surrogates, so that
    lengths and positions count as Java counts them.

    >>> len(as_utf16("a\U0001f600"))
    3
    """
    if max(text, default="") <= "\uffff":
        return text
    return "".join(char if char <= "\uffff" else chr(0xD7C0 + (ord(char) >> 10)) + chr(0xDC00 + (ord(char) & 0x3FF))
                   for char in text)


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (Java's ``String.length``)."""
    return len(as_utf16(text))


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text``, as an unsigned 32-bit number: the jar tells words apart by it.

    >>> java_hash("dog"), java_hash("Aa") == java_hash("BB")
    (99644, True)
    """
    value = 0
    for char in as_utf16(text):
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value


# --- normalization (-norm) -----------------------------------------------------------------------------------

# Letters as the normalizer lists them: Latin, Latin-1 and some Latin Extended-A, Cyrillic and phonetic ranges.
_ALPHA = "A-Za-z\u0160\u017d\u0161\u017e\u0178\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017e\u0400-\u04ff\u0500-\u0527\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f"
_ALNUM = "0-9" + _ALPHA
_SEPARATE_OTHER = re.compile(f"([^{_ALNUM} \t\n\x0b\f\r.'`,\\-\u2018\u2019])")
_MULTI_DOT = re.compile(r"\.(\.+)")
_MULTI_DOT_ESCAPED = re.compile(r"DOTMULTI\.([^.])")
_COMMAS = (re.compile("([^0-9]),([^0-9])"), re.compile("([0-9]),([^0-9])"), re.compile("([^0-9]),([0-9])"))
_SINGLE_QUOTES = re.compile("[`\u2018\u2019]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d]|''")
_DASH_BETWEEN_WORDS = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")
# English splits contractions to the right ("do n't" stays for the tokenizer; "john's" becomes "john 's").
_APOSTROPHES = ((re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
                (re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])"), r"\1 ' \2"),
                (re.compile(f"([{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
                (re.compile(f"([{_ALPHA}])'([{_ALPHA}])"), r"\1 '\2"),
                (re.compile("([0-9])'(s)"), r"\1 '\2"))
_LETTER = re.compile(f"[{_ALPHA}]")
_PLAIN = re.compile("[a-z0-9 ]*")
_WHITE = re.compile("[ \u2000-\u200a\u202f\u205f\u3000\u00a0]+")
#: Nonbreaking prefix kinds: always, or only before a number.
ANY_PREFIX, NUMERIC_PREFIX = 1, 2


def normalize(line: str, prefixes: dict[str, int]) -> str:
    """``line`` as the jar's ``-norm`` leaves it: punctuation split off (Moses' rules with the jar's additions), then
    lowercased. ``prefixes``: the nonbreaking prefixes (:func:`read_prefixes`), words whose final dot stays.

    >>> normalize("The U.S.-based \u201cbest\u201d  cafe--ever...", {"Mr": ANY_PREFIX})
    'the us based " best " cafe ever ...'
    >>> normalize("Mr. Smith paid 1,000.50 dollars.", {"Mr": ANY_PREFIX})
    'mr. smith paid 1,000.50 dollars .'
    """
    if _PLAIN.fullmatch(line):  # lowercase words, digits and spaces: nothing to split or drop
        return " ".join(line.split())
    line = _SEPARATE_OTHER.sub(r" \1 ", f" {line} ")
    line = _MULTI_DOT.sub(r" DOTMULTI\1", line)
    while "DOTMULTI." in line:
        line = _MULTI_DOT_ESCAPED.sub(r"DOTDOTMULTI \1", line).replace("DOTMULTI.", "DOTDOTMULTI")
    for pattern in _COMMAS:
        line = pattern.sub(r"\1 , \2", line)
    line = _DOUBLE_QUOTES.sub(' " ', _SINGLE_QUOTES.sub("'", line))
    line = line.replace("\u2013", "-").replace("--", "-")
    line = _DASH_BETWEEN_WORDS.sub(r"\1 \2", line)
    for pattern, replacement in _APOSTROPHES:
        line = pattern.sub(replacement, line)
    words = java_tokens(line)
    rebuilt = []
    for i, word in enumerate(words):
        if len(word) > 1 and word.endswith("."):
            prefix, following = word[:-1], words[i + 1] if i + 1 < len(words) else ""
            kind = prefixes.get(prefix)
            if "." in prefix and _LETTER.search(prefix):
                word = word.replace(".", "")  # "U.S." is "US"
            elif not (kind == ANY_PREFIX or following[:1].isascii() and following[:1].islower()
                      or kind == NUMERIC_PREFIX and following[:1].isdigit() and following[:1].isascii()):
                word = prefix + " ."
        rebuilt.append(word + " ")
    line = "".join(rebuilt)
    while "DOTDOTMULTI" in line:
        line = line.replace("DOTDOTMULTI", "DOTMULTI.")
    line = line.replace("DOTMULTI", ".")
    return java_lower(_WHITE.sub(" ", line).strip(_JAVA_TRIMMED))


def read_prefixes(text: str) -> dict[str, int]:
    """The nonbreaking prefixes of a Moses prefix file: a word per line, ``#NUMERIC_ONLY#`` after it for those
    that keep their dot only before a number, ``#`` comments."""
    prefixes = {}
    for line in java_lines(text):
        tokens = java_tokens(line)
        if tokens and not tokens[0].startswith("#"):
            prefixes[tokens[0]] = NUMERIC_PREFIX if tokens[1:2] == ["#NUMERIC_ONLY#"] else ANY_PREFIX
    return prefixes


# --- the Snowball English stemmer, as the jar bundles it -------------------------------------------------------

_VOWELS = frozenset("aeiouy")
_NOT_SHORT_AFTER = frozenset("aeiouywxY")  # a short syllable ends in a consonant other than these
_VALID_LI = frozenset("cdeghkmnrt")
_INVARIANT_OR_IRREGULAR = {
    "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl", "gently": "gentl",
    "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
    **{word: word for word in ("sky", "news", "howe", "atlas", "cosmos", "bias", "andes")}}
_STOP_AFTER_STEP_1A = frozenset(("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed"))
_R1_EXCEPTIONS = ("gener", "commun", "arsen")
_STEP_1B = ("eedly", "ingly", "edly", "eed", "ing", "ed")
_STEP_2 = (("ization", "ize"), ("ational", "ate"), ("fulness", "ful"), ("ousness", "ous"), ("iveness", "ive"),
           ("tional", "tion"), ("biliti", "ble"), ("lessli", "less"), ("entli", "ent"), ("ation", "ate"),
           ("alism", "al"), ("aliti", "al"), ("ousli", "ous"), ("iviti", "ive"), ("fulli", "ful"), ("enci", "ence"),
           ("anci", "ance"), ("abli", "able"), ("izer", "ize"), ("ator", "ate"), ("alli", "al"), ("bli", "ble"),
           ("ogi", "og"), ("li", ""))
_STEP_3 = (("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
           ("ative", ""), ("ical", "ic"), ("ness", ""), ("ful", ""))
_STEP_4 = ("ement", "ment", "able", "ible", "ance", "ence", "ate", "iti", "ion", "ism", "ive", "ize", "ous", "ant",
           "ent", "al", "er", "ic")


def _longest_suffix(word: str, suffixes) -> str | None:
    """The first of ``suffixes`` (listed longest first) that ``word`` ends with."""
    for suffix in suffixes:
        if word.endswith(suffix):
            return suffix
    return None


def _ends_short_syllable(word: str) -> bool:
    """Whether ``word`` ends in a short syllable: consonant (not w, x, Y), vowel, consonant; or, as the whole
    word, vowel then consonant."""
    if len(word) >= 3 and word[-1] not in _NOT_SHORT_AFTER and word[-2] in _VOWELS and word[-3] not in _VOWELS:
        return True
    return len(word) == 2 and word[0] in _VOWELS and word[1] not in _VOWELS


def _regions(word: str) -> tuple[int, int]:
    """Porter's R1 and R2: where each starts (the end of the word when empty)."""
    def after_vowel_consonant(start: int) -> int:
        for i in range(start + 1, len(word)):
            if word[i] not in _VOWELS and word[i - 1] in _VOWELS:
                return i + 1
        return len(word)
    r1 = next((len(prefix) for prefix in _R1_EXCEPTIONS if word.startswith(prefix)), None) or after_vowel_consonant(0)
    return r1, after_vowel_consonant(r1)


def english_stem(word: str) -> str:
    """The Snowball English ("Porter2") stem of ``word``, as the Snowball Java stemmer bundled in the METEOR 1.5 jar
    computes it (lengths counted in UTF-16 units, as Java counts them).

    >>> [english_stem(w) for w in ("running", "dogs", "generously", "skies", "hoped", "sky", "cats'", "ies")]
    ['run', 'dog', 'generous', 'sky', 'hope', 'sky', 'cat', 'ie']
    """
    wide = max(word, default="") > "\uffff"
    if wide:
        word = as_utf16(word)
    stem = _stem(word)
    return stem.encode("utf-16-le", "surrogatepass").decode("utf-16-le") if wide else stem


def _stem(word: str) -> str:
    if word in _INVARIANT_OR_IRREGULAR:
        return _INVARIANT_OR_IRREGULAR[word]
    if len(word) < 3:
        return word
    # Prelude: drop a leading apostrophe; mark y as a consonant (Y) where it starts the word or follows a vowel.
    if word[0] == "'":
        word = word[1:]
    letters = list(word)
    if letters[:1] == ["y"]:
        letters[0] = "Y"
    for i in range(len(letters) - 1):
        if letters[i] in _VOWELS and letters[i + 1] == "y":
            letters[i + 1] = "Y"
    marked = "".join(letters)
    stem = _steps(marked, *_regions(marked))
    return stem.replace("Y", "y") if marked != word else stem


def _steps(word: str, r1: int, r2: int) -> str:
    # Step 1a: possessives, then plurals.
    apostrophe = _longest_suffix(word, ("'s'", "'s", "'"))
    if apostrophe:
        word = word[:-len(apostrophe)]
    suffix = _longest_suffix(word, ("sses", "ied", "ies", "ss", "us", "s"))
    if suffix == "sses":
        word = word[:-2]
    elif suffix in ("ied", "ies"):
        word = word[:-3] + ("i" if len(word) > 4 else "ie")
    elif suffix == "s" and any(char in _VOWELS for char in word[:-2]):
        word = word[:-1]
    if word in _STOP_AFTER_STEP_1A:
        return word
    # Step 1b
    suffix = _longest_suffix(word, _STEP_1B)
    if suffix in ("eedly", "eed"):
        if len(word) - len(suffix) >= r1:
            word = word[:-len(suffix)] + "ee"
    elif suffix and any(char in _VOWELS for char in word[:-len(suffix)]):
        word = word[:-len(suffix)]
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif word.endswith(("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")):
            word = word[:-1]
        elif len(word) == r1 and _ends_short_syllable(word):
            word += "e"
    # Step 1c: a final y or Y after a consonant that is not the first letter becomes i.
    if len(word) > 2 and word[-1] in "yY" and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    # Step 2
    for suffix, replacement in _STEP_2:
        if word.endswith(suffix):
            start = len(word) - len(suffix)
            if start >= r1:
                if suffix == "ogi":
                    if word[start - 1] == "l":
                        word = word[:start] + replacement
                elif suffix == "li":
                    if word[start - 1] in _VALID_LI:  # R1 starts at the third letter at the earliest
                        word = word[:start]
                else:
                    word = word[:start] + replacement
            break
    # Step 3
    for suffix, replacement in _STEP_3:
        if word.endswith(suffix):
            start = len(word) - len(suffix)
            if start >= r1 and (suffix != "ative" or start >= r2):
                word = word[:start] + replacement
            break
    # Step 4
    suffix = _longest_suffix(word, _STEP_4)
    if suffix:
        start = len(word) - len(suffix)
        if start >= r2 and (suffix != "ion" or word[start - 1] in "st"):
            word = word[:start]
    # Step 5
    if word.endswith("e"):
        start = len(word) - 1
        if start >= r2 or start >= r1 and not _ends_short_syllable(word[:start]):
            word = word[:start]
    elif word.endswith("l"):
        start = len(word) - 1
        if start >= r2 and word[start - 1] == "l":
            word = word[:start]
    return word


# --- synonyms ------------------------------------------------------------------------------------------------

#: WordNet's detachment rules, in WordNet's order: (suffix, ending) for nouns, verbs, then adjectives.
_MORPHOLOGY = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
               ("ies", "y"), ("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
               ("ing", ""), ("er", ""), ("est", ""), ("er", "e"), ("est", "e"))


class SynonymDictionary:
    """WordNet 3 synsets as the jar ships them: each word's synset numbers, the irregular forms of base words
    (``english.exceptions``), and WordNet's suffix rules for the rest.

    >>> synonyms = SynonymDictionary("car\\n1 2\\nauto\\n2\\nmouse\\n3\\n", "mouse\\nmice\\n")
    >>> sorted(synonyms.synsets("cars")), sorted(synonyms.synsets("mice")), synonyms.synsets("zebra")
    ([1, 2], [3], frozenset())
    """

    def __init__(self, synsets: str, exceptions: str):
        lines = java_lines(synsets)
        # Numbers are parsed when a word is first asked for.
        self._raw = dict(zip(lines[0::2], lines[1::2]))
        self._bases: dict[str, list[str]] = {}
        lines = java_lines(exceptions)
        for base, forms in zip(lines[0::2], lines[1::2]):
            for form in java_tokens(forms):
                self._bases.setdefault(form, []).append(base)

    def _own(self, word: str) -> frozenset[int]:
        raw = self._raw.get(word)
        return frozenset(int(number) for number in java_tokens(raw)) if raw is not None else frozenset()

    def _base(self, word: str) -> str | None:
        """The base form WordNet's suffix rules give ``word``: the first rule that leads to a known word."""
        for suffix, ending in _MORPHOLOGY:
            if word.endswith(suffix):
                base = word[:len(word) - len(suffix)] + ending
                if base in self._raw:
                    return base
        return None

    def synsets(self, word: str) -> frozenset[int]:
        """The synsets of ``word`` and of its base forms: its irregular forms' bases if it has some, else the base
        WordNet's suffix rules give (none for words ending in "ss" or of at most two letters)."""
        found = self._own(word)
        bases = self._bases.get(word)
        if bases is not None:
            return found.union(*(self._own(base) for base in bases))
        if word.endswith("ss") or utf16_length(word) <= 2:
            return found
        base = self._base(word)
        return found if base is None else found | self._own(base)


# --- paraphrases ---------------------------------------------------------------------------------------------

#: The version of the cached form of the paraphrase table; a new one is built when it changes.
TABLE_FORMAT = 2
_HASH_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)
#: Compressed bytes of ``paraphrase-en.gz`` read per step of the build (~18 MB of text, ~2 million words).
_BLOCK_BYTES = 4 << 20
#: Per byte value, whether it is part of a word: all but "\n" and the others ``StringTokenizer`` splits at.
_IN_WORD = np.array([byte not in b" \t\n\f" for byte in range(256)])
#: Masks of the lowest 0 to 8 bytes of a 64-bit number.
_LOW_BYTES = np.array([(1 << 8 * n) - 1 for n in range(9)], np.uint64)
#: A ``.building-*`` folder older than this is left by a killed build: the next look at the cache removes it.
STALE_BUILD_SECONDS = 600


class MeteorCacheError(SettingError):
    """METEOR's paraphrase table cannot be built in capeval's cache (the message names the folder and the fix)."""


class MeteorTableWarning(UserWarning):
    """A cached paraphrase table failed its check: it is built anew."""


class ParaphraseTable:
    """The jar's English paraphrase table (``paraphrase-en.gz``: records of a probability, a phrase and one of its
    paraphrases, 5.3 million of them) as numpy arrays: every distinct phrase (words as ids into ``vocabulary``,
    padded) keyed by a 64-bit hash of its words, and for each phrase the paraphrases listed for it, in the file's
    order (``paraphrases[starts[p]:starts[p + 1]]``).

    Phrase ids are the ranks of the sorted hashes; :meth:`find` looks phrases up with one ``searchsorted`` and
    confirms every hit by its words, so a hash collision can never give a wrong phrase.
    """

    FILES = ("hashes", "words", "starts", "paraphrases")

    def __init__(self, folder: Path):
        meta = json.loads((folder / "table.json").read_text("utf-8"))
        self.multiplier = np.uint64(meta["multiplier"])
        self.vocabulary = {word: i for i, word in enumerate((folder / "vocabulary.txt").read_text("utf-8").split("\n"))}
        # Mapped, not read: a process touches only the pages its sentences need.
        self.hashes, self.words, self.starts, self.paraphrases = (np.load(folder / f"{name}.npy", mmap_mode="r")
                                                                  for name in self.FILES)
        self.longest = self.words.shape[1]
        self.padding = np.iinfo(self.words.dtype).max

    @staticmethod
    def build(source: Path, folder: Path, show: bool | None = None) -> None:
        """Read ``paraphrase-en.gz`` (as the jar reads it: UTF-8, lines as ``readLine`` splits them, words as
        ``StringTokenizer`` splits them) and write the table's arrays into ``folder`` (made if missing), with
        ``table.json`` last: their sizes and digests (:func:`table_problem` checks them). A progress bar shows once
        the build has taken a second (``show``: capeval's setting where None)."""
        steps = -(-source.stat().st_size // _BLOCK_BYTES) + 1
        for _ in progress(_build_steps(source, folder), total=steps, show=show,
                          desc="METEOR: building its paraphrase table (once per machine)"):
            pass

    def word_ids(self, words: Sequence[str]) -> np.ndarray:
        """The table's ids of ``words`` (-1 for a word no phrase has)."""
        get = self.vocabulary.get
        return np.fromiter((get(word, -1) for word in words), np.int64, len(words))

    def find(self, sentences: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every occurrence of a phrase of the table in ``sentences`` (lists of words): the sentence, the position
        and length of the occurrence and the phrase's id, in that order."""
        lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
        # All sentences in one array, each followed by -1 (a newline is never a word) so no phrase spans two.
        flat = self.word_ids([word for words in sentences for word in (*words, "\n")])
        sentence = np.repeat(np.arange(len(sentences)), lengths + 1)
        position = np.arange(len(flat)) - np.repeat(np.cumsum(lengths + 1) - (lengths + 1), lengths + 1)
        found = []
        hashes = np.zeros(len(flat), np.uint64)
        known = np.ones(len(flat), bool)
        for length in range(1, self.longest + 1):
            span = len(flat) - length + 1
            if span <= 0:
                break
            last = flat[length - 1:]
            hashes = hashes[:span] * self.multiplier + (last + 1).astype(np.uint64)
            known = known[:span] & (last >= 0)
            starts = np.flatnonzero(known)
            if not len(starts):
                break
            # Sentences share many n-grams: look each distinct hash up once, in order.
            distinct, inverse = np.unique(hashes[starts], return_inverse=True)
            rank = np.minimum(np.searchsorted(self.hashes, distinct), len(self.hashes) - 1)
            hit = (self.hashes[rank] == distinct)[inverse]
            rank = rank[inverse]
            starts, rank = starts[hit], rank[hit]
            words = np.asarray(self.words[rank])
            same = np.all(words[:, length:] == self.padding, axis=1)
            for column in range(length):
                same &= words[:, column] == flat[starts + column]
            starts, rank = starts[same], rank[same]
            found.append((sentence[starts], position[starts], np.full(len(starts), length), rank))
        if not found:
            return (np.zeros(0, np.int64),) * 4
        return tuple(np.concatenate(column) for column in zip(*found))  # type: ignore[return-value]


def _build_steps(source: Path, folder: Path) -> Iterator[None]:
    """:meth:`ParaphraseTable.build`, one step per block of the file read, then one for the rest."""
    words = TableWords()
    vocabulary = words.numbers
    blocks = []
    for text in _record_blocks(source):
        blocks.append(phrase_rows(text, words))
        yield
    width = max((block.shape[1] for block in blocks), default=0)
    dtype = np.uint16 if len(vocabulary) < 0xFFFF else np.uint32
    pad = np.iinfo(dtype).max
    padded = np.full((sum(len(block) for block in blocks), width), pad, dtype)
    row = 0
    for block in blocks:
        padded[row:row + len(block), :block.shape[1]] = np.where(block < 0, pad, block)
        row += len(block)
    del blocks
    # Each row's bytes as one value, to compare phrases whole.
    rows = padded.view(np.dtype((np.void, padded.dtype.itemsize * width))).ravel()
    for multiplier in _HASH_MULTIPLIERS:
        distinct, first, inverse = np.unique(phrase_hashes(padded, np.uint64(multiplier)), return_index=True,
                                             return_inverse=True)
        # Equal hashes must be equal phrases; else try another multiplier.
        if np.array_equal(rows[first[inverse]], rows):
            break
    else:
        raise RuntimeError("the paraphrase table's phrases collide under every hash multiplier")
    phrase, paraphrase = inverse[0::2], inverse[1::2]
    order = np.argsort(phrase, kind="stable")  # each phrase's paraphrases in the file's order
    starts = np.searchsorted(phrase[order], np.arange(len(distinct) + 1)).astype(np.int32)
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in zip(ParaphraseTable.FILES, (distinct, padded[first], starts, paraphrase[order].astype(np.int32))):
        np.save(folder / f"{name}.npy", array)
    (folder / "vocabulary.txt").write_text("\n".join(vocabulary), "utf-8")
    meta = {"multiplier": int(multiplier), "records": len(phrase), "phrases": len(distinct), "words": len(vocabulary),
            "files": {name: _file_facts(folder / name) for name in TABLE_FILES}}
    (folder / "table.json").write_text(json.dumps({**meta, "check": _digest(json.dumps(meta, sort_keys=True).encode())}))
    yield


def _record_blocks(source: Path) -> Iterator[bytes]:
    """The text of ``paraphrase-en.gz`` (one or more gzip members) in blocks of whole records (three lines each, every
    line ending in "\\n", a "\\r\\n" or "\\r" made "\\n" as ``readLine`` reads them); an incomplete last record is left
    out, as the jar leaves it out."""
    pending = b""
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
    with open(source, "rb") as file:
        while raw := file.read(_BLOCK_BYTES):
            text = inflate.decompress(raw)
            while inflate.eof and inflate.unused_data:  # the next gzip member
                rest, inflate = inflate.unused_data, zlib.decompressobj(zlib.MAX_WBITS | 16)
                text += inflate.decompress(rest)
            text, pending = _whole_records(pending + text)
            yield text
    if not inflate.eof:
        raise EOFError(f"{source} is cut short: reinstall pycocoevalcap (pip install --force-reinstall pycocoevalcap)")
    # The last line may lack its line end.
    pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if pending and not pending.endswith(b"\n"):
        pending += b"\n"
    yield _whole_records(pending)[0]


def _whole_records(text: bytes) -> tuple[bytes, bytes]:
    """``text`` split into its whole records, line ends made "\\n", and the rest (a "\\r" at the end waits for what
    follows it)."""
    held = b"\r" if text.endswith(b"\r") else b""
    text = text[:len(text) - len(held)]
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    end = len(text)
    for _ in range(text.count(b"\n") % 3 + 1):  # back to the end of the last whole record
        end = text.rfind(b"\n", 0, end)
    return text[:end + 1], text[end + 1:] + held


def phrase_rows(text: bytes, words: TableWords) -> np.ndarray:
    """The phrases of ``text`` (whole records: a probability, a phrase and a paraphrase, each line ending in "\\n")
    as rows of word ids, padded with -1: words split at spaces, tabs and form feeds as ``StringTokenizer`` splits
    them, numbered by ``words`` (:class:`TableWords`).

    >>> words = TableWords()
    >>> phrase_rows(b"0.5\\na dog\\nthe  dog\\n0.1\\n\\t\\ndog\\n", words).tolist(), words.numbers
    ([[0, 1], [2, 1], [-1, -1], [1, -1]], {'a': 0, 'dog': 1, 'the': 2})
    """
    data = np.frombuffer(text, np.uint8)
    newline = data == ord("\n")
    inside = _IN_WORD[data]
    edges = np.flatnonzero(np.diff(inside.view(np.int8), prepend=np.int8(0), append=np.int8(0)))
    starts, ends = edges[0::2], edges[1::2]
    line = np.cumsum(newline, dtype=np.int32)[starts]  # the newlines before each word
    phrase_word = line % 3 != 0  # the first line of a record is its probability, which the jar ignores
    starts, ends, line = starts[phrase_word], ends[phrase_word], line[phrase_word]
    phrase = line // 3 * 2 + line % 3 - 1
    lengths = np.bincount(phrase, minlength=text.count(b"\n") // 3 * 2)
    rows = np.full((len(lengths), int(lengths.max(initial=0))), -1, np.int32)
    rows[phrase, _ranks(lengths)] = words.ids(text, starts, ends - starts)
    return rows


class TableWords:
    """The words of the paraphrase table met so far, numbered as they first come (:attr:`numbers`, the table's
    vocabulary), and what finds them again in numpy: each word's length and bytes (8 at a time) and, in a slot chosen
    by a 64-bit hash of its bytes, its number.

    >>> words = TableWords()
    >>> words.ids(b"a dog a cat", np.array([0, 2, 6, 8]), np.array([1, 3, 1, 3])).tolist()
    [0, 1, 0, 2]
    >>> words.ids(b"cat dogs a", np.array([0, 4, 9]), np.array([3, 4, 1])).tolist(), words.numbers
    ([2, 3, 0], {'a': 0, 'dog': 1, 'cat': 2, 'dogs': 3})
    """

    SLOT_BITS = 22

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}
        self._slots = np.full(1 << self.SLOT_BITS, -1, np.int32)
        self._lengths = np.zeros(0, np.int64)
        #: Per 8 bytes of a word (the first 8, the next 8, ...), those of each numbered word (0 past its end).
        self._bytes: list[np.ndarray] = []

    def ids(self, text: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The numbers of the words ``text[start:start + length]`` (a new word decoded from UTF-8, U+FFFD for a bad
        byte, and numbered): a word is found by its hash's slot and confirmed by its bytes; the others (new words,
        words whose slot another word holds) are grouped by their bytes."""
        pieces = _word_bytes(text, starts, lengths)
        found = self._slots[self._slot(lengths, pieces)].astype(np.int64)
        known = found >= 0
        if len(self._lengths):
            candidate = np.where(known, found, 0)
            known &= self._lengths[candidate] == lengths
            for k, (where, piece) in enumerate(pieces):
                if k >= len(self._bytes):  # no word numbered so far is that long
                    known[where] = False
                else:
                    known[where] &= self._bytes[k][candidate[where]] == piece
        new = np.flatnonzero(~known)
        if len(new):
            found[new] = self._number(text, starts[new], lengths[new])
        return found

    def _slot(self, lengths: np.ndarray, pieces: list[tuple[slice | np.ndarray, np.ndarray]]) -> np.ndarray:
        """Each word's slot: the top bits of its hash times an odd number (so that every bit of the hash counts)."""
        multiplier = np.uint64(_HASH_MULTIPLIERS[0])
        return (_bytes_hashes(lengths, pieces, multiplier) * multiplier) >> np.uint64(64 - self.SLOT_BITS)

    def _number(self, text: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The numbers of the words not found by their slot (in the text's order): equal words grouped by hash and
        confirmed byte by byte, each group's word numbered (if new) in the order the groups first come."""
        pieces = _word_bytes(text, starts, lengths)
        for multiplier in map(np.uint64, _HASH_MULTIPLIERS):
            _, first, inverse = np.unique(_bytes_hashes(lengths, pieces, multiplier), return_index=True,
                                          return_inverse=True)
            representative = first[inverse]
            same = lengths[representative] == lengths
            for where, piece in pieces:
                other = np.zeros(len(lengths), np.uint64)
                other[where] = piece
                same[where] &= other[representative[where]] == piece
            if same.all():
                break
        else:
            raise RuntimeError("the paraphrase table's words collide under every hash multiplier")
        numbers = np.empty(len(first), np.int64)
        coming = np.argsort(first)
        for group, start, length in zip(coming.tolist(), starts[first[coming]].tolist(), lengths[first[coming]].tolist()):
            numbers[group] = self.numbers.setdefault(text[start:start + length].decode("utf-8", "replace"), len(self.numbers))
        added = np.flatnonzero(numbers >= len(self._lengths))
        added = added[np.argsort(numbers[added])]
        self._lengths = np.concatenate([self._lengths, lengths[first[added]]])
        while len(self._bytes) < len(pieces):
            self._bytes.append(np.zeros(len(self._lengths) - len(added), np.uint64))
        for k, known in enumerate(self._bytes):
            values = np.zeros(len(lengths), np.uint64)
            if k < len(pieces):
                values[pieces[k][0]] = pieces[k][1]
            self._bytes[k] = np.concatenate([known, values[first[added]]])
        slots = self._slot(lengths, pieces)[first[added]]
        free = self._slots[slots] < 0
        self._slots[slots[free]] = numbers[added][free]  # a slot taken stays with its word: the other takes this path
        return numbers[inverse]


def _word_bytes(text: bytes, starts: np.ndarray, lengths: np.ndarray) -> list[tuple[slice | np.ndarray, np.ndarray]]:
    """The bytes of the words ``text[start:start + length]``, 8 at a time as little-endian numbers: per 8 bytes
    (the first 8, the next 8, ...), the words that have them (all: a slice, then the indices of those longer than
    8, ...) and their values.

    >>> [(where, [int(v).to_bytes(8, "little").rstrip(bytes(1)) for v in values])
    ...  for where, values in _word_bytes(b"a elephantine", np.array([0, 2]), np.array([1, 11]))]
    [(slice(None, None, None), [b'a', b'elephant']), (array([1]), [b'ine'])]
    """
    # Every 8 bytes from each offset (the text padded so that the last word has its 8).
    eights = np.ndarray((len(text),), "<u8", text + bytes(8), strides=(1,))
    pieces: list[tuple[slice | np.ndarray, np.ndarray]] = [(slice(None), eights[starts] & _LOW_BYTES[np.minimum(lengths, 8)])]
    for k in range(1, -(-int(lengths.max(initial=0)) // 8)):
        where = np.flatnonzero(lengths > 8 * k)
        pieces.append((where, eights[starts[where] + 8 * k] & _LOW_BYTES[np.minimum(lengths[where] - 8 * k, 8)]))
    return pieces


def _bytes_hashes(lengths: np.ndarray, pieces: list[tuple[slice | np.ndarray, np.ndarray]], multiplier: np.uint64) -> np.ndarray:
    """64-bit hashes of words given by their lengths and bytes (:func:`_word_bytes`)."""
    hashes = lengths.astype(np.uint64)
    for where, piece in pieces:
        hashes[where] = hashes[where] * multiplier + piece
    return hashes


def phrase_hashes(rows: np.ndarray, multiplier: np.uint64) -> np.ndarray:
    """64-bit hashes of phrases given as rows of word ids padded with the largest value of their type: h = h · m +
    id + 1 over the words, as :meth:`ParaphraseTable.find` hashes the words of a sentence.

    >>> phrase_hashes(np.array([[4, 65535], [4, 6]], np.uint16), np.uint64(10)).tolist()
    [5, 57]
    """
    padding = np.iinfo(rows.dtype).max
    hashes = np.zeros(len(rows), np.uint64)
    for column in rows.T:
        hashes = np.where(column != padding, hashes * multiplier + column.astype(np.uint64) + np.uint64(1), hashes)
    return hashes


#: The files of a built table that ``table.json`` lists with their sizes and digests.
TABLE_FILES = (*(f"{name}.npy" for name in ParaphraseTable.FILES), "vocabulary.txt")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_facts(path: Path) -> dict:
    """The size and SHA-256 digest of a file (read in blocks: ~0.05 s for the table's 86 MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def table_problem(folder: Path) -> str | None:
    """What is wrong with the paraphrase table in ``folder`` (None: nothing): a file missing, unreadable or not
    as built (its size and digest differ from those ``table.json`` lists), or ``table.json`` itself changed (its
    own digest).

    >>> table_problem(Path("/nonexistent"))
    'table.json is missing'
    """
    try:
        meta = json.loads((folder / "table.json").read_text("utf-8"))
        check = meta.pop("check")
        listed = meta["files"]
    except FileNotFoundError:
        return "table.json is missing"
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
        return f"table.json is unreadable ({type(error).__name__}: {error})"
    if check != _digest(json.dumps(meta, sort_keys=True).encode()) or sorted(listed) != sorted(TABLE_FILES):
        return "table.json was changed"
    for name in TABLE_FILES:
        path = folder / name
        try:
            if path.stat().st_size != listed[name]["bytes"]:
                return f"{name} has {path.stat().st_size:,} bytes, not {listed[name]['bytes']:,}"
            if _file_facts(path) != listed[name]:
                return f"{name} was changed"
        except OSError as error:
            return f"{name} cannot be read ({error.strerror or error})"
    return None


def paraphrase_table_folder(jar: str | os.PathLike | None = None) -> Path:
    """Where :func:`build_paraphrase_table` keeps the table of METEOR's ``jar`` (default: pycocoevalcap's): named by
    the jar's digest, the source table's size and the table format, so another jar or format never reads it."""
    jar = Path(jar) if jar is not None else pycocoevalcap_jar()
    source = jar.parent / "data" / "paraphrase-en.gz"
    digest = _digest(jar.read_bytes())[:16]
    return cache_dir() / "meteor" / f"paraphrase-en-{digest}-{source.stat().st_size}-v{TABLE_FORMAT}"


def build_paraphrase_table(jar: str | os.PathLike | None = None, show: bool | None = None) -> Path:
    """Build the paraphrase table of METEOR's ``jar`` (default: pycocoevalcap's) in capeval's cache if it is absent,
    damaged or of an older format, and return its folder: ``<capeval cache>/meteor/paraphrase-en-<jar digest>-...``.

    The first use of METEOR on a machine calls it (~5 s of CPU, a progress bar while it runs); call it beforehand to
    prepare a machine (``CAPEVAL_CACHE`` names the cache, which may be shared: the table is made readable as the
    umask allows). A table that fails its check (:func:`table_problem`) is built anew, one line
    (:class:`MeteorTableWarning`) saying so; a cache where it cannot be built raises :class:`MeteorCacheError`.
    Builds killed midway leave ``.building-*`` folders that the next call removes once
    :data:`STALE_BUILD_SECONDS` old.
    """
    jar = Path(jar) if jar is not None else pycocoevalcap_jar()
    source = jar.parent / "data" / "paraphrase-en.gz"
    folder = paraphrase_table_folder(jar)
    _remove_stale_builds(folder.parent)
    problem = table_problem(folder)
    if problem is None:
        return folder
    if folder.exists():
        # Where capeval notices it says nothing to the user: a warning with no source line prints as one line.
        warnings.warn_explicit(f"METEOR's paraphrase table in {folder} is damaged ({problem}): building it anew",
                               MeteorTableWarning, "capeval", 0)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        # Not tempfile.mkdtemp: its 0700 folder would hide a shared cache from other users; mkdir follows the umask.
        building = folder.parent / f".building-{os.getpid()}-{os.urandom(4).hex()}"
        building.mkdir()
    except OSError as error:
        raise MeteorCacheError(f"METEOR's paraphrase table cannot be built in {folder.parent} "
                               f"({error.strerror or error}): make it writable or point CAPEVAL_CACHE at a writable folder") from None
    try:
        ParaphraseTable.build(source, building, show)
        _install(building, folder)
    except OSError as error:
        raise MeteorCacheError(f"METEOR's paraphrase table could not be written to {folder.parent} "
                               f"({error.strerror or error}): free space there or point CAPEVAL_CACHE at another folder") from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder


def _install(building: Path, folder: Path) -> None:
    """Move the table built in ``building`` to ``folder``; one that is there already is kept if sound (another process
    built it meanwhile), else moved aside and removed (a process reading it keeps its open files)."""
    if folder.exists():
        if table_problem(folder) is None:
            return
        aside = folder.parent / f".damaged-{os.getpid()}-{os.urandom(4).hex()}"
        os.replace(folder, aside)
        shutil.rmtree(aside, ignore_errors=True)
    try:
        os.replace(building, folder)
    except OSError:
        if table_problem(folder) is not None:  # else another process placed a sound table first
            raise


def _remove_stale_builds(root: Path) -> None:
    """Remove the ``.building-*`` and ``.damaged-*`` folders in ``root`` older than :data:`STALE_BUILD_SECONDS`."""
    try:
        leftovers = [path for path in root.iterdir() if path.name.startswith((".building-", ".damaged-"))]
    except OSError:  # no cache yet, or one that cannot be listed
        return
    for path in leftovers:
        try:
            if time.time() - path.stat().st_mtime > STALE_BUILD_SECONDS:
                shutil.rmtree(path)
        except OSError:  # removed meanwhile, or not ours to remove
            pass


# --- the jar's resources -------------------------------------------------------------------------------------

class MeteorResources:
    """What the jar reads at start-up (function words, nonbreaking prefixes, synonyms, paraphrases), with what it
    computes per word kept here once computed: hash code, stem, synsets, whether a function word, and the words
    seen so far that are its synonyms."""

    def __init__(self, function_words: frozenset[str], prefixes: dict[str, int], synonyms: SynonymDictionary,
                 paraphrases: ParaphraseTable):
        self.function_words, self.prefixes, self.synonyms, self.paraphrases = function_words, prefixes, synonyms, paraphrases
        #: What :meth:`word` computed, by word.
        self.words: dict[str, tuple[int, int, frozenset[int], bool, set[str]]] = {}
        self._words_of_synset: dict[int, list[str]] = {}
        self._adding = threading.Lock()

    def word(self, word: str) -> tuple[int, int, frozenset[int], bool, set[str]]:
        """``word``'s hash code, its stem's hash code, its synsets, whether it is a function word, and its synonym
        partners: the words asked for so far (this one's set grows with later words) that share a synset with it
        and differ from it by hash code, the jar's synonym matches.

        >>> resources = MeteorResources(frozenset(), {}, SynonymDictionary("car\\n1\\nauto\\n1 2\\n", ""), None)
        >>> car, auto = resources.word("car"), resources.word("auto")
        >>> sorted(car[4]), sorted(auto[4]), sorted(resources.word("cars")[4]), sorted(car[4])
        (['auto'], ['car'], ['auto', 'car'], ['auto', 'cars'])
        """
        info = self.words.get(word)
        if info is None:
            with self._adding:  # two new words added at once could miss each other
                if word in self.words:
                    return self.words[word]
                key, synsets, partners = java_hash(word), self.synonyms.synsets(word), set()
                for synset in synsets:
                    sharing = self._words_of_synset.setdefault(synset, [])
                    for other in sharing:
                        other_key, _, _, _, other_partners = self.words[other]
                        if other_key != key:
                            partners.add(other)
                            other_partners.add(word)
                    sharing.append(word)
                info = (key, java_hash(english_stem(word)), synsets, java_lower(word) in self.function_words, partners)
                self.words[word] = info
        return info


def pycocoevalcap_jar() -> Path:
    """The METEOR 1.5 jar that pycocoevalcap installs (``ImportError`` without pycocoevalcap)."""
    try:
        import pycocoevalcap.meteor
    except ImportError as error:
        raise ImportError("METEOR reads its word lists, synonyms and paraphrases from the METEOR 1.5 jar that "
                          "pycocoevalcap ships: pip install capeval[meteor]") from error
    return Path(list(pycocoevalcap.meteor.__path__)[0]) / "meteor-1.5.jar"


_LOADED: dict[Path, MeteorResources] = {}
_LOADING = threading.Lock()


def load_resources(jar: str | os.PathLike | None = None) -> MeteorResources:
    """The resources of the METEOR 1.5 jar at ``jar`` (default: pycocoevalcap's), read once per process. The
    paraphrase table (``data/paraphrase-en.gz`` beside the jar) is read from its cached numpy form in
    ``<capeval cache>/meteor/``, built on first use."""
    path = Path(jar) if jar is not None else pycocoevalcap_jar()
    with _LOADING:
        if path not in _LOADED:
            _LOADED[path] = _read_resources(path)
        return _LOADED[path]


def _read_resources(jar: Path) -> MeteorResources:
    with zipfile.ZipFile(jar) as archive:
        def text(name: str) -> str:
            return archive.read(name).decode("utf-8", "replace")
        function_words = frozenset(java_lines(text("function/english.words")))
        prefixes = read_prefixes(text("nonbreaking/english.prefixes"))
        synonyms = SynonymDictionary(text("synonym/english.synsets"), text("synonym/english.exceptions"))
    return MeteorResources(function_words, prefixes, synonyms, ParaphraseTable(build_paraphrase_table(jar)))


# --- alignment -----------------------------------------------------------------------------------------------

class Sentence:
    """One normalized sentence as the aligner sees it: its words and, per word, what the stages compare; as the
    candidate of a pair, also where each word and stem is (:meth:`candidate_index`, made on first use)."""

    __slots__ = ("words", "keys", "stems", "function", "partners", "_candidate_index")

    def __init__(self, text: str, resources: MeteorResources):
        self.words = java_tokens(text)
        known, word = resources.words.get, resources.word
        infos = [known(w) or word(w) for w in self.words]
        columns = tuple(zip(*infos)) if infos else ((),) * 5
        self.keys: tuple[int, ...] = columns[0]
        self.stems: tuple[int, ...] = columns[1]
        self.function: tuple[bool, ...] = columns[3]
        #: Per word, its synonyms among the words seen (:meth:`MeteorResources.word`).
        self.partners: tuple[set[str], ...] = columns[4]
        self._candidate_index: tuple[dict[int, list[int]], dict[int, list[int]], frozenset[str]] | None = None

    def candidate_index(self) -> tuple[dict[int, list[int]], dict[int, list[int]], frozenset[str]]:
        """The positions of each word (by hash code) and of each stem, and the sentence's words."""
        if self._candidate_index is None:
            positions: dict[int, list[int]] = {}
            stem_positions: dict[int, list[int]] = {}
            for i, (key, stem) in enumerate(zip(self.keys, self.stems)):
                positions.setdefault(key, []).append(i)
                stem_positions.setdefault(stem, []).append(i)
            self._candidate_index = positions, stem_positions, frozenset(self.words)
        return self._candidate_index


#: A match: where it starts in the reference and how many words it covers there, the same in the candidate, and the
#: stage that found it.
Match = tuple  # (start, length, match_start, match_length, stage)


def stage_matches(candidate: Sentence, reference: Sentence, paraphrases: Sequence[Match] = ()) -> tuple[list[list[Match]], list[int], list[int]]:
    """Every match the four stages find, listed at the reference word each starts at, in the jar's order; and how
    many matches cover each candidate and each reference word. Identical sentences get exact matches only.
    ``paraphrases``: the paraphrase matches of the pair (:func:`paraphrase_matches`)."""
    keys1, words1 = candidate.keys, candidate.words
    positions, stem_positions, vocabulary = candidate.candidate_index()
    identical = keys1 == reference.keys
    matches: list[list[Match]] = []
    cover1, cover2 = [0] * len(keys1), []
    # The stages run one after the other over the whole reference, but each lists its matches at their reference
    # word, so taking the reference's words one by one, stage after stage, lists them in the same order.
    for j, (key, stem, partners) in enumerate(zip(reference.keys, reference.stems, reference.partners)):
        exact = positions.get(key)
        if exact:
            found = [(j, 1, i, 1, EXACT) for i in exact]
            for i in exact:
                cover1[i] += 1
        else:
            found = []
        if not identical:
            stems = stem_positions.get(stem)
            if stems and stems != exact:  # the same positions: the same words, no stem match
                for i in stems:
                    if keys1[i] != key:
                        found.append((j, 1, i, 1, STEM))
                        cover1[i] += 1
            if partners and not partners.isdisjoint(vocabulary):
                for i, word in enumerate(words1):
                    if word in partners:
                        found.append((j, 1, i, 1, SYNONYM))
                        cover1[i] += 1
        matches.append(found)
        cover2.append(len(found))
    if identical:
        return matches, cover1, cover2
    for match in paraphrases:
        start, length, match_start, match_length, _ = match
        matches[start].append(match)
        for j in range(start, start + length):
            cover2[j] += 1
        for i in range(match_start, match_start + match_length):
            cover1[i] += 1
    return matches, cover1, cover2


# A path of the search ranks by one integer: fewer weighted matched words first, then fewer chunks, then a shorter
# distance (each field far wider than it can grow for sentences of the lengths METEOR takes).
_CHUNK, _WEIGHT = 1 << 40, 1 << 80
_RANK = itemgetter(0)


def _rank_weight(length: int, match_length: int, stage: int) -> int:
    """What choosing a match does to a path's rank: the words it covers on both sides count, halved and rounded
    down (per side) unless exact, since the jar adds weighted counts to integers."""
    return -_WEIGHT * (length + match_length if stage == EXACT else length // 2 + match_length // 2)


def _span(start: int, length: int) -> int:
    return ((1 << length) - 1) << start


def best_alignment(matches: list[list[Match]], cover1: list[int], cover2: list[int]) -> list[Match]:
    """The matches of the jar's best alignment: those alone at their place and covering words no other match
    covers, then the beam search over the rest, left to right along the reference."""
    fixed: list[Match] = []
    # A path's words used: the candidate's words as bits 0, 1, ..., then the reference's from bit ``shift``.
    shift = len(cover1)
    used = 0
    # The reference words the search chooses at, and those it does not: a step every path takes alike (unless
    # inside a match), where a fixed match starts (its candidate start and end) or where the word is left unmatched
    # (None); a word inside a fixed match changes nothing. No path is inside a match where a fixed one starts: nothing
    # else covers its words.
    searched: list[int] = []
    steps: list[tuple[int, tuple[int, int] | None]] = []
    for start, options in enumerate(matches):
        if not options:
            if not used >> (start + shift) & 1:
                steps.append((start, None))
            continue
        if len(options) == 1:
            match = options[0]
            _, length, match_start, match_length, _ = match
            if cover2[start] == 1 and cover1[match_start] == 1 and (length == match_length == 1 or (
                    all(cover2[j] == 1 for j in range(start, start + length))
                    and all(cover1[i] == 1 for i in range(match_start, match_start + match_length)))):
                fixed.append(match)
                used |= _span(start + shift, length) | _span(match_start, match_length)
                steps.append((start, (match_start, match_start + match_length)))
                continue
        searched.append(start)
    if not searched:
        return fixed
    # The end of the reference closes the open chunk, as an unmatched word does.
    steps.append((len(matches), None))
    # A path: [rank, end in the candidate of the open chunk's last match (-1: no open chunk), words used, matches
    # chosen (linked)]. The search keeps them ranked, best first.
    paths: list[list] = [[0, -1, used, None]]
    step = reach = 0  # the next step; where the matches searched so far end in the reference, at most
    for current in searched:
        following = step
        while steps[following][0] < current:
            following += 1
        if following > step:
            _take_steps(paths, steps, step, following, reach, shift)
        step = following
        options = matches[current]
        paths = _choose(paths, current, options, shift)
        for match in options:
            if match[0] + match[1] > reach:
                reach = match[0] + match[1]
        paths.sort(key=_RANK)
        del paths[BEAM_SIZE:]
    _take_steps(paths, steps, step, len(steps), reach, shift)
    link = min(paths, key=_RANK)[3]
    while link is not None:
        fixed.append(link[0])
        link = link[1]
    return fixed


def _take_steps(paths: list[list], steps: Sequence[tuple[int, tuple[int, int] | None]], first: int, stop: int,
                reach: int, shift: int) -> None:
    """Move ranked paths over the reference words of ``steps[first:stop]`` (see :func:`best_alignment`), keeping
    them ranked as the jar's search does: it sorts its paths again after each word. A path may be inside a match it
    chose before ``reach`` only, where each word is a step of its own. After the first word beyond, every path has
    the same open chunk (none, or the fixed match's), so the words after it change every rank alike, which changes
    no order: all they leave is their last open chunk."""
    k = first
    while k < stop and steps[k][0] < reach:
        _take_step(paths, 1 << (steps[k][0] + shift), steps[k][1])
        k += 1
    if k == stop:
        return
    _take_step(paths, 0, steps[k][1])
    fixed = steps[stop - 1][1]
    last = -1 if fixed is None else fixed[1]
    if last != paths[0][1]:
        for path in paths:
            path[1] = last


def _take_step(paths: list[list], bit: int, fixed: tuple[int, int] | None) -> None:
    """Move ranked paths over one reference word with nothing to choose (``bit``: the word's bit, 0 where no path
    can be inside a match), ranked after it. ``fixed``: the candidate start and end of the fixed match starting
    there, or None: the word is left unmatched, which ends an open chunk (paths inside a match they chose skip it).
    Ranks only order the paths, so what a fixed match adds to every rank alike (its words, its distance) is left
    out: only the chunk it may break differs from path to path."""
    changed = False
    if fixed is not None:
        match_start, end = fixed
        for path in paths:
            if path[1] != -1 and path[1] != match_start:
                path[0] += _CHUNK
                changed = True
            path[1] = end
    else:
        for path in paths:
            if path[1] != -1 and not path[2] & bit:
                path[0] += _CHUNK
                path[1] = -1
                changed = True
    if changed:
        paths.sort(key=_RANK)


def _choose(paths: list[list], current: int, options: Sequence[Match], shift: int) -> list[list]:
    """Every path extended by each match at reference word ``current`` it has room for (in the order of the matches),
    then itself leaving the word unmatched; paths inside a match they chose go on as they are."""
    choices = []
    for match in options:
        start, length, match_start, match_length, stage = match
        choices.append((match, _span(start + shift, length) | _span(match_start, match_length),
                        _rank_weight(length, match_length, stage), abs(start - match_start), match_start + match_length,
                        match_start))
    following = []
    bit = 1 << (current + shift)
    for path in paths:
        rank, last, used, chosen = path
        if used & bit:  # inside a match
            following.append(path)
            continue
        for match, span, weight, distance, end, match_start in choices:
            if used & span:
                continue
            following.append([rank + weight + _CHUNK if last != -1 and match_start != last else rank + weight, end,
                              used | span, (match, chosen)])
            # The jar adds the distance to the path the choice was made from, not to the choice.
            rank += distance
        # skip the word: an open chunk ends
        path[0] = rank + _CHUNK if last != -1 else rank
        path[1] = -1
        following.append(path)
    return following


def alignment_statistics(candidate: Sentence, reference: Sentence, alignment: Sequence[Match]) -> tuple[float, ...]:
    """The jar's statistics of an alignment (see :data:`STATISTICS`)."""
    stages = [0] * 16  # per stage: candidate content, reference content, candidate function, reference function
    function1, function2 = candidate.function, reference.function
    # A match continues the chunk of the match before it (along the reference) where it follows it on both sides.
    ends = {start + length: match_start + match_length for start, length, match_start, match_length, _ in alignment}
    chunks = len(alignment)
    for start, length, match_start, match_length, stage in alignment:
        if ends.get(start) == match_start:
            chunks -= 1
        stage *= 4
        if length == match_length == 1:
            stages[stage + 2 if function1[match_start] else stage] += 1
            stages[stage + 3 if function2[start] else stage + 1] += 1
            continue
        for i in range(match_start, match_start + match_length):
            stages[stage + 2 if function1[i] else stage] += 1
        for j in range(start, start + length):
            stages[stage + 3 if function2[j] else stage + 1] += 1
    matched1 = sum(stages[0::4]) + sum(stages[2::4])
    matched2 = sum(stages[1::4]) + sum(stages[3::4])
    return tuple(map(float, (len(candidate.words), len(reference.words), sum(function1), sum(function2),
                             *stages, chunks, matched1, matched2)))


def paraphrase_matches(table: ParaphraseTable, sentences: Sequence[Sentence], pairs: Sequence[tuple[int, int]]) -> list[list[Match]]:
    """The paraphrase matches of each (candidate, reference) pair of ``sentences`` (indices), in the jar's order:
    first reference phrases whose paraphrase is in the candidate (by reference word, phrase length, the table's
    order, candidate word), then candidate phrases whose paraphrase is in the reference (by candidate word, and so
    on). Computed for all pairs at once, in numpy."""
    found: list[list[Match]] = [[] for _ in pairs]
    sentence, position, length, phrase = table.find([s.words for s in sentences])
    if not len(phrase) or not len(pairs):
        return found
    order = np.argsort(sentence, kind="stable")
    sentence, position, length, phrase = sentence[order], position[order], length[order], phrase[order]
    size = len(table.hashes)
    # The occurrences grouped by (sentence, phrase), positions ascending within a group.
    key = sentence * size + phrase
    order = np.lexsort((position, key))
    key, group_position, group_length = key[order], position[order], length[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    group_key, group_end = key[first], np.r_[first[1:], len(key)]
    # Every (occurrence, paraphrase listed for its phrase), by sentence.
    listed = table.starts[phrase + 1] - table.starts[phrase]
    occurrence = np.repeat(np.arange(len(phrase)), listed)
    entry = table.starts[phrase][occurrence] + _ranks(listed)
    paraphrase = np.asarray(table.paraphrases[entry], np.int64)
    candidates, references = (np.array(side, np.int64) for side in zip(*pairs))
    for source, target, from_reference in ((references, candidates, True), (candidates, references, False)):
        # The rows whose paraphrase occurs in a sentence of the target side at all, by source sentence ...
        is_target = np.zeros(len(sentences), bool)
        is_target[target] = True
        in_target = np.zeros(size, bool)
        in_target[phrase[is_target[sentence]]] = True
        kept = np.flatnonzero(in_target[paraphrase])
        sentence_start = np.searchsorted(sentence[occurrence[kept]], np.arange(len(sentences) + 1))
        # ... for each pair, those of its source sentence ...
        per_pair = sentence_start[source + 1] - sentence_start[source]
        pair = np.repeat(np.arange(len(pairs)), per_pair)
        row = kept[np.repeat(sentence_start[source], per_pair) + _ranks(per_pair)]
        # ... whose paraphrase occurs in its target sentence ...
        probe = target[pair] * size + paraphrase[row]
        group = np.minimum(np.searchsorted(group_key, probe), len(group_key) - 1)
        hit = group_key[group] == probe
        pair, row, group = pair[hit], row[hit], group[hit]
        # ... at each of its positions there.
        count = group_end[group] - first[group]
        pair, row, group = (np.repeat(column, count) for column in (pair, row, group))
        at = first[group] + _ranks(count)
        source_position, source_length = position[occurrence[row]], length[occurrence[row]]
        target_position, target_length = group_position[at], group_length[at]
        ordered = np.lexsort((target_position, entry[row], source_length, source_position, pair))
        columns = (source_position, source_length, target_position, target_length) if from_reference else \
            (target_position, target_length, source_position, source_length)
        for k, start, span, match_start, match_span in zip(pair[ordered].tolist(), *(c[ordered].tolist() for c in columns)):
            found[k].append((start, span, match_start, match_span, PARAPHRASE))
    return found


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[0] - 1, 0, 1, ..., counts[1] - 1, ...: each element's rank within its group."""
    total = int(counts.sum())
    return np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)


# --- scores --------------------------------------------------------------------------------------------------

def _divide(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as Java computes it (a zero denominator gives infinity or NaN, not an error)."""
    if denominator:
        return numerator / denominator
    return math.nan if numerator == 0 or numerator != numerator else math.copysign(math.inf, numerator)


def score_from_statistics(statistics: Sequence[float]) -> float:
    """METEOR from a candidate's (or a corpus's summed) statistics, as the jar computes it (0 where undefined).

    >>> score_from_statistics([6, 5, 3, 2, 2, 2, 2, 2, 1, 1] + [0] * 10 + [2, 5, 5])
    0.4398732861414338
    """
    s = statistics
    candidate_length = DELTA * (s[0] - s[2]) + (1.0 - DELTA) * s[2]
    reference_length = DELTA * (s[1] - s[3]) + (1.0 - DELTA) * s[3]
    # Content words of each stage, then function words, added in the jar's order.
    exact, stem, synonym, paraphrase = MODULE_WEIGHTS
    function = 1.0 - DELTA
    candidate_matches = (s[4] * exact * DELTA + s[8] * stem * DELTA + s[12] * synonym * DELTA + s[16] * paraphrase * DELTA
                         + s[6] * exact * function + s[10] * stem * function + s[14] * synonym * function
                         + s[18] * paraphrase * function)
    reference_matches = (s[5] * exact * DELTA + s[9] * stem * DELTA + s[13] * synonym * DELTA + s[17] * paraphrase * DELTA
                         + s[7] * exact * function + s[11] * stem * function + s[15] * synonym * function
                         + s[19] * paraphrase * function)
    precision = _divide(candidate_matches, candidate_length)
    recall = _divide(reference_matches, reference_length)
    f_mean = _divide(1.0, _divide(1.0 - ALPHA, precision) + _divide(ALPHA, recall))
    if s[CHUNKS] == 1 and s[4] + s[6] + s[8] + s[10] + s[12] + s[14] + s[16] + s[18] == s[0] and \
            s[5] + s[7] + s[9] + s[11] + s[13] + s[15] + s[17] + s[19] == s[1]:
        fragmentation = 0.0  # the candidate is the reference
    else:
        fragmentation = _divide(s[CHUNKS], (s[21] + s[22]) / 2)
    score = f_mean * (1.0 - GAMMA * fragmentation ** BETA)
    return score if score > 0 else 0.0  # NaN and negative scores are 0


def score_bound(candidate: Sentence, reference: Sentence, cover1: list[int], cover2: list[int]) -> float:
    """An upper bound of the score of any alignment of a pair: its score if every word that a match covers
    (``cover1``, ``cover2``: per word, how many matches cover it) were matched, exactly, in one chunk. An alignment
    matches fewer words, each once, by matches that weigh at most 1, in at least one chunk: its precision, recall
    and fragmentation penalty are no better, and the score's floating-point operations keep that order.

    >>> resources = MeteorResources(frozenset({"a"}), {}, SynonymDictionary("", ""), None)
    >>> score_bound(Sentence("a dog", resources), Sentence("a big dog", resources), [1, 1], [1, 0, 1])
    0.29170666383042776
    """
    function1, function2 = candidate.function, reference.function
    covered1, covered2 = len(cover1) - cover1.count(0), len(cover2) - cover2.count(0)
    functions1, functions2 = sum(compress(function1, cover1)), sum(compress(function2, cover2))
    return score_from_statistics((len(function1), len(function2), sum(function1), sum(function2), covered1 - functions1,
                                  covered2 - functions2, functions1, functions2, *(0,) * 12, 1, covered1, covered2))


def aggregate(statistics: Iterable[Sequence[float]]) -> float:
    """The corpus METEOR of candidates' statistics: their sum (a candidate that equals its reference adds no chunk)
    scored as one, as the jar's ``EVAL`` line computes it.

    >>> aggregate([[6, 5, 3, 2, 2, 2, 2, 2, 1, 1] + [0] * 10 + [2, 5, 5], [7, 5, 3, 3, 2, 2, 3, 3] + [0] * 12 + [3, 5, 5]])
    0.4266123347277777
    """
    total = [0.0] * STATISTICS
    for row in statistics:
        perfect = (sum(row[4 + 4 * stage] + row[6 + 4 * stage] for stage in range(4)) == row[0]
                   and sum(row[5 + 4 * stage] + row[7 + 4 * stage] for stage in range(4)) == row[1] and row[CHUNKS] == 1)
        for k, value in enumerate(row):
            if k != CHUNKS or not perfect:
                total[k] += value
    return score_from_statistics(total)


def meteor(candidates: Sequence[str], references: Sequence[Sequence[str]],
           resources: MeteorResources | None = None) -> tuple[float, list[float], list[tuple[float, ...]]]:
    """METEOR 1.5 of each candidate against its references (``-l en -norm``), as pycocoevalcap's jar computes it:
    the corpus score, one score per candidate and each candidate's statistics (those of its first best reference;
    :func:`aggregate` turns any collection of them into the corpus score)."""
    if len(candidates) != len(references):
        raise ValueError(f"got {len(candidates)} candidates but {len(references)} reference lists")
    for i, refs in enumerate(references):
        if not refs:
            raise ValueError(f"references[{i}] is empty: METEOR needs a reference for every candidate")
    resources = resources or load_resources()
    # The call makes many small containers and frees none until it ends: the cyclic collector would walk them all.
    with collection_paused():
        return _meteor(candidates, references, resources)


def _meteor(candidates: Sequence[str], references: Sequence[Sequence[str]],
            resources: MeteorResources) -> tuple[float, list[float], list[tuple[float, ...]]]:
    normalized: dict[str, int] = {}
    texts: list[str] = []

    def sentence(text: str) -> int:
        index = normalized.get(text)
        if index is None:
            index = normalized[text] = len(texts)
            texts.append(normalize(text, resources.prefixes))
        return index

    candidate_rows = [sentence(text) for text in candidates]
    reference_rows = [[sentence(text) for text in refs] for refs in references]
    # Sentences equal once normalized share one Sentence.
    distinct: dict[str, int] = {}
    same = [distinct.setdefault(text, len(distinct)) for text in texts]
    sentences = [Sentence(text, resources) for text in distinct]
    pairs = list(dict.fromkeys((same[c], same[r]) for c, refs in zip(candidate_rows, reference_rows) for r in refs))
    found = dict(zip(pairs, paraphrase_matches(resources.paraphrases, sentences, pairs)))
    aligned: dict[tuple[int, int], tuple[tuple[float, ...], float]] = {}  # statistics and score, by pair
    scores, statistics = [], []
    for c, refs in zip(candidate_rows, reference_rows):
        keys = [(same[c], same[r]) for r in refs]
        # A reference is aligned unless its score's upper bound is under the best score found (references taken in
        # the order of their bounds), so that it cannot be the first best.
        staged, bounds = {}, []
        for key in keys:
            if key in aligned:
                bounds.append(aligned[key][1])
            elif len(keys) == 1:
                bounds.append(math.inf)
            else:
                if key not in staged:
                    staged[key] = stage_matches(sentences[key[0]], sentences[key[1]], found[key])
                bounds.append(score_bound(sentences[key[0]], sentences[key[1]], *staged[key][1:]))
        best = None
        for k in sorted(range(len(keys)), key=bounds.__getitem__, reverse=True):
            if best is not None and bounds[k] < best[1]:
                break
            key = keys[k]
            if key not in aligned:
                matches = staged.get(key) or stage_matches(sentences[key[0]], sentences[key[1]], found[key])
                pair_statistics = alignment_statistics(sentences[key[0]], sentences[key[1]], best_alignment(*matches))
                aligned[key] = pair_statistics, score_from_statistics(pair_statistics)
            if best is None or aligned[key][1] > best[1] or aligned[key][1] == best[1] and k < best[2]:
                best = (*aligned[key], k)
        assert best is not None  # every candidate has a reference (checked with the inputs)
        scores.append(best[1])
        statistics.append(best[0])
    return aggregate(statistics), scores, statistics
