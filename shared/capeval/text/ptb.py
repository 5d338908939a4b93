"""PTB-style tokenization as the COCO caption toolkit does it, in pure Python.

pycocoevalcap's ``PTBTokenizer`` runs Stanford CoreNLP 3.4.1's ``PTBTokenizer -preserveLines
-lowerCase`` on every caption and then drops the tokens in :data:`COCO_PUNCTUATION`. Because the
lowercasing happens first, bracket tokens come out as ``-lrb-``/``-rrb-`` and are *not* dropped
(the list holds the upper-case forms): a quirk reproduced here. :func:`ptb_tokenize` rebuilds
the tokenizer's output without Java; ``backend="java"`` runs the jar (from pycocoevalcap, or
``$CAPEVAL_CORENLP_JAR``) for exact parity on arbitrary text.

The jar's rewriting of unusual text is reproduced and tested on thousands of varied strings: curly and
angle quotes, dashes, the ellipsis, € and £, combining marks inside words, zero-width, control and format
characters (they separate tokens), characters beyond the Basic Multilingual Plane such as emoji (dropped),
simple HTML tags, URLs, e-mail addresses, hashtags and handles, mixed numbers ("2 1/2"). Known differences
remain on rarer text: a combining mark after a digit or inside a hyphenated or slashed word (the jar splits
there), a soft hyphen inside "cannot"/"gonna" (the jar keeps the word whole), "'n'" and "’n’", "'tis", a
"www." address with a path, HTML tags with attributes, and other symbols the jar drops (₹); use
``tokenizer="ptb-java"`` where such text matters.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from pathlib import Path

# pycocoevalcap's list, verbatim in meaning: these tokens are removed after tokenization.
COCO_PUNCTUATION = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                              ".", "?", "!", ",", ":", "-", "--", "...", ";"])

# Words that keep their final period in CoreNLP's lexer (the ones that occur in caption data).
ABBREVIATIONS = frozenset("""
mr mrs ms dr st jr sr prof mt ft vs etc inc co corp ltd no bros jan feb mar apr jun jul aug sep sept oct nov dec
ave blvd rd gen gov sen rep col lt sgt capt cmdr adm messrs
""".split())

QUOTES = {'"': ("``", "''"), "'": ("`", "'")}
SENTENCE_FINAL_ABBREVIATIONS = frozenset(["inc", "bros", "co", "corp", "ltd", "jr", "sr"])
BRACKETS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-", "]": "-rsb-"}
ENTITIES = {"&apos;": "'", "&quot;": '"', "&amp;": "&", "&lt;": "<", "&gt;": ">"}
SPLIT_WORDS = {"cannot": ("can", "not"), "gonna": ("gon", "na"), "gotta": ("got", "ta"), "wanna": ("wan", "na")}
ACRONYM = re.compile(r"^(?:[a-z]\.){2,}$")
# CoreNLP 3.4.1 rewrites these while tokenizing: curly and angle quotes become ASCII quotes (so they are dropped as
# punctuation, and the ’ of "don’t" is an apostrophe), dashes "--", the ellipsis "...", € and £ its $ and #; a soft
# hyphen vanishes.
CORENLP_CHARACTERS = str.maketrans({"“": '"', "”": '"', "«": '"', "»": '"', "‹": "'", "›": "'", "‘": "'", "’": "'",
                                    "—": " -- ", "–": " -- ", "―": " -- ", "…": " ... ", "€": "$", "£": "#", "\u00ad": ""})
_BMP = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
# Control and format characters (zero-width spaces and joiners, direction marks) separate tokens in CoreNLP, and
# characters beyond the Basic Multilingual Plane (emoji, math letters) are dropped: both become a space here.
SEPARATORS = re.compile("[" + "".join(re.escape(c) for c in _BMP if unicodedata.category(c) in ("Cc", "Cf")
                                      and not c.isspace() and c != "\u00ad") + "\U00010000-\U0010ffff]")
# Combining marks (a decomposed "é") stay inside their word.
WORD_CHAR = r"(?:[^\W_]|[" + "".join(re.escape(c) for c in _BMP if unicodedata.category(c).startswith("M")) + "])"
WORD = rf"{WORD_CHAR}+(?:[-./_]{WORD_CHAR}+)*"
TOKEN = re.compile(rf"""
    (?i:-[lr][rcs]b-)                         # bracket tokens already escaped in the text
  | </?[A-Za-z][A-Za-z0-9]*/?>                # simple HTML tags: <b>, </b>, <br/>
  | (?:https?|ftp)://[^\s()<>"]*[^\s()<>".,;:!?']   # URLs, without a final period or bracket
  | [^\W_](?:[\w.+-]*[^\W_])?@[^\W_]+(?:[.-][^\W_]+)*   # e-mail addresses
  | \#[^\W\d_]+ | @[^\W\d_]\w*              # hashtags (letters only) and handles
  | [:;]-?[()]                                # emoticons
  | \.\.\.+ | --+ | [?!]+                     # ellipsis, dashes, repeated ?/!
  | (?:n't|'s|'re|'ve|'ll|'d|'m)(?![^\W_])    # contractions, attached or written apart
  | [0-9]+\ [0-9]+/[0-9]+                     # a mixed number, one token: 2 1/2 (joined by a no-break space)
  | [0-9]+(?:[:,.][0-9]+)+                    # numbers and times: 1,000  3.5  12:30
  | [A-Z]+&[A-Z]+                             # AT&T
  | [^\W_]+(?=n't(?![^\W_]))                 # the word before n't
  | {WORD}(?:\.(?!\.))?                       # words, hyphenated and dotted words, a final period (not an ellipsis)
  | [^\s\ufffd]                               # any other single character (U+FFFD is dropped)
""", re.VERBOSE)


def ptb_tokens(sentence: str) -> list[str]:
    """CoreNLP-3.4.1-style lowercased PTB tokens of one line (punctuation not yet removed)."""
    for entity, char in ENTITIES.items():
        sentence = sentence.replace(entity, char)
    sentence = SEPARATORS.sub(" ", sentence.translate(CORENLP_CHARACTERS))
    tokens: list[str] = []
    for match in TOKEN.finditer(sentence):
        token = match.group().lower().replace(" ", "\u00a0")
        if token in BRACKETS:
            tokens.append(BRACKETS[token])
        elif token[0] in ":;" and len(token) > 1:
            tokens.append(token[:-1] + BRACKETS[token[-1]])
        elif token in QUOTES:
            # An opening quote follows a space (or the line start) and touches the next word.
            start, end = match.span()
            opening = ((start == 0 or sentence[start - 1].isspace()) and end < len(sentence)
                       and not sentence[end].isspace())
            tokens.append(QUOTES[token][0 if opening else 1])
        elif token.endswith(".") and len(token) > 1 and token[0].isalnum():
            stem = token[:-1]
            if stem in ABBREVIATIONS or ACRONYM.match(token):
                tokens.append(token)
                if match.end() == len(sentence.rstrip()) and (stem in SENTENCE_FINAL_ABBREVIATIONS or ACRONYM.match(token)):
                    tokens.append(".")  # CoreNLP also ends the sentence after these
            else:
                tokens += [*SPLIT_WORDS.get(stem, (stem,)), "."]
        else:
            tokens += SPLIT_WORDS.get(token, (token,))
    return tokens


def coco_tokenize(sentence: str) -> str:
    """One caption as pycocoevalcap's PTBTokenizer returns it: lowercased PTB tokens joined by spaces,
    punctuation removed.

    >>> coco_tokenize("A man (in a red shirt) isn't riding the dog's bike.")
    "a man -lrb- in a red shirt -rrb- is n't riding the dog 's bike"
    """
    return " ".join(t for t in ptb_tokens(sentence.replace("\n", " ")) if t not in COCO_PUNCTUATION)


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


def java_tokenize(sentences: list[str]) -> list[str]:
    """pycocoevalcap's exact output, from one run of the CoreNLP jar (needs ``java`` on PATH)."""
    if shutil.which("java") is None:
        raise RuntimeError("the Java PTB tokenizer needs a Java runtime (java on PATH); use backend='python'")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "captions.txt"
        # Every line break Java knows (U+2028, \\r, ...) becomes a space: one caption, one line.
        path.write_text("\n".join(" ".join(s.splitlines()) for s in sentences), encoding="utf-8")
        command = ["java", "-cp", str(corenlp_jar()), "edu.stanford.nlp.process.PTBTokenizer",
                   "-preserveLines", "-lowerCase", str(path)]
        lines = subprocess.run(command, capture_output=True, check=True).stdout.decode("utf-8").split("\n")
    return [" ".join(t for t in line.rstrip().split(" ") if t not in COCO_PUNCTUATION) for line in lines[:len(sentences)]]


def ptb_tokenize(sentences: list[str], backend: str = "python") -> list[str]:
    """COCO-toolkit tokenization of many captions; ``backend`` is ``"python"`` or ``"java"``."""
    if backend == "python":
        return [coco_tokenize(s) for s in sentences]
    if backend == "java":
        return java_tokenize(list(sentences))
    raise ValueError(f"backend must be 'python' or 'java', got {backend!r}")


TOKENIZERS = ("ptb", "ptb-java", "none")


def check_tokenizer(tokenizer: str) -> str:
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    return tokenizer


def tokenize_corpus(predictions: list[str], references: list[list[str]], tokenizer: str = "ptb") -> tuple[list[str], list[list[str]]]:
    """Candidates and references as the COCO toolkit scores them; each distinct sentence is tokenized once.

    ``tokenizer``: ``"ptb"`` (pure Python, default), ``"ptb-java"`` (the CoreNLP jar) or ``"none"``
    (the text is used as given: already tokenized, space-separated).

    >>> tokenize_corpus(["A dog."], [["The dog runs.", "A dog!"]])
    (['a dog'], [['the dog runs', 'a dog']])
    """
    if check_tokenizer(tokenizer) == "none":
        return list(predictions), [list(refs) for refs in references]
    distinct = list(dict.fromkeys([*predictions, *(r for refs in references for r in refs)]))
    tokenized = dict(zip(distinct, ptb_tokenize(distinct, backend="java" if tokenizer == "ptb-java" else "python")))
    return [tokenized[p] for p in predictions], [[tokenized[r] for r in refs] for refs in references]
