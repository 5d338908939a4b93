"""WordNet 3.0 through NLTK's reader, from NLTK's own data or from Debian's ``wordnet-base`` files, never downloaded.

Where the data comes from, first found first: the folder in ``CAPEVAL_WORDNET`` (a WordNet ``dict`` folder:
``data.noun``, ``index.noun``, ``noun.exc``, ...), NLTK's ``corpora/wordnet`` (``python -m nltk.downloader wordnet``),
then ``/usr/share/wordnet`` (``apt-get install wordnet-base``). Both are the Princeton WordNet 3.0 database files;
Debian's package leaves out the ``lexnames`` file that NLTK's reader opens, so its list of lexicographer files is
supplied here (the reader only needs their names and numbers).

The functions the metrics use are NLTK's: :func:`lemmatize` is ``WordNetLemmatizer().lemmatize(word, pos)`` (the
shortest of ``morphy``'s base forms, the word itself when there is none) and :func:`lemma_names` is the set of
``lemma.name()`` over ``wordnet.synsets(word)``, both cached.
"""

from __future__ import annotations

import functools
import io
import os
import warnings
from pathlib import Path
from typing import Any

#: Debian's wordnet-base puts the database here.
DEBIAN_FOLDER = Path("/usr/share/wordnet")
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
NOUN, ADJECTIVE = "n", "a"


class WordNetUnavailableError(LookupError):
    """No WordNet 3.0 database was found on this machine."""


def lexnames_text() -> str:
    """The ``lexnames`` file of WordNet 3.0: number, name and syntactic category of each lexicographer file.

    >>> lexnames_text().splitlines()[:2]
    ['00\\tadj.all\\t3', '01\\tadj.pert\\t3']
    """
    return "".join(f"{number:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n"
                   for number, name in enumerate(LEXICOGRAPHER_FILES))


def _folder_reader(folder: Path) -> Any:
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

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


def wordnet_source() -> str:
    """Where WordNet is read from: a folder path, or ``"nltk"`` for NLTK's zipped ``corpora/wordnet``; raises
    :class:`WordNetUnavailableError` naming how to install it when there is none."""
    configured = os.environ.get("CAPEVAL_WORDNET")
    if configured:
        if not (Path(configured) / "data.noun").is_file():
            raise WordNetUnavailableError(f"CAPEVAL_WORDNET={configured!r} is not a WordNet dict folder (no data.noun in it)")
        return configured
    import nltk

    try:
        found = nltk.data.find("corpora/wordnet")
    except LookupError:
        found = None
    if found is not None:
        # An unzipped folder is read like any other (NLTK 3.9's own reader wants index.sense, which copies can lack).
        folder = getattr(found, "path", None)  # a zip's pointer has none
        return str(folder) if folder and (Path(str(folder)) / "data.noun").is_file() else "nltk"
    if (DEBIAN_FOLDER / "data.noun").is_file():
        return str(DEBIAN_FOLDER)
    raise WordNetUnavailableError(
        "WordNet 3.0 is not installed: run `python -m nltk.downloader wordnet`, or `apt-get install wordnet-base` (Debian, "
        "Ubuntu), or set CAPEVAL_WORDNET to a WordNet dict folder")


@functools.cache
def wordnet_reader(source: str | None = None) -> Any:
    """NLTK's ``WordNetCorpusReader`` over ``source`` (default :func:`wordnet_source`), loaded once."""
    source = source or wordnet_source()
    if source == "nltk":
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet
    return _folder_reader(Path(source))


@functools.cache
def lemmatize(word: str, pos: str) -> str:
    """NLTK's ``WordNetLemmatizer().lemmatize(word, pos)``: the shortest base form WordNet's morphology finds for
    ``word`` as part of speech ``pos`` (``"n"``, ``"v"``, ``"a"``, ``"r"``), else ``word`` unchanged.

    >>> lemmatize("women", NOUN), lemmatize("larger", ADJECTIVE), lemmatize("qwzx", NOUN)  # doctest: +SKIP
    ('woman', 'large', 'qwzx')
    """
    forms = wordnet_reader()._morphy(word, pos)
    return min(forms, key=len) if forms else word


@functools.cache
def lemma_names(word: str) -> frozenset[str]:
    """The names of every lemma of every synset of ``word`` (all parts of speech; multi-word lemmas joined by ``_``).

    >>> sorted(lemma_names("car"))[:3]  # doctest: +SKIP
    ['auto', 'automobile', 'cable_car']
    """
    return frozenset(lemma.name() for synset in wordnet_reader().synsets(word) for lemma in synset.lemmas())
