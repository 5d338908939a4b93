"""WordNet 3.0 for the English metrics (CHAIR, AMBER, CAPTURE): one source of its files, NLTK's lemmatizer, and the
synonyms NLTK's reader gives, never downloaded.

Where the files come from, first found first (:func:`wordnet_source`): the folder in ``CAPEVAL_WORDNET`` (a WordNet
``dict`` folder: ``data.noun``, ``index.noun``, ``noun.exc``, ...), NLTK's ``corpora/wordnet``
(``python -m nltk.downloader wordnet``), then Debian's ``/usr/share/wordnet`` (``apt-get install wordnet-base``).
All are the Princeton WordNet 3.0 database files; Debian's package leaves out the ``lexnames`` file NLTK's reader
opens, and copies laid out for NLTK often carry it empty, so its list of lexicographer files is supplied here (the
reader needs only their names and numbers).

:func:`wordnet` gives the :class:`WordNet` of that source, loaded once per process:

* :meth:`WordNet.lemmatize` is NLTK's ``WordNetLemmatizer().lemmatize(word, pos)`` (NLTK 3.9's ``_morphy``: the
  exception list, else one suffix rule, keeping the forms WordNet knows, the shortest first), read from the index and
  exception files alone, so it loads in a fraction of NLTK's reader's time;
* :meth:`WordNet.lemma_names` is the set of ``lemma.name()`` over ``wordnet.synsets(word)``, from NLTK's reader
  (loaded on its first use).
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..models import ModelUnavailableError, cached

#: Debian's wordnet-base puts the database here.
DEBIAN_FOLDER = Path("/usr/share/wordnet")
#: WordNet's parts of speech (as NLTK names them) and the file suffix of each.
WORDNET_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
NOUN, ADJECTIVE = "n", "a"
#: WordNet's morphy suffix rules (NLTK's ``MORPHOLOGICAL_SUBSTITUTIONS``), by part of speech, in order.
MORPHY_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
#: WordNet 3.0's lexicographer files in the order of their numbers (lexnames(5WN)).
LEXICOGRAPHER_FILES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute", "noun.body",
    "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group", "noun.location",
    "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change",
    "verb.cognition", "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl",
)
_SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
#: :func:`wordnet_source`'s name for NLTK's zipped ``corpora/wordnet``.
NLTK_ZIP = "nltk"


class WordNetUnavailableError(ModelUnavailableError):
    """No WordNet 3.0 database was found on this machine."""


def wordnet_source() -> str:
    """Where WordNet is read from: a folder path, or :data:`NLTK_ZIP` for NLTK's zipped ``corpora/wordnet``; raises
    :class:`WordNetUnavailableError` naming how to install it when there is none."""
    configured = os.environ.get("CAPEVAL_WORDNET")
    if configured:
        if not (Path(configured) / "data.noun").is_file():
            raise WordNetUnavailableError(f"CAPEVAL_WORDNET={configured!r} is not a WordNet dict folder (no data.noun in it)")
        return configured
    import nltk.data

    from .data_folders import use_nltk_data

    use_nltk_data()
    try:
        found = nltk.data.find("corpora/wordnet")
    except LookupError:
        found = None
    if found is not None:
        # An unzipped folder is read like any other (NLTK 3.9's own reader wants index.sense, which copies can lack).
        folder = getattr(found, "path", None)  # a zip's pointer has none
        return str(folder) if folder and (Path(str(folder)) / "data.noun").is_file() else NLTK_ZIP
    if (DEBIAN_FOLDER / "data.noun").is_file():
        return str(DEBIAN_FOLDER)
    raise WordNetUnavailableError(
        "WordNet 3.0 is not installed: run capeval download chair (or python -m nltk.downloader wordnet), or apt-get install wordnet-base (Debian, "
        f"Ubuntu: its files in {DEBIAN_FOLDER}), or set CAPEVAL_WORDNET to a WordNet dict folder")


def lexnames_text() -> str:
    """The ``lexnames`` file of WordNet 3.0: number, name and syntactic category of each lexicographer file.

    >>> lexnames_text().splitlines()[:2]
    ['00\\tadj.all\\t3', '01\\tadj.pert\\t3']
    """
    return "".join(f"{number:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n"
                   for number, name in enumerate(LEXICOGRAPHER_FILES))


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


class WordNet:
    """WordNet 3.0 as NLTK reads it, from one source: lemmas from the index and exception files (``open_file(name)``:
    the lines of ``index.{noun,verb,adj,adv}`` and ``{noun,verb,adj,adv}.exc``), synonyms from NLTK's reader
    (``load_reader()``, called on the first :meth:`lemma_names`). Both remember every answer."""

    def __init__(self, open_file: Callable[[str], Iterable[str]], load_reader: Callable[[], Any]):
        self.lemmas: dict[str, frozenset[str]] = {}
        self.exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos, suffix in WORDNET_FILES.items():
            # Index lines start with the lemma; the licence header lines start with spaces.
            self.lemmas[pos] = frozenset(line.split(" ", 1)[0] for line in open_file(f"index.{suffix}") if not line.startswith(" "))
            self.exceptions[pos] = {words[0]: tuple(words[1:]) for words in map(str.split, open_file(f"{suffix}.exc")) if words}
        self.load_reader = load_reader
        self._reader: Any = None
        self._lemma: dict[tuple[str, str], str] = {}
        self._names: dict[str, frozenset[str]] = {}

    def lemmatize(self, word: str, pos: str = NOUN) -> str:
        """``WordNetLemmatizer().lemmatize(word, pos)``: the shortest base form WordNet knows for ``word`` as ``pos``
        (``"n"``, ``"v"``, ``"a"``, ``"r"``), else ``word``."""
        key = (word, pos)
        lemma = self._lemma.get(key)
        if lemma is None:
            forms = morphy(word, pos, self.lemmas[pos], self.exceptions[pos])
            lemma = self._lemma[key] = min(forms, key=len) if forms else word
        return lemma

    def lemma_names(self, word: str) -> frozenset[str]:
        """The names of every lemma of every synset of ``word`` (all parts of speech; multi-word lemmas joined by ``_``)."""
        names = self._names.get(word)
        if names is None:
            if self._reader is None:
                self._reader = self.load_reader()
            names = self._names[word] = frozenset(lemma.name() for synset in self._reader.synsets(word) for lemma in synset.lemmas())
        return names


def _file_opener(source: str) -> Callable[[str], list[str]]:
    """How to read one WordNet file's lines from ``source`` (a folder, or :data:`NLTK_ZIP`)."""
    if source == NLTK_ZIP:
        import nltk.data

        resource = nltk.data.find("corpora/wordnet")

        def open_member(name: str) -> list[str]:
            with resource.join(name).open() as handle:
                return [line.decode("utf-8") if isinstance(line, bytes) else line for line in handle]
        return open_member

    def open_plain(name: str) -> list[str]:
        return (Path(source) / name).read_text(encoding="utf-8").splitlines()
    return open_plain


def _nltk_reader(source: str) -> Any:
    """NLTK's ``WordNetCorpusReader`` over ``source``, with ``lexnames`` supplied where a folder lacks it."""
    import nltk.data

    if source == NLTK_ZIP:
        from nltk.corpus import wordnet as nltk_wordnet

        nltk_wordnet.ensure_loaded()
        return nltk_wordnet
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = Path(source)

    class FolderWordNet(WordNetCorpusReader):
        """NLTK's reader over a WordNet 3.0 ``dict`` folder, with ``lexnames`` supplied where the folder lacks it
        (missing, or an empty placeholder some copies carry)."""

        def open(self, file: str):  # type: ignore[override]
            if file == "lexnames" and not ((folder / file).is_file() and (folder / file).stat().st_size):
                return io.StringIO(lexnames_text())
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            """No mapping: the folder is WordNet 3.0 itself (NLTK 3.9 would map it onto NLTK's own corpus, loading that)."""
            return None

    # NLTK 3.9 warns when it opens a file outside its data paths.
    if str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return FolderWordNet(str(folder), None)


def wordnet() -> WordNet:
    """The :class:`WordNet` of :func:`wordnet_source` (loaded once per process and source; callers need not keep it);
    :class:`WordNetUnavailableError` saying how to install it.

    >>> words = wordnet()  # doctest: +SKIP
    >>> words.lemmatize("women"), words.lemmatize("larger", ADJECTIVE), sorted(words.lemma_names("car"))[:3]  # doctest: +SKIP
    ('woman', 'large', ['auto', 'automobile', 'cable_car'])
    """
    import nltk.data

    from .data_folders import use_nltk_data

    use_nltk_data()
    # Where it is found is looked up once per configuration (the lookup searches NLTK's data path).
    source = cached(("wordnet-source", os.environ.get("CAPEVAL_WORDNET"), tuple(nltk.data.path)), wordnet_source)
    return cached(("wordnet", source), lambda: WordNet(_file_opener(source), lambda: _nltk_reader(source)))
