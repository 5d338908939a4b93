"""The one protocol every capeval scorer follows.

A scorer holds its options (validated when it is built) and its models (loaded on the first
``score`` call, from capeval's process-wide cache). It answers two questions:

* ``score(predictions, references=None, *, images=None, region_features=None, batch_size=None,
  show_progress=None)`` — one list per output column, one value per caption, in input order,
  returned as :class:`Scores` (a ``dict[str, list[float]]`` that also carries the corpus values);
* ``provenance()`` — what produced the scores: the metric, its models (by id, never by an absolute
  local path), options and the library versions.

A scorer whose per-caption scores depend on the whole call (``corpus_dependent``: CIDEr-D's document
frequencies, BERT-TBR's IDF) also splits into two steps, so that shards of a corpus can be scored
apart and still give the numbers of the whole: ``count_document_frequencies(predictions, references)``
counts document frequencies that add up over shards (``DocumentFrequencies.merge``), and
``with_document_frequencies(merged)`` is a copy that scores with those fixed frequencies. Its own ``score``
runs the same two steps over the call's captions.

A scorer's corpus values follow from its parts by one rule (``merge``): the mean of the per-caption values
(``"mean"``), or, from per-caption *sufficient statistics* (``Scores.sufficient_statistics``), their sum
(``"sum"``: BLEU's n-gram counts) or every caption's vector (``"all"``: METEOR's aggregate).

Inputs reach ``score`` already validated (:func:`capeval.inputs.check_inputs`): predictions are a
non-empty list of strings, references one non-empty list of strings per prediction (or ``None`` for a
scorer that needs none), ``images``/``region_features`` ``None`` or one entry per prediction, and
``batch_size`` ``None`` or a positive int.

The evaluate modules in ``metrics/``, the command line, the Spaces and the benchmark harness all go
through this protocol, so a metric is one scorer class here plus a thin module that declares it.
"""

from __future__ import annotations

import abc
import copy
import functools
import inspect
from typing import Any, ClassVar, Mapping, Sequence

import capeval
from capeval.declaration import MERGE_MEAN, OfflineRun, check_declared
from capeval.needs import Need
from capeval.text.idf import DocumentFrequencies


class NotedWarning(UserWarning):
    """A warning whose news the scores' :attr:`Scores.note` also carries: a surface that shows the note (the command
    line) silences it, so the reader gets one plain line."""


class Scores(dict):
    """Per-caption columns (``name -> [value per caption]``) with the corpus values beside them.

    ``corpus`` holds the corpus-level values; a column without one gets its mean. Scorers whose
    corpus value is not a mean (BLEU from summed counts, METEOR's aggregate) pass it explicitly.
    ``details`` holds per-caption values that are not numbers (QACE's questions and answers), and
    ``inputs`` what the call's inputs were (e.g. which region features), for the hashcode.
    ``sufficient_statistics`` holds, for a scorer whose corpus value is not a mean, one vector per caption from
    which the corpus values of any set of captions follow (:meth:`CaptionScorer.corpus_from_sufficient_statistics`):
    BLEU's n-gram counts, METEOR's match statistics. ``note`` is one plain line a reader of these scores must know
    (texts cut to a model's context, scores a penalty took to about 0), '' when there is nothing to say: every
    surface shows it (capeval.evaluate's ``notes``, the command line's summary, the Spaces).

    >>> s = Scores({"f1": [0.5, 1.0]}, corpus={"bleu": 0.3})
    >>> s["f1"], s.corpus
    ([0.5, 1.0], {'bleu': 0.3, 'f1': 0.75})
    """

    def __init__(self, columns: Mapping[str, Sequence[float]], *, corpus: Mapping[str, float] | None = None,
                 details: Mapping[str, Sequence[Any]] | None = None, inputs: Mapping[str, Any] | None = None,
                 sufficient_statistics: Sequence[Sequence[float]] | None = None, note: str = ""):
        super().__init__({name: list(map(float, values)) for name, values in columns.items()})
        lengths = {len(values) for values in self.values()} | {len(values) for values in (details or {}).values()}
        if len(lengths) > 1:
            raise ValueError(f"score columns have different lengths {sorted(lengths)}")
        self.corpus = dict(corpus or {})
        for name, values in self.items():
            if name not in self.corpus and values:
                self.corpus[name] = sum(values) / len(values)
        self.details = {name: list(values) for name, values in (details or {}).items()}
        self.inputs = dict(inputs or {})
        self.note = note
        self.sufficient_statistics = (None if sufficient_statistics is None
                                      else [list(map(float, row)) for row in sufficient_statistics])


def library_versions() -> dict[str, str | None]:
    """capeval's version and those of the libraries that shape model outputs (read from the installed
    distributions, so asking imports none of them)."""
    import importlib.metadata

    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {"capeval": capeval.__version__, **{name: version(name) for name in ("torch", "transformers", "numpy")}}


class CaptionScorer(abc.ABC):
    """Base class of every capeval scorer, and the one declaration of a metric (see the module docstring).

    A scorer class declares everything capeval knows about its metric: the class attributes below, and its
    options as the keyword arguments of ``__init__``, each annotated with an :class:`Opt` (name, type,
    default, valid values, one-line doc). The registry, option checks, hashcodes, the evaluate module's
    features, the cards' option tables, the Spaces, the command line, the harness, the Trainer hook and the
    Ray engine all read this declaration. ``__init__`` validates what ``Opt`` cannot say (so a bad option
    fails when the metric is loaded, not when it first scores); models load lazily.
    """

    #: The registry name: the metric's module folder in ``metrics/`` (e.g. ``"rouge"``).
    metric: ClassVar[str]
    #: The name people print (e.g. ``"ROUGE-L"``).
    title: ClassVar[str]
    #: Result key of the corpus value in the evaluate module's output (e.g. ``"bleu"``, ``"rouge_l"``).
    name: ClassVar[str]
    #: Name used in the hashcode (e.g. ``"cider_d"``); defaults to :attr:`name`.
    hash_name: ClassVar[str | None] = None
    #: The column whose per-caption values are the metric's score (``scores`` in the module's output).
    primary: ClassVar[str]
    #: Every column any configuration may return (:meth:`columns` gives those of this configuration);
    #: ``()`` means just :attr:`primary`.
    column_names: ClassVar[tuple[str, ...]] = ()
    #: Whether ``score`` needs references, and whether it needs images or region features.
    needs_references: bool = True
    needs_images: bool = False
    #: For a scorer that needs images: whether it reads precomputed region features in their place
    #: (``region_features``: the detector features UNITER, ViLBERT and Visual-T5 were trained on).
    reads_region_features: ClassVar[bool] = False
    #: For a scorer that names each image by an id (AMBER's, a COCO image id) rather than reading its pixels: an example
    #: id, which its Space asks for in place of an upload; ``""`` for a scorer that reads pixels or features.
    image_id_example: ClassVar[str] = ""
    #: For a scorer that needs no references: whether it uses them when a call gives some (RefCLIP-S beside CLIP-S).
    references_optional: ClassVar[bool] = False
    #: Whether a prediction's references may all be blank strings.
    blank_references_allowed: ClassVar[bool] = True
    #: Whether a prediction may be an empty or blank string (one that would score from no words at all is refused).
    blank_predictions_allowed: ClassVar[bool] = True
    #: Whether one caption's score depends on the other captions of the call (IDF from the corpus).
    corpus_dependent: bool = False
    higher_is_better: ClassVar[bool] = True
    #: The closed range of the primary column, ``None`` for an unbounded end.
    value_range: ClassVar[tuple[float | None, float | None]] = (0.0, 1.0)
    #: How corpus values follow from parts: ``"mean"`` of the per-caption values; or, from each caption's
    #: ``Scores.sufficient_statistics`` (:meth:`corpus_from_sufficient_statistics`), their element-wise
    #: ``"sum"`` (BLEU: an engine may add shards up on the way) or ``"all"`` the vectors (METEOR's aggregate
    #: is no function of the sums). An engine that scores shards (Ray) reproduces the corpus values exactly.
    merge: ClassVar[str] = MERGE_MEAN
    #: capeval's extras the metric needs beyond the core install (its Space's requirements; a metric whose module
    #: cannot import says to install them: :class:`capeval.registry.MissingExtraError`), e.g. ``("models",)``.
    extras: ClassVar[tuple[str, ...]] = ()
    #: Debian packages the metric needs (its Space's ``packages.txt``), e.g. a Java runtime.
    system_packages: ClassVar[tuple[str, ...]] = ()
    #: What its default configuration needs beyond its extras (:mod:`capeval.needs`: weights at a pinned revision,
    #: data files with their checksums, NLTK's data, a spaCy pipeline, CoreNLP, Java), which ``capeval download``
    #: fetches and ``capeval doctor`` checks.
    needs: ClassVar[tuple[Need, ...]] = ()
    #: The models and data files its default configuration uses (the paper's), as Markdown; ``""`` for none. The metric
    #: tables of the README and the docs show it (``scripts/write_cards.py`` writes them).
    default_models: ClassVar[str] = ""
    #: What its values are checked against (the released code, and how closely), as Markdown, for the same tables.
    faithful_to: ClassVar[str] = ""
    #: What the inputs are beyond what ``needs_references`` and ``needs_images`` say (an image given as an id or as
    #: region features, inputs some options change), as Markdown, for the same tables.
    inputs_note: ClassVar[str] = ""
    #: Configurations that run with nothing to download, for demos, the suite Space and ``capeval score``.
    offline_runs: ClassVar[tuple[OfflineRun, ...]] = ()
    #: Fixed document frequencies to score with (see :meth:`with_document_frequencies`); ``None``: each call's.
    document_frequencies: DocumentFrequencies | None = None

    def __init_subclass__(cls, **kwargs: Any):
        """Every scorer's ``__init__`` receives its options checked and normalized as declared
        (:func:`capeval.declaration.check_declared`), once per construction (not again along the ``super().__init__``
        chain)."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def checked_init(self, *args: Any, **options: Any) -> None:
            if type(self).__init__ is checked_init:  # the class being built uses this __init__: not a super() call
                args, options = check_declared(type(self), args, options)
            init(self, *args, **options)

        cls.__init__ = checked_init  # type: ignore[method-assign]

    @classmethod
    def all_columns(cls) -> tuple[str, ...]:
        """Every column any configuration of this metric may return."""
        return cls.column_names or (cls.primary,)

    def corpus_from_sufficient_statistics(self, statistics: Sequence[Sequence[float]]) -> dict[str, float]:
        """The corpus values of the captions whose ``Scores.sufficient_statistics`` vectors these are (for
        scorers whose ``merge`` is not ``"mean"``; with ``"sum"``, element-wise sums may stand in for them)."""
        raise NotImplementedError(f"{type(self).__name__}'s corpus values are the means of its columns")

    @abc.abstractmethod
    def score(self, predictions: list[str], references: list[list[str]] | None = None, *, images: list | None = None,
              region_features: list | None = None, batch_size: int | None = None, show_progress: bool | None = None) -> Scores:
        """One list per output column, one value per caption (inputs already validated)."""

    @abc.abstractmethod
    def options(self) -> dict[str, Any]:
        """The options that shape the scores, models named by :func:`capeval.models.model_id`."""

    def columns(self) -> tuple[str, ...]:
        """The names of the columns ``score`` returns for this configuration, in order."""
        return self.all_columns()

    def corpus_names(self) -> tuple[str, ...]:
        """The names of the corpus values ``score`` returns for this configuration: its columns', and any other
        (BLEU-1..4 beside BLEU-n)."""
        return self.columns()

    def count_document_frequencies(self, predictions: list[str], references: list[list[str]] | None = None) -> DocumentFrequencies | None:
        """Document frequencies of these captions, which add up over shards of a corpus, for a
        ``corpus_dependent`` scorer; ``None`` for a scorer whose captions score independently."""
        return None

    def with_document_frequencies(self, frequencies: DocumentFrequencies) -> "CaptionScorer":
        """A copy of this scorer that scores every call with ``frequencies`` (those of a whole corpus,
        merged over its shards) in place of the call's own, so its captions score independently."""
        scorer = copy.copy(self)
        scorer.document_frequencies = frequencies
        return scorer

    def provenance(self) -> dict[str, Any]:
        """The metric, its options and models, and the library versions that produced the scores."""
        return {"metric": self.hash_name or self.name, **self.options(), "versions": library_versions()}

    def hashcode(self, scores: Scores | None = None) -> str:
        """A bert_score-style string: metric, options (and the call's inputs), capeval version.

        >>> class Demo(CaptionScorer):
        ...     name, primary = "demo", "demo"
        ...     def score(self, predictions, references=None, **inputs): ...
        ...     def options(self): return {"layer": 8}
        >>> Demo().hashcode(Scores({"demo": [1.0]}, inputs={"features": "butd"}))
        'demo(layer=8,features=butd)_capeval=...'
        """
        parts = {**self.options(), **(scores.inputs if scores is not None else {})}
        body = ",".join(f"{key}={value}" for key, value in parts.items())
        return f"{self.hash_name or self.name}({body})_capeval={capeval.__version__}"


def scorer_options(scorer_class: type[CaptionScorer]) -> list[str]:
    """The keyword arguments ``scorer_class`` takes: a metric's constructor options."""
    parameters = inspect.signature(scorer_class.__init__).parameters.values()
    return [p.name for p in parameters if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def build_checked(scorer_class: type[CaptionScorer], options: Mapping[str, Any], label: str, *,
                  other_options: frozenset[str] = frozenset(), other_label: str = "") -> CaptionScorer:
    """``scorer_class`` built from the options it takes; an option neither it nor ``other_options`` takes
    raises ``TypeError`` naming ``label`` and listing the valid ones (``other_label`` describes the others)."""
    valid = scorer_options(scorer_class)
    unknown = sorted(set(options) - set(valid) - other_options)
    if unknown:
        raise TypeError(f"{label}: unknown option(s) {unknown}; valid options: {valid}{other_label}")
    return scorer_class(**{key: value for key, value in options.items() if key in valid})


def score_checked(scorer: CaptionScorer, predictions: Any, references: Any = None, *, images: Any = None,
                  region_features: Any = None, batch_size: Any = None, show_progress: bool | None = None) -> Scores:
    """Validate a call's inputs for ``scorer`` (:func:`capeval.inputs.check_inputs`) and score them: the one
    validate-and-score path of every surface."""
    from capeval.inputs import check_inputs

    inputs = check_inputs(scorer, predictions, references, images=images, region_features=region_features, batch_size=batch_size)
    return scorer.score(**inputs, show_progress=show_progress)


def shape_result(scorer: CaptionScorer, scores: Scores) -> dict[str, Any]:
    """evaluate's result dict from a scorer's columns (the shape every capeval module returns).

    The primary column gives the corpus value under the scorer's ``name`` and the per-caption list
    ``scores``; every other column keeps its name (a list), corpus values that are not columns (BLEU-1..4)
    are added as floats, ``means`` holds the corpus values of the other columns, per-caption details
    (QACE's questions) keep their names, and ``hashcode`` says what produced the scores.
    """
    primary = scorer.primary
    result: dict[str, Any] = {scorer.name: scores.corpus[primary], "scores": scores[primary]}
    others = [name for name in scores if name != primary]
    result.update({name: scores[name] for name in scores if name != scorer.name})
    result.update({name: value for name, value in scores.corpus.items() if name not in scores and name != scorer.name})
    if others:
        result["means"] = {name: scores.corpus[name] for name in others}
    result.update(scores.details)
    result["hashcode"] = scorer.hashcode(scores)
    return result
