"""CAPTURE (Dong, Li, Wu, Wang, Zhang & Guo, "Benchmarking and Improving Detail Image Caption", 2024): F-scores of
the objects, attributes and relations two captions mention, matched exactly, by WordNet synonymy, then softly.

As ``capture-metric`` 0.1.13 computes it (``CAPTURE().compute_score(gts, preds)``), for each text:

1. sentences by NLTK's ``sent_tokenize`` (:mod:`capeval.text.english`); each parsed by the FACTUAL scene-graph parser
   (:mod:`capeval.text.scene_graph`);
2. elements (:func:`merge_graphs`): every entity head lemmatized as a noun (WordNet, :mod:`capeval.text.wordnet`)
   is an object; its attributes, lemmatized as adjectives, are attribute words (those containing ``" of"`` dropped);
   relations are (subject head, relation, object head) with both heads lemmatized, the relation as written;
3. filtering (:func:`keep_mentioned`): an object, an attribute's object, a relation's subject and object must be a
   noun of the text (NLTK ``word_tokenize`` + ``pos_tag`` of every text together, tags ``NN*``, lemmatized) or made of
   such nouns; objects in
   CAPTURE's 317 stop words (``"background"``, ``"image"``, ``"red"``, ...) are dropped, attributes and relations
   are not checked against them.

Then for the candidate and each reference, per kind (objects; the attribute words of all objects, as one list;
relations), :func:`greedy_match` pairs elements first by equality, then by synonymy (:func:`synonymous`: either
string contains the other, or their WordNet synsets share a lemma name; for relations all three parts), each
candidate taking the first free reference in order; the rest are matched softly: with E the L2-normalised
sentence embeddings (all-mpnet-base-v2, mean pooling) of the unmatched candidates and references, the candidate side
adds the sum of each row's maximum of E_cand·E_refᵀ, the reference side each column's. Precision = candidate side
/ (#candidate + ε), recall = reference side / (#reference + ε), F1 = 2PR / (P + R + ε), ε = 1e-6, and

    CAPTURE = (α·F1_object + β·F1_attribute + γ·F1_relation) / (α + β + γ),   α = β = 0.5, γ = 0.2,

averaged over the references of the caption; the corpus value is the mean over captions.

The package parses caption by caption in a process per GPU and re-encodes phrases for every pair; here every
sentence of the call is parsed in length-sorted batches on one device, each distinct phrase encoded once, and
WordNet look-ups cached. The package iterates Python sets (the objects, the attribute words of each object, the
relations), so the order in which greedy matching visits them, and in rare cases the synonym matches and the score,
change with ``PYTHONHASHSEED``; capeval visits them in the order the sorted graph facts first mention them.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Sequence

import numpy as np

from ..declaration import Opt
from ..finite import unit_rows
from ..needs import NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET, HubModel
from ..inputs import path_option
from ..models import local_config, model_id, resolve_device
from ..text.english import pos_tag_texts, sent_tokenize
from ..text.scene_graph import RELEASES, SceneGraph, SceneGraphParser, graph_from_text
from ..text.stopwords import stopwords
from ..text.wordnet import ADJECTIVE, NOUN, wordnet
from .options import Device
from .protocol import CaptionScorer, Scores

DEFAULT_PARSER = "lizhuang144/flan-t5-base-VG-factual-sg"
DEFAULT_ENCODER = "sentence-transformers/all-mpnet-base-v2"
#: The package's ``eps``: added to every denominator.
EPS = 1e-6
KINDS = ("object", "attribute", "relation")
MEASURES = ("precision", "recall", "f1")
COLUMNS = ("capture", *(f"capture_{kind}_{measure}" for kind in KINDS for measure in MEASURES))
#: Phrases per encoder batch.
ENCODER_BATCH_SIZE = 256


Relation = tuple[str, str, str]


@dataclass(frozen=True)
class Elements:
    """What CAPTURE compares of one text: objects, the attribute words of each object, relations; each in the order
    of first mention, without repeats."""

    objects: tuple[str, ...] = ()
    attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    relations: tuple[Relation, ...] = ()

    def attribute_words(self) -> list[str]:
        """The attribute words of every object, object after object (a word can repeat across objects)."""
        return [word for _, words in self.attributes for word in words]

    def as_dict(self) -> dict[str, Any]:
        return {"objects": list(self.objects), "attributes": {obj: list(words) for obj, words in self.attributes},
                "relations": [list(relation) for relation in self.relations]}


def merge_graphs(graphs: Sequence[SceneGraph], lemmatizer: Callable[[str, str], str]) -> Elements:
    """The objects, attributes and relations of a text's sentence graphs (step 2 of the module docstring), before
    the noun filter.

    >>> from capeval.text.scene_graph import graph_from_text
    >>> lemmas = {("dogs", "n"): "dog", ("browner", "a"): "brown"}
    >>> elements = merge_graphs([graph_from_text("( dogs , is , browner ) , ( dogs , on , grass )"),
    ...                          graph_from_text("( dog , is , full of joy ) , ( dog , is , wet )")],
    ...                         lambda word, pos: lemmas.get((word, pos), word))
    >>> elements.objects, elements.attributes, elements.relations
    (('dog', 'grass'), (('dog', ('brown', 'wet')),), (('dog', 'on', 'grass'),))
    """
    objects: dict[str, None] = {}
    attributes: dict[str, dict[str, None]] = {}
    relations: dict[Relation, None] = {}
    for graph in graphs:
        heads = [lemmatizer(entity.head, NOUN) for entity in graph.entities]
        for head, entity in zip(heads, graph.entities):
            objects[head] = None
            for attribute in entity.attributes:
                word = lemmatizer(attribute, ADJECTIVE)
                if " of" not in word:
                    attributes.setdefault(head, {})[word] = None
        for subject, relation, obj in graph.relations:
            relations[(heads[subject], relation, heads[obj])] = None
    return Elements(tuple(objects), tuple((head, tuple(words)) for head, words in attributes.items()), tuple(relations))


def is_mentioned(phrase: str, nouns: frozenset[str] | set[str]) -> bool:
    """Whether ``phrase`` is one of the text's nouns or every space-separated piece of it is.

    >>> nouns = {"clock", "tower", "dog"}
    >>> is_mentioned("dog", nouns), is_mentioned("clock tower", nouns), is_mentioned("dog house", nouns)
    (True, True, False)
    """
    return phrase in nouns or all(piece in nouns for piece in phrase.split(" "))


def keep_mentioned(elements: Elements, nouns: frozenset[str] | set[str], stop_words: frozenset[str]) -> Elements:
    """``elements`` without what the text does not mention as nouns, and without stop-word objects (step 3).

    >>> elements = Elements(("dog", "background", "ghost"), (("background", ("blurry",)), ("ghost", ("pale",))),
    ...                     (("dog", "on", "grass"), ("dog", "in", "background")))
    >>> kept = keep_mentioned(elements, {"dog", "background", "grass"}, frozenset({"background"}))
    >>> kept.objects, kept.attributes, kept.relations
    (('dog',), (('background', ('blurry',)),), (('dog', 'on', 'grass'), ('dog', 'in', 'background')))
    """
    return Elements(tuple(obj for obj in elements.objects if obj not in stop_words and is_mentioned(obj, nouns)),
                    tuple((obj, words) for obj, words in elements.attributes if is_mentioned(obj, nouns)),
                    tuple(r for r in elements.relations if is_mentioned(r[0], nouns) and is_mentioned(r[2], nouns)))


def synonymous(first: str, second: str, lemmas: Callable[[str], frozenset[str]]) -> bool:
    """The package's synonym test (``compute_synonyms_score(a, b) > 0``): one string contains the other, or the
    WordNet lemma names of the two (spaces joined by ``_``) intersect.

    >>> names = {"car": frozenset({"car", "auto"}), "automobile": frozenset({"auto", "automobile"})}
    >>> lookup = lambda word: names.get(word, frozenset())
    >>> synonymous("car", "automobile", lookup), synonymous("man", "woman", lookup), synonymous("car", "bus", lookup)
    (True, True, False)
    """
    if first in second or second in first:
        return True
    return bool(lemmas("_".join(first.split())) & lemmas("_".join(second.split())))


@dataclass(frozen=True)
class Match:
    """The outcome of :func:`greedy_match`: how many pairs, and the unmatched indices of each side in order."""

    count: int
    candidates_left: tuple[int, ...]
    references_left: tuple[int, ...]


def greedy_match(candidates: Sequence[Any], references: Sequence[Any], synonym: Callable[[Any, Any], bool] | None = None) -> Match:
    """Pairs each candidate, in order, with the first reference not yet taken that equals it; then, with ``synonym``,
    each candidate still alone with the first free reference it is a synonym of.

    >>> greedy_match(["dog", "cat", "car"], ["car", "puppy", "dog", "dog"], lambda a, b: {a, b} == {"cat", "puppy"})
    Match(count=3, candidates_left=(), references_left=(3,))
    >>> greedy_match(["dog", "dog"], ["dog"])
    Match(count=1, candidates_left=(1,), references_left=())
    """
    taken_candidates: set[int] = set()
    taken_references: set[int] = set()
    for test in ((lambda a, b: a == b), synonym):
        if test is None:
            continue
        for i, candidate in enumerate(candidates):
            if i in taken_candidates:
                continue
            for j, reference in enumerate(references):
                if j not in taken_references and test(candidate, reference):
                    taken_candidates.add(i)
                    taken_references.add(j)
                    break
    return Match(len(taken_candidates), tuple(i for i in range(len(candidates)) if i not in taken_candidates),
                 tuple(j for j in range(len(references)) if j not in taken_references))


def soft_totals(similarities: np.ndarray) -> tuple[float, float]:
    """The soft matches of the unmatched elements: the sum of each candidate's best similarity (rows) and of each
    reference's (columns), summed in float32 as the package's numpy does.

    >>> soft_totals(np.array([[0.5, 0.25], [0.75, 0.0]], dtype=np.float32))
    (1.25, 1.0)
    """
    return float(np.max(similarities, axis=1).sum()), float(np.max(similarities, axis=0).sum())


def precision_recall_f1(candidate_match: float, reference_match: float, candidates: int, references: int) -> tuple[float, float, float]:
    """P = candidate side / (#candidates + ε), R = reference side / (#references + ε), F1 = 2PR / (P + R + ε).

    >>> [round(v, 9) for v in precision_recall_f1(2.0, 2.0, 4, 2)]
    [0.499999875, 0.9999995, 0.666666]
    >>> precision_recall_f1(0, 0, 0, 0)
    (0.0, 0.0, 0.0)
    """
    precision, recall = candidate_match / (candidates + EPS), reference_match / (references + EPS)
    return precision, recall, 2 * precision * recall / (precision + recall + EPS)


def capture_value(f1: Sequence[float], alpha: float, beta: float, gamma: float) -> float:
    """(α·F1_object + β·F1_attribute + γ·F1_relation) / (α + β + γ).

    >>> round(capture_value([1.0, 0.5, 0.0], 0.5, 0.5, 0.2), 6)
    0.625
    """
    return (alpha * f1[0] + beta * f1[1] + gamma * f1[2]) / (alpha + beta + gamma)


# ------------------------------------------------------------------------------------------------ NLTK's text analysis

def text_nouns(tagged: Sequence[tuple[str, str]], lemmatizer: Callable[[str, str], str]) -> frozenset[str]:
    """The lemmas of the words tagged as nouns (``NN``, ``NNS``, ``NNP``, ``NNPS``).

    >>> sorted(text_nouns([("Dogs", "NNS"), ("run", "VBP"), ("parks", "NNS")], lambda w, pos: w.rstrip("s")))
    ['Dog', 'park']
    """
    return frozenset(lemmatizer(word, NOUN) for word, tag in tagged if tag.startswith("NN"))


# ----------------------------------------------------------------------------------------------------- phrase encoder

def check_mean_pooling(name_or_path: str) -> None:
    """A local sentence-transformers folder must pool by the mean of its tokens (what the encoder computes here)."""
    if local_config(name_or_path) is None:
        return
    pooling = Path(name_or_path).expanduser() / "1_Pooling" / "config.json"
    if pooling.is_file():
        modes = {key for key, value in json.loads(pooling.read_text(encoding="utf-8")).items() if key.startswith("pooling_mode") and value}
        if modes != {"pooling_mode_mean_tokens"}:
            raise ValueError(f"encoder_model={name_or_path!r} pools with {sorted(modes)}; CAPTURE's encoder pools by the mean "
                             "of its token embeddings (pooling_mode_mean_tokens)")


class PhraseEncoder:
    """Sentence embeddings as sentence-transformers computes them for a mean-pooling model: the mean of the last
    hidden states over every token (special tokens included), L2-normalised; each distinct phrase encoded once."""

    def __init__(self, name_or_path: str, *, device: Any = None):
        from ..text.encoder import get_text_encoder

        self.name_or_path = str(name_or_path)
        self.encoder = get_text_encoder(self.name_or_path, device=device)

    def embed(self, phrases: Sequence[str], *, batch_size: int | None = None, show_progress: bool | None = None) -> np.ndarray:
        """One float32 unit row per phrase."""
        if not phrases:
            return np.zeros((0, 0), dtype=np.float32)
        encoded = self.encoder.encode(list(phrases), batch_size=batch_size or ENCODER_BATCH_SIZE, show_progress=show_progress)
        # encode() is asked for hidden states, so every sequence carries them.
        means = np.stack([sequence.hidden.mean(dim=0).numpy() for sequence in encoded]).astype(np.float32)  # type: ignore[union-attr]
        return unit_rows(means, items=phrases, what="phrase embeddings", model=self.name_or_path)


# ---------------------------------------------------------------------------------------------------------- the scorer

@dataclass
class _KindPair:
    """One kind of element of one (candidate, reference) pair: counts, exact+synonym matches and what is left."""

    candidates: int
    references: int
    matched: int
    candidates_left: list[str]
    references_left: list[str]


class CaptureScorer(CaptionScorer):
    """CAPTURE, equal to ``capture-metric`` 0.1.13 (see the module docstring).

    Options: ``parser_model`` and ``encoder_model`` (hub ids or folders), ``alpha``/``beta``/``gamma`` (the F1
    weights; α + β must be 1, as the package asserts), ``synonym_matching``, ``soft_matching``, ``stop_words`` (the
    package's switches), ``factual_version`` (the parser-input truncation of FactualSceneGraph 0.5 or 0.7,
    :mod:`capeval.text.scene_graph`) and ``device``. Needs NLTK's punkt and tagger data and WordNet
    (:func:`require_language_data`).

    The steps are methods, each over every text of a call: :meth:`analyze` (sentences and nouns), :meth:`elements`
    (parse, merge, filter) and :meth:`compare`.
    """

    metric, title = "capture", "CAPTURE"
    default_models = ("FACTUAL parser `lizhuang144/flan-t5-base-VG-factual-sg`, "
                      "`sentence-transformers/all-mpnet-base-v2`, WordNet 3.0")
    faithful_to = ("`capture-metric` 0.1.13 stage by stage (graphs, elements, matches, scores) with FactualSceneGraph "
                   "0.5.0 or 0.7.3, to 1e-6")
    name = primary = "capture"
    column_names = COLUMNS
    extras = ("models", "capture")
    system_packages = ("wordnet-base",)
    needs = (NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET, HubModel(DEFAULT_PARSER), HubModel(DEFAULT_ENCODER))

    def __init__(self, *, parser_model: Annotated[str, Opt("hub id or folder of the FACTUAL scene-graph parser (a T5)", check=path_option)] = DEFAULT_PARSER,
                 encoder_model: Annotated[str, Opt("hub id or folder of the sentence encoder of soft matching (mean pooling)",
                                                          check=path_option)]
                 = DEFAULT_ENCODER,
                 alpha: Annotated[float, Opt("weight of the object F1; alpha + beta must be 1", within="[0, 1]")] = 0.5,
                 beta: Annotated[float, Opt("weight of the attribute F1", within="[0, 1]")] = 0.5,
                 gamma: Annotated[float, Opt("weight of the relation F1", within="[0, inf)")] = 0.2,
                 synonym_matching: Annotated[bool, Opt("match WordNet synonyms (and strings containing each other) after "
                                                       "exact matches")] = True,
                 soft_matching: Annotated[bool, Opt("match what is left by sentence-embedding similarity")] = True,
                 stop_words: Annotated[bool, Opt("drop objects in CAPTURE's 317 stop words (background, image, ...)")] = True,
                 factual_version: Annotated[str, Opt("parser input as FactualSceneGraph 0.5 cut it (the release CAPTURE was "
                                                     "published with) or as 0.7 (today's install: the longest sentence of each "
                                                     "batch loses its last piece)", choices=RELEASES)] = "0.5",
                 device: Device = None):
        self.parser_model = parser_model
        self.encoder_model = encoder_model
        check_mean_pooling(self.encoder_model)
        self.alpha, self.beta = alpha, beta
        if abs(self.alpha + self.beta - 1.0) > 1e-9:
            raise ValueError(f"alpha + beta must be 1 (CAPTURE's object and attribute weights share 1), got {alpha} + {beta}")
        self.gamma = gamma
        self.synonym_matching = synonym_matching
        self.soft_matching = soft_matching
        self.stop_words = stopwords("capture") if stop_words else frozenset()
        self.factual_version = factual_version
        self.device = resolve_device(device)

    def options(self) -> dict[str, Any]:
        return {"parser_model": model_id(self.parser_model), "encoder_model": model_id(self.encoder_model), "alpha": self.alpha,
                "beta": self.beta, "gamma": self.gamma, "synonym_matching": self.synonym_matching,
                "soft_matching": self.soft_matching, "stop_words": bool(self.stop_words), "factual_version": self.factual_version}

    # The steps.

    @staticmethod
    def analyze(texts: Sequence[str]) -> tuple[list[list[str]], list[frozenset[str]]]:
        """Per text: its sentences and its nouns (lemmatized)."""
        lemmatize = wordnet().lemmatize
        return [sent_tokenize(text) for text in texts], [text_nouns(tagged, lemmatize) for tagged in pos_tag_texts(texts)]

    def elements(self, texts: Sequence[str], *, batch_size: int | None = None, show_progress: bool | None = None) -> list[Elements]:
        """Per text: the elements CAPTURE compares (steps 1 to 3)."""
        sentences, nouns = self.analyze(texts)
        parser = SceneGraphParser(self.parser_model, release=self.factual_version, device=self.device)
        graphs = parser.parse(sentences, batch_size=batch_size, show_progress=show_progress)
        lemmatize = wordnet().lemmatize
        return [keep_mentioned(merge_graphs([graph_from_text(g) for g in text_graphs], lemmatize), text_nouns_, self.stop_words)
                for text_graphs, text_nouns_ in zip(graphs, nouns)]

    def _match_kind(self, candidates: Sequence[Any], references: Sequence[Any], synonym: Callable[[Any, Any], bool]) -> _KindPair:
        match = greedy_match(candidates, references, synonym if self.synonym_matching else None)
        return _KindPair(len(candidates), len(references), match.count,
                         [_phrase(candidates[i]) for i in match.candidates_left], [_phrase(references[j]) for j in match.references_left])

    def match_pair(self, candidate: Elements, reference: Elements) -> list[_KindPair]:
        """Objects, attribute words and relations of one (candidate, reference) pair, matched exactly and by synonyms."""
        words = functools.partial(synonymous, lemmas=wordnet().lemma_names)
        return [self._match_kind(candidate.objects, reference.objects, words),
                self._match_kind(candidate.attribute_words(), reference.attribute_words(), words),
                self._match_kind(candidate.relations, reference.relations, lambda a, b: all(map(words, a, b)))]

    def _soft(self, kind: _KindPair) -> bool:
        """Whether the kind of a pair is matched softly: switched on, and something left on both sides."""
        return self.soft_matching and bool(kind.candidates_left) and bool(kind.references_left)

    def compare(self, candidates: Sequence[Elements], references: Sequence[Sequence[Elements]], *,
                batch_size: int | None = None, show_progress: bool | None = None) -> list[list[list[float]]]:
        """Per caption, per reference: CAPTURE and the P/R/F1 of objects, attributes and relations (the package's
        ``compute_f_score``), the soft matches of every pair from one encoding of the distinct phrases."""
        pairs = [[self.match_pair(cand, ref) for ref in refs] for cand, refs in zip(candidates, references)]
        kinds = [kind for per_caption in pairs for per_ref in per_caption for kind in per_ref]
        phrases = list(dict.fromkeys(p for kind in kinds if self._soft(kind) for p in kind.candidates_left + kind.references_left))
        row = {phrase: i for i, phrase in enumerate(phrases)}
        embeddings = (PhraseEncoder(self.encoder_model, device=self.device).embed(phrases, batch_size=batch_size, show_progress=show_progress)
                      if phrases else None)
        results = []
        for per_caption in pairs:
            values = []
            for per_ref in per_caption:
                measures: list[float] = []
                for kind in per_ref:
                    candidate_match = reference_match = float(kind.matched)
                    if embeddings is not None and self._soft(kind):
                        similarities = embeddings[[row[p] for p in kind.candidates_left]] @ embeddings[[row[p] for p in kind.references_left]].T
                        candidate_soft, reference_soft = soft_totals(similarities)
                        candidate_match, reference_match = candidate_match + candidate_soft, reference_match + reference_soft
                    measures += precision_recall_f1(candidate_match, reference_match, kind.candidates, kind.references)
                values.append([capture_value(measures[2::3], self.alpha, self.beta, self.gamma), *measures])
            results.append(values)
        return results

    def score(self, predictions: list[str], references: list[list[str]] | None = None, *, images: list | None = None,
              region_features: list | None = None, batch_size: int | None = None, show_progress: bool | None = None) -> Scores:
        """CAPTURE per caption and its nine components (each the mean over the caption's references), with
        ``details["elements"]``: the candidate's objects, attributes and relations. ``batch_size``: sentences per
        generation batch (default 16 on CPU, 256 on GPU) and phrases per encoder batch (default 256)."""
        if references is None:
            raise ValueError("CAPTURE compares a caption with its references: pass references=[...] (one list per caption)")
        texts = list(dict.fromkeys([*predictions, *(r for refs in references for r in refs)]))
        elements = dict(zip(texts, self.elements(texts, batch_size=batch_size, show_progress=show_progress)))
        values = self.compare([elements[p] for p in predictions], [[elements[r] for r in refs] for refs in references],
                              batch_size=batch_size, show_progress=show_progress)
        means = [np.mean(np.asarray(per_ref, dtype=np.float64), axis=0) for per_ref in values]
        columns = {name: [float(m[k]) for m in means] for k, name in enumerate(COLUMNS)}
        return Scores(columns, details={"elements": [elements[p].as_dict() for p in predictions]})


def _phrase(element: str | Relation) -> str:
    """An element as the encoder reads it: a relation's three parts joined by spaces."""
    return element if isinstance(element, str) else " ".join(element)
