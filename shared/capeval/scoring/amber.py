"""AMBER's generative evaluation (Wang et al., 2023, arXiv 2311.07397): CHAIR, Cover, Hal and Cog of image
descriptions, as ``inference.py`` of junyangwang0410/AMBER computes them (``--evaluation_type g``).

For each description of AMBER image ``id`` (annotation entry ``id``: its ``truth`` and ``hallu`` objects):

1. object candidates: NLTK's ``word_tokenize``, ``pos_tag``, and the WordNet lemma (noun) of every token whose tag
   starts with ``NN`` (:mod:`capeval.text.english`, :mod:`capeval.text.wordnet`); kept when the lemma is in AMBER's
   vocabulary (the keys and values of ``relation.json``), in order and with repeats (:func:`vocabulary_objects`);
2. each candidate is matched (:func:`match_objects`): a *safe word* (``safe_words.txt``) is skipped; a candidate
   equal to a truth object or to a word associated with one (``relation.json``) covers that object; otherwise it
   marks the first hallucination object (or associated word) it equals, then the first one whose spaCy similarity
   exceeds 0.8, and it is a hallucination unless its similarity to some truth object (or associated word) exceeds
   0.8, in which case that one is covered;
3. the corpus values are ratios of sums (:func:`corpus_values`): CHAIR = hallucinated candidates / candidates,
   Cover = covered truth objects / truth objects, Hal = descriptions with a hallucination / descriptions,
   Cog = hallucination objects named / hallucination objects, in percent, every sum starting from the initial
   values of ``metrics.txt`` (0 over 0.001), rounded to one decimal as ``inference.py`` prints them.

The matching and the sums are pure functions of the candidates; the NLTK and spaCy steps are
:class:`NounExtractor` and :class:`SpacySimilarity`.

>>> data = AmberData([{"id": 1, "type": "generative", "truth": ["dog", "sofa"], "hallu": ["cat"]}],
...                             {"dog": ["puppy"], "sofa": ["couch"], "cat": []}, ["side"], dict(INITIAL_COUNTS))
>>> match_objects(["puppy", "cat", "side"], data.entry(1), data, first_similar_by(lambda a, b: False))
AmberCounts(objects=('puppy', 'cat', 'side'), hallucinated=('cat',), covered=(True, False), named=(True,))
"""

from __future__ import annotations

import ast
import json
import numbers
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Mapping, Sequence

from ..declaration import MERGE_SUM, Opt
from ..file_contents import content_key, file_digest
from ..needs import NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET, SpacyWheel, UrlFile
from ..models import ModelUnavailableError, cached, model_id
from ..progress import progress
from ..text.english import TEXTS_PER_BATCH, pos_tag_texts
from ..text.wordnet import wordnet
from .protocol import CaptionScorer, Scores

#: The released repository and the commit whose ``data/`` files capeval downloads when no ``data_dir`` is given.
AMBER_REPOSITORY = "https://github.com/junyangwang0410/AMBER"
AMBER_COMMIT = "534babf6bbfcce2e735c26289dedfb21cef3c939"
#: The four files of AMBER's ``data/`` folder the generative evaluation reads, with their SHA-256 at that commit.
AMBER_FILES = {
    "annotations.json": "db22a436c4836fbb295e60b4e80d519573077579fb7032f01b193c1bd022b797",
    "relation.json": "c4c1491e9bbc3209abc1888c12a1bf8413bdbab8a0d8be04b990a2e7680cf23e",
    "safe_words.txt": "f92cf1123f4578a2630832fac3e6ac4de36212ea55859d3bed4fd233723f4043",
    "metrics.txt": "2fbe2ee584d10e7ce0a568a4902d3d2296727d45f761bf091dd35c4e4b5bc6ac",
}
#: ``inference.py``'s counters of the generative task, in ``metrics.txt`` order: the per-caption sufficient statistics.
COUNTERS = ("chair_score", "chair_num", "safe_cover_score", "safe_cover_num", "hallu_cover_score", "hallu_cover_num",
            "non_hallu_score", "non_hallu_num")
#: The counters' initial values in the released ``metrics.txt``: every denominator starts at 0.001.
INITIAL_COUNTS = {name: 0.001 if name.endswith("_num") else 0 for name in COUNTERS}
COLUMNS = ("amber_chair", "amber_cover", "amber_hal", "amber_cog")
#: The spaCy pipeline AMBER's similarity uses (``python -m spacy download en_core_web_lg``), its released wheel
#: (what spaCy's own download installs) and that wheel's SHA-256. explosion/spacy-models publishes no checksum beside
#: its release assets (these predate GitHub's asset digests): this is the digest that public projects pinning the
#: same release URL record, several independently (pip's ``#sha256=`` in requirements files, hash-checked scripts).
DEFAULT_SPACY_MODEL = "en_core_web_lg"
SPACY_WHEEL = ("https://github.com/explosion/spacy-models/releases/download/en_core_web_lg-3.8.0/"
               "en_core_web_lg-3.8.0-py3-none-any.whl")
SPACY_WHEEL_SHA256 = "293e9547a655b25499198ab15a525b05b9407a75f10255e405e8c3854329ab63"


def released_url(name: str) -> str:
    """Where AMBER's data file ``name`` is at :data:`AMBER_COMMIT`."""
    return f"https://raw.githubusercontent.com/junyangwang0410/AMBER/{AMBER_COMMIT}/data/{name}"
#: ``inference.py``'s ``--similarity_score``.
DEFAULT_SIMILARITY = 0.8


class AmberDataError(ModelUnavailableError):
    """AMBER's data files are missing or malformed."""


def download_advice(folder: str | os.PathLike | None = None) -> str:
    where = f"into {folder}" if folder is not None else "into a folder and pass it as data_dir"
    return (f"download {', '.join(AMBER_FILES)} from the data/ folder of {AMBER_REPOSITORY} "
            f"(commit {AMBER_COMMIT[:7]}) {where}")


def read_safe_words(text: str) -> list[str]:
    """The lines of ``safe_words.txt`` as ``inference.py`` reads them (each line without its newline; no line after a
    final newline).

    >>> read_safe_words("orange\\nline\\n"), read_safe_words("orange\\n\\nline")
    (['orange', 'line'], ['orange', '', 'line'])
    """
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def read_initial_counts(text: str, source: str = "metrics.txt") -> dict[str, float]:
    """The generative counters' initial values from ``metrics.txt`` (``name=value`` lines; other lines ignored).

    >>> read_initial_counts("chair_num=0.001\\nchair_score=0\\n" + "\\n".join(f"{n}=1" for n in COUNTERS[2:]))["chair_num"]
    0.001
    """
    values: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.strip().split("=")
        if len(parts) == 2:
            try:
                value = ast.literal_eval(parts[1].strip())
            except (ValueError, SyntaxError):
                value = None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise AmberDataError(f"{source} line {number}: {line.strip()!r} is not name=number")
            if parts[0].strip().endswith("_num") and not value > 0:
                raise AmberDataError(f"{source} line {number}: {line.strip()!r}: a denominator starts above 0 (the "
                                     "released file starts each at 0.001), or a call that counts nothing divides by it")
            values[parts[0].strip()] = value
    missing = [name for name in COUNTERS if name not in values]
    if missing:
        raise AmberDataError(f"{source} has no initial value for {missing}")
    return {name: values[name] for name in COUNTERS}


@dataclass(frozen=True)
class AmberEntry:
    """One generative annotation: the image's ``truth`` objects and the ``hallu`` objects it does not show."""

    id: int
    truth: tuple[str, ...]
    hallu: tuple[str, ...]


class AmberData:
    """AMBER's annotations, word associations, safe words and initial counters (:meth:`load` reads a ``data/`` folder)."""

    def __init__(self, annotations: Sequence[Mapping[str, Any]], association: Mapping[str, Sequence[str]],
                 safe_words: Sequence[str], initial: Mapping[str, float], *, source: str = "annotations.json",
                 relation_source: str = "relation.json"):
        self.annotations = list(annotations)
        self.association = read_association(association, relation_source)
        self.safe_words = frozenset(safe_words)
        # inference.py's "hallucination_words": every key of relation.json and every word associated with one.
        self.vocabulary = frozenset(self.association) | {word for words in self.association.values() for word in words}
        self.initial = dict(initial)
        self.source = source
        self._entries: dict[int, AmberEntry] = {}
        self._object_lists: dict[AmberEntry, tuple[ObjectList, ObjectList]] = {}

    @classmethod
    def load(cls, files: Mapping[str, Path]) -> "AmberData":
        """Read AMBER's files (:data:`AMBER_FILES` names -> paths, :func:`data_files`)."""
        return cls(read_json(files["annotations.json"], list), read_json(files["relation.json"], dict),
                   read_safe_words(read_text(files["safe_words.txt"])),
                   read_initial_counts(read_text(files["metrics.txt"]), str(files["metrics.txt"])),
                   source=str(files["annotations.json"]), relation_source=str(files["relation.json"]))

    def entry(self, amber_id: int) -> AmberEntry:
        """The generative annotation of image ``amber_id`` (``inference.py`` reads entry ``id - 1`` of the list; checked
        once); ``KeyError`` for an id outside the annotations or one of a discriminative question."""
        found = self._entries.get(amber_id)
        if found is None:
            found = self._entries[amber_id] = self._read_entry(amber_id)
        return found

    def _read_entry(self, amber_id: int) -> AmberEntry:
        if not 1 <= amber_id <= len(self.annotations):
            raise KeyError(f"AMBER id {amber_id} is not in {self.source} (ids 1 to {len(self.annotations)})")
        annotation = self.annotations[amber_id - 1]
        if not isinstance(annotation, Mapping) or annotation.get("id") != amber_id:
            raise AmberDataError(f"{self.source}: entry {amber_id - 1} should be id {amber_id}, found "
                                 f"{annotation.get('id') if isinstance(annotation, Mapping) else annotation!r}")
        if annotation.get("type") != "generative":
            raise KeyError(f"AMBER id {amber_id} is a {annotation.get('type')} question, not a generative one: the amber "
                           "metric scores descriptions of the generative images")
        for field in ("truth", "hallu"):
            words = annotation.get(field)
            if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
                raise AmberDataError(f"{self.source}: id {amber_id} has no list of words {field!r}")
            unknown = [word for word in words if word not in self.association]
            if unknown:
                raise AmberDataError(f"{self.source}: id {amber_id}'s {field} objects {unknown} are not keys of relation.json")
        return AmberEntry(amber_id, tuple(annotation["truth"]), tuple(annotation["hallu"]))

    def object_lists(self, entry: AmberEntry) -> tuple["ObjectList", "ObjectList"]:
        """The truth and the hallucination :class:`ObjectList` of ``entry`` (built once)."""
        found = self._object_lists.get(entry)
        if found is None:
            found = self._object_lists[entry] = (ObjectList(entry.truth, self.association), ObjectList(entry.hallu, self.association))
        return found

    def generative_ids(self) -> list[int]:
        return [a["id"] for a in self.annotations if isinstance(a, Mapping) and a.get("type") == "generative"]


def read_association(value: Mapping[str, Any], source: str = "relation.json") -> dict[str, list[str]]:
    """``relation.json``'s word associations: each object -> a list of words; :class:`AmberDataError` naming the entry
    otherwise (a string would be read as its letters, ``null`` or a number could not be read at all).

    >>> read_association({"dog": ["puppy"], "sofa": "couch"})
    Traceback (most recent call last):
    capeval.scoring.amber.AmberDataError: relation.json: "sofa" is 'couch', not a list of words
    """
    for word, words in value.items():
        if not isinstance(words, list) or not all(isinstance(other, str) for other in words):
            raise AmberDataError(f"{source}: {json.dumps(word)} is {words!r:.80}, not a list of words")
    return {word: list(words) for word, words in value.items()}


def read_text(path: Path) -> str:
    """A data file's text (UTF-8); :class:`AmberDataError` naming the file otherwise."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise AmberDataError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start}): {download_advice(path.parent)}") from None
    except OSError as error:
        raise AmberDataError(f"{path} cannot be read ({error.strerror}): {download_advice(path.parent)}") from None


def read_json(path: Path, kind: type) -> Any:
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise AmberDataError(f"{path} is not valid JSON ({error}): {download_advice(path.parent)}") from None
    if not isinstance(value, kind):
        raise AmberDataError(f"{path} should hold a JSON {'list' if kind is list else 'object'}, not {type(value).__name__}")
    return value


def data_files(data_dir: str | os.PathLike | None) -> dict[str, Path]:
    """AMBER's four files: in ``data_dir``, or (``None``) the released ones at :data:`AMBER_COMMIT`, downloaded once
    into capeval's cache and checked against their SHA-256. :class:`AmberDataError` says what to download where."""
    if data_dir is not None:
        folder = Path(data_dir).expanduser()
        missing = [name for name in AMBER_FILES if not (folder / name).is_file()]
        if missing:
            raise AmberDataError(f"AMBER's data folder {str(folder)!r} lacks {missing}: {download_advice(folder)}")
        return {name: folder / name for name in AMBER_FILES}
    from ..checkpoints import resolve_checkpoint

    try:
        return {name: resolve_checkpoint(released_url(name),
                                         what=f"AMBER {name}", sha256=digest) for name, digest in AMBER_FILES.items()}
    except ModelUnavailableError as error:
        raise AmberDataError(f"AMBER's data files are not available ({error}); {download_advice()}") from None


def data_id(files: Mapping[str, Path]) -> str:
    """How AMBER's data is named in hashcodes: ``released@<commit>`` for the released files, wherever they are, else
    ``local@`` a hash of the four files."""
    import hashlib

    digests = {name: file_digest(path) for name, path in files.items()}
    if digests == AMBER_FILES:
        return f"released@{AMBER_COMMIT[:7]}"
    return "local@" + hashlib.sha256("".join(digests[name] for name in AMBER_FILES).encode()).hexdigest()[:10]


# --------------------------------------------------------------------------- image ids

AMBER_NAME = re.compile(r"AMBER_(\d+)(?:\.[A-Za-z0-9]+)?")


def amber_id(image: Any, index: int = 0) -> int:
    """AMBER's id of one ``images=`` entry: an int, ``"12"``, ``"AMBER_12"``, a file name or path ``AMBER_12.jpg``,
    or a PIL image opened from such a file; ``ValueError`` naming the entry otherwise.

    >>> [amber_id(x) for x in (12, "AMBER_12", "AMBER_12.jpg", "/data/image/AMBER_12.jpg")]
    [12, 12, 12, 12]
    >>> amber_id("dog.jpg", 3)
    Traceback (most recent call last):
    ValueError: images[3] = 'dog.jpg': AMBER names an image by its id: 12, 'AMBER_12', 'AMBER_12.jpg' or a path to that file
    """
    if isinstance(image, numbers.Integral) and not isinstance(image, bool):  # numpy's integers too
        return int(image)
    name = getattr(image, "filename", None) if not isinstance(image, (str, os.PathLike)) else image
    if isinstance(name, (str, os.PathLike)) and str(name):
        stem = Path(name).name
        if stem.isdigit():
            return int(stem)
        match = AMBER_NAME.fullmatch(stem)
        if match:
            return int(match.group(1))
    raise ValueError(f"images[{index}] = {image!r}: AMBER names an image by its id: 12, 'AMBER_12', 'AMBER_12.jpg' "
                     "or a path to that file")


# --------------------------------------------------------------------------- the pure steps


def nouns_of(tagged: Iterable[tuple[str, str]], lemmatize: Callable[[str], str]) -> list[str]:
    """The noun lemma of every token whose Penn tag starts with ``NN`` (NN, NNS, NNP, NNPS), in order.

    >>> nouns_of([("Two", "CD"), ("dogs", "NNS"), ("run", "VBP")], lambda word: word.rstrip("s"))
    ['dog']
    """
    return [lemmatize(word) for word, tag in tagged if tag.startswith("NN")]


def vocabulary_objects(nouns: Iterable[str], vocabulary: frozenset[str]) -> list[str]:
    """The nouns AMBER knows as objects (``relation.json``'s words), in order, repeats kept."""
    return [noun for noun in nouns if noun in vocabulary]


@dataclass(frozen=True)
class AmberCounts:
    """What one description names: its object candidates, the hallucinated ones, and which truth and hallucination
    objects (in annotation order) it covers."""

    objects: tuple[str, ...]
    hallucinated: tuple[str, ...]
    covered: tuple[bool, ...]
    named: tuple[bool, ...]

    def statistics(self) -> list[float]:
        """``inference.py``'s increments of its counters (:data:`COUNTERS`) for this description."""
        return [len(self.hallucinated), len(self.objects), sum(self.covered), len(self.covered), sum(self.named),
                len(self.named), int(not self.hallucinated), 1]


class ObjectList:
    """A truth or hallucination list as ``inference.py`` lays it out: the words associated with each object (in object
    order), then the objects themselves; a word found at position ``j`` marks the object ``owners[j]``."""

    def __init__(self, objects: Sequence[str], association: Mapping[str, Sequence[str]]):
        self.words: list[str] = []
        self.owners: list[int] = []
        for index, word in enumerate(objects):
            self.words += association[word]
            self.owners += [index] * len(association[word])
        self.owners += range(len(objects))
        self.words += objects
        self.first: dict[str, int] = {}
        for position, word in enumerate(self.words):
            self.first.setdefault(word, position)
        #: The words as the similarity search takes them (a key it can remember answers by).
        self.key = tuple(self.words)


#: ``first_similar(word, words)``: the position of the first of ``words`` similar to ``word``, else ``None``.
FirstSimilar = Callable[[str, Sequence[str]], "int | None"]


def first_similar_by(similar: Callable[[str, str], bool]) -> FirstSimilar:
    """``inference.py``'s search over a list: ``similar(word, other)`` asked of each word of the list in order, the
    position of the first it holds for.

    >>> first_similar_by(lambda a, b: a[0] == b[0])("couch", ["dog", "cat", "cushion"])
    1
    """
    def first_similar(word: str, words: Sequence[str]) -> int | None:
        return next((position for position, other in enumerate(words) if similar(word, other)), None)
    return first_similar


def match_objects(objects: Sequence[str], entry: AmberEntry, data: AmberData, first_similar: FirstSimilar) -> AmberCounts:
    """Match one description's object candidates against its image's annotation, as ``inference.py`` does.

    ``first_similar(word, words)``: the position of the first of ``words`` whose spaCy similarity to ``word`` exceeds
    the threshold (:meth:`SpacySimilarity.first_similar`, or :func:`first_similar_by` of a test of two words). Kept
    quirks: a candidate equal to an associated word marks the object of the *first* list position holding it (so a
    truth object that is also associated with an earlier truth object covers that earlier one); a candidate equal to
    a hallucination word still goes through the similarity search over the hallucination list (marking a second
    object when a word before it is similar) and over the truth list.
    """
    safe, hallucination = data.object_lists(entry)
    covered, named = [False] * len(entry.truth), [False] * len(entry.hallu)
    hallucinated = []
    for word in objects:
        if word in data.safe_words:
            continue
        if word in safe.first:
            covered[safe.owners[safe.first[word]]] = True
            continue
        if word in hallucination.first:
            named[hallucination.owners[hallucination.first[word]]] = True
        position = first_similar(word, hallucination.key)
        if position is not None:
            named[hallucination.owners[position]] = True
        position = first_similar(word, safe.key)
        if position is None:
            hallucinated.append(word)
        else:
            covered[safe.owners[position]] = True
    return AmberCounts(tuple(objects), tuple(hallucinated), tuple(covered), tuple(named))


def corpus_values(statistics: Sequence[float], initial: Mapping[str, float], *, rounded: bool = True) -> dict[str, float]:
    """CHAIR, Cover, Hal and Cog from summed counters (:data:`COUNTERS` order), each sum starting from ``initial``
    (``metrics.txt``), in percent and, when ``rounded``, to one decimal, as ``inference.py`` prints them.

    >>> corpus_values([1, 4, 3, 4, 1, 2, 1, 2], INITIAL_COUNTS)
    {'amber_chair': 25.0, 'amber_cover': 75.0, 'amber_hal': 50.0, 'amber_cog': 50.0}
    """
    total = {name: initial[name] + value for name, value in zip(COUNTERS, statistics)}
    values = {
        "amber_chair": total["chair_score"] / total["chair_num"] * 100,
        "amber_cover": total["safe_cover_score"] / total["safe_cover_num"] * 100,
        "amber_hal": 100 - total["non_hallu_score"] / total["non_hallu_num"] * 100,
        "amber_cog": total["hallu_cover_score"] / total["hallu_cover_num"] * 100,
    }
    return {name: round(value, 1) if rounded else value for name, value in values.items()}


def caption_values(counts: AmberCounts) -> dict[str, float]:
    """One description's own ratios in percent (0 where it has nothing to count): not the corpus values, which are
    ratios of sums (:func:`corpus_values`)."""
    def percent(part: int, whole: int) -> float:
        return 100.0 * part / whole if whole else 0.0

    return {"amber_chair": percent(len(counts.hallucinated), len(counts.objects)),
            "amber_cover": percent(sum(counts.covered), len(counts.covered)),
            "amber_hal": 100.0 if counts.hallucinated else 0.0,
            "amber_cog": percent(sum(counts.named), len(counts.named))}


# --------------------------------------------------------------------------- the NLTK and spaCy steps


class NounExtractor:
    """``inference.py``'s ``extract_nouns`` over many descriptions: NLTK's ``word_tokenize`` and ``pos_tag``
    (:func:`capeval.text.english.pos_tag_texts`: one tagger, every description tagged together) and
    ``WordNetLemmatizer().lemmatize`` of every NN* token (:class:`capeval.text.wordnet.WordNet`, remembered per word)."""

    def tagged(self, texts: Sequence[str]) -> list[list[tuple[str, str]]]:
        return pos_tag_texts(texts)

    def lemmatizer(self) -> Callable[[str], str]:
        return wordnet().lemmatize

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        tagged = self.tagged(texts)
        lemmatize = self.lemmatizer()
        return [nouns_of(words, lemmatize) for words in tagged]


class SpacySimilarity:
    """``inference.py``'s ``check_synonyms_word``: ``nlp(a).similarity(nlp(b)) > threshold``, with one spaCy ``Doc``
    per word and one similarity per pair of words (both depend on the words alone).

    :meth:`first_similar` answers ``inference.py``'s search over a word list from each word's vector, read once into
    one matrix: a word's cosines with every word seen so far come from one matrix product, a cosine farther from the
    threshold than float32's rounding of spaCy's own sum can move it decides alone, and a closer one is decided by
    spaCy's similarity itself, so every answer is the one spaCy's comparisons give.
    """

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, threshold: float = DEFAULT_SIMILARITY):
        self.model = model
        self.threshold = threshold
        self._docs: dict[str, Any] = {}
        self._similarities: dict[tuple[str, str], float] = {}
        # The words whose vectors are read (their order is their row), and what spaCy's similarity reads of each: the
        # vectors (in float64, rows of a matrix that doubles when full), their norms and the tokens' vector keys.
        self._index: dict[str, int] = {}
        self._matrix: Any = None
        self._norms: Any = None
        self._keys: list[tuple[int, ...]] = []
        # Words whose documents a pipeline hook changes: compared by spaCy alone.
        self._hooked: set[str] = set()
        # Per word, whether it is similar to each indexed word (as far as the index went when it was last asked).
        self._rows: dict[str, Any] = {}
        # Per word list, the rows of its words (False where a hook changes one of them).
        self._positions: dict[tuple[str, ...], Any] = {}
        self._first: dict[tuple[str, tuple[str, ...]], int | None] = {}

    def nlp(self):
        from ..text.spans import load_spacy

        return load_spacy(self.model, missing=f"AMBER's similarity uses {DEFAULT_SPACY_MODEL} (python -m spacy download "
                                              f"{DEFAULT_SPACY_MODEL}); or pass spacy_model=<an installed pipeline or folder>")

    def doc(self, word: str) -> Any:
        """The spaCy document of ``word`` (made once)."""
        doc = self._docs.get(word)
        if doc is None:
            nlp = self.nlp()
            # With word vectors a document's similarity reads only its tokens' vectors: the tokenizer's document has
            # the same ones as the whole pipeline's, 1000x sooner. Without them it reads the pipeline's tensor.
            doc = self._docs[word] = nlp.make_doc(word) if nlp.vocab.vectors.size else nlp(word)
        return doc

    def similarity(self, first: str, second: str) -> float:
        """spaCy's ``Doc.similarity`` of the two words' documents."""
        key = (first, second)
        value = self._similarities.get(key)
        if value is None:
            import warnings

            with warnings.catch_warnings():
                # inference.py ignores UserWarnings: spaCy's W007 (no word vectors) and W008 (an empty vector).
                warnings.simplefilter("ignore", UserWarning)
                value = self._similarities[key] = self.doc(first).similarity(self.doc(second))
        return value

    def __call__(self, first: str, second: str) -> bool:
        return self.similarity(first, second) > self.threshold

    def first_similar(self, word: str, words: Sequence[str]) -> int | None:
        """The position of the first of ``words`` whose similarity to ``word`` exceeds the threshold, else ``None``:
        :func:`first_similar_by` of this similarity, answered from the vectors (remembered per word and list)."""
        key = (word, tuple(words))
        if key in self._first:
            return self._first[key]
        positions = self._positions.get(key[1])
        if positions is None:
            import numpy as np

            positions = self._positions[key[1]] = (np.array([self._index[other] for other in key[1]], dtype=np.intp)
                                                   if all(map(self._read, key[1])) else False)
        if positions is False or not self._read(word):
            found = first_similar_by(self)(word, words)
        elif not len(positions):  # type: ignore[arg-type]  # an array here: False was handled above
            found = None
        else:
            similar = self._row(word)[positions]
            first = int(similar.argmax())
            found = first if similar[first] else None
        self._first[key] = found
        return found

    def _read(self, word: str) -> bool:
        """Read what spaCy's similarity reads of ``word``'s document into the index: its vector, the vector's norm and
        its tokens' vector keys (equal keys mean similarity 1). False where a pipeline hook changes them."""
        if word in self._index:
            return True
        if word in self._hooked:
            return False
        import numpy as np

        doc = self.doc(word)
        if doc.user_hooks or doc.user_token_hooks or doc.user_span_hooks:
            self._hooked.add(word)
            return False
        vector, count = np.asarray(doc.vector, dtype=np.float64), len(self._index)
        if self._matrix is None:
            self._matrix, self._norms = np.zeros((64, len(vector))), np.zeros(64)
        elif count == len(self._matrix):
            self._matrix = np.concatenate([self._matrix, np.zeros_like(self._matrix)])
            self._norms = np.concatenate([self._norms, np.zeros_like(self._norms)])
        self._matrix[count], self._norms[count] = vector, doc.vector_norm
        self._keys.append(tuple(doc.to_array([doc.vocab.vectors.attr]).tolist()) if len(doc) else ())
        self._index[word] = count
        return True

    def _row(self, word: str) -> Any:
        """Whether ``word`` is similar to each indexed word, in index order (extended to the words indexed since)."""
        import numpy as np

        row = self._rows.get(word)
        if row is None or len(row) < len(self._index):
            start = 0 if row is None else len(row)
            decided = self._decide(word, start)
            row = self._rows[word] = decided if row is None else np.concatenate([row, decided])
        return row

    def _decide(self, word: str, start: int) -> Any:
        """Whether ``word`` is similar to each indexed word from ``start`` on."""
        import numpy as np

        own, count = self._index[word], len(self._index)
        vector, norm, keys = self._matrix[own], self._norms[own], self._keys[own]
        norms = self._norms[start:count]
        with np.errstate(divide="ignore", invalid="ignore"):
            cosines = (self._matrix[start:count] @ vector) / (norms * norm)
        # spaCy's exact answers: 0 where a vector is empty, and 1 for documents of equal tokens.
        empty = (norms == 0) | (norm == 0)
        same = np.array([other == keys for other in self._keys[start:count]], dtype=bool)
        cosines[empty] = 0.0
        cosines[same] = 1.0
        similar = cosines > self.threshold
        # spaCy sums the product in the vectors' float32: its value lies within this of the float64 cosine.
        margin = (len(vector) + 8) * 2.0 ** -21
        close = np.flatnonzero(~empty & ~same & (np.abs(cosines - self.threshold) <= margin)).tolist()
        if close:
            words = list(self._index)
            for position in close:
                similar[position] = self(word, words[start + position])
        return similar


# --------------------------------------------------------------------------- the scorer



class AmberScorer(CaptionScorer):
    """AMBER's generative evaluation of image descriptions: CHAIR (the primary column), Cover, Hal and Cog, in percent.

    Each description names its AMBER image through ``images=`` (an id, ``"AMBER_12"``, ``"AMBER_12.jpg"`` or a path).
    The corpus values are ratios of sums over the call, as ``inference.py`` prints them; the per-caption columns are
    each description's own ratios (0 where it has nothing to count). Shards merge exactly: the sufficient statistics
    are ``inference.py``'s counters, summed.
    """

    metric, title = "amber", "AMBER"
    default_models = "AMBER's annotation files (downloaded once), NLTK's tagger and WordNet, spaCy `en_core_web_lg`"
    faithful_to = ("AMBER's `inference.py` (generative task): each description's counters and the printed CHAIR, "
                   "Cover, Hal and Cog")
    inputs_note = "the image is its AMBER id"
    image_id_example = "AMBER_1"
    name = primary = "amber_chair"
    hash_name = "amber"
    column_names = COLUMNS
    needs_references = False
    needs_images = True
    higher_is_better = False
    value_range = (0.0, 100.0)
    merge = MERGE_SUM
    extras = ("amber",)
    needs = (*(UrlFile(released_url(name), f"sha256:{digest}", what=f"AMBER {name}") for name, digest in AMBER_FILES.items()),
             NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET,
             SpacyWheel(SPACY_WHEEL, f"sha256:{SPACY_WHEEL_SHA256}", what=f"spaCy's {DEFAULT_SPACY_MODEL}", pipeline=DEFAULT_SPACY_MODEL))

    def __init__(self, *,
                 data_dir: Annotated[str | None, Opt("AMBER's data/ folder (annotations.json, relation.json, safe_words.txt, "
                                                     "metrics.txt); None: the released files, downloaded once")] = None,
                 spacy_model: Annotated[str, Opt("spaCy pipeline (name or folder) of the word similarity")] = DEFAULT_SPACY_MODEL,
                 similarity_threshold: Annotated[float, Opt("a word counts as similar above this spaCy similarity "
                                                            "(inference.py's --similarity_score)", within="[-1, 1]")] = DEFAULT_SIMILARITY,
                 rounded: Annotated[bool, Opt("round the corpus values to one decimal, as inference.py prints them")] = True):
        if data_dir is not None and (not isinstance(data_dir, (str, os.PathLike)) or not str(data_dir)):
            raise ValueError(f"data_dir must be a folder path or None, got {data_dir!r}")
        if not isinstance(spacy_model, (str, os.PathLike)) or not str(spacy_model):
            raise ValueError(f"spacy_model must be a spaCy pipeline name or folder, got {spacy_model!r}")
        self.data_dir = None if data_dir is None else os.fspath(data_dir)
        self.similarity = SpacySimilarity(os.fspath(spacy_model), similarity_threshold)
        self.rounded = rounded
        self.nouns = NounExtractor()

    def files(self) -> dict[str, Path]:
        return data_files(self.data_dir)

    def data(self) -> AmberData:
        """AMBER's data files (read once per process and content: files rewritten on disk are read again)."""
        files = self.files()
        return cached(("amber-data", content_key(list(files.values()))), lambda: AmberData.load(files))

    def counts(self, predictions: Sequence[str], images: Sequence[Any] | None, *, batch_size: int | None = None,
               show_progress: bool | None = None) -> list[AmberCounts]:
        """Each description's :class:`AmberCounts` (``batch_size`` descriptions tagged together, default 1024)."""
        if images is None:
            raise ValueError("AMBER needs each description's AMBER image: pass images=[id, ...] (12, 'AMBER_12', "
                             "'AMBER_12.jpg' or a path), one per prediction")
        ids = [amber_id(image, index) for index, image in enumerate(images)]
        data = self.data()
        entries = []
        for index, image_id in enumerate(ids):
            try:
                entries.append(data.entry(image_id))
            except KeyError as error:
                raise ValueError(f"images[{index}]: {error.args[0]}") from None
        size = batch_size or TEXTS_PER_BATCH
        nouns = [found for start in progress(range(0, len(predictions), size), desc="AMBER", show=show_progress)
                 for found in self.nouns(predictions[start:start + size])]
        return [match_objects(vocabulary_objects(found, data.vocabulary), entry, data, self.similarity.first_similar)
                for found, entry in zip(nouns, entries)]

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        counts = self.counts(predictions, images, batch_size=batch_size, show_progress=show_progress)
        rows = [caption_values(c) for c in counts]
        statistics = [c.statistics() for c in counts]
        return Scores({name: [row[name] for row in rows] for name in COLUMNS},
                      corpus=self.corpus_from_sufficient_statistics(statistics),
                      details={"amber_objects": [list(c.objects) for c in counts],
                               "amber_hallucinated": [list(c.hallucinated) for c in counts]},
                      sufficient_statistics=statistics)

    def corpus_from_sufficient_statistics(self, statistics) -> dict[str, float]:
        sums = [sum(column) for column in zip(*statistics)] if statistics else [0] * len(COUNTERS)
        return corpus_values(sums, self.data().initial, rounded=self.rounded)

    def options(self) -> dict:
        if self.data_dir is None:  # the download is checked against the released files' SHA-256
            data = f"released@{AMBER_COMMIT[:7]}"
        else:
            try:
                data = data_id(self.files())
            except AmberDataError:  # scoring says what is missing; the options still name the folder
                data = Path(self.data_dir).name
        return {"data": data, "spacy_model": model_id(self.similarity.model), "similarity_threshold": self.similarity.threshold,
                "rounded": self.rounded}
