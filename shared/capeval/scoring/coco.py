"""The COCO caption toolkit's metrics (pycocoevalcap 1.2) behind the scorer protocol.

BLEU, ROUGE-L and CIDEr-D run the pure functions of :mod:`capeval.scoring.ngram`; METEOR runs
:mod:`capeval.scoring.meteor` (pure Python, equal to the toolkit's jar) or the jar itself. All four score
PTB-tokenized text (:func:`capeval.text.ptb.tokenize_corpus`).

>>> round(BleuScorer(order=2).score(["a dog runs on the grass"], [["a dog runs on grass", "the dog is running"]]).corpus["bleu"], 4)
0.7746
"""

from __future__ import annotations

import functools
import math
import shutil
from dataclasses import dataclass
from typing import Annotated

from ..declaration import MERGE_ALL, MERGE_SUM, OfflineRun, Opt
from ..models import cached
from ..needs import Need
from ..text.idf import DocumentFrequencies
from ..text.ptb import TOKENIZERS, tokenize_corpus
from ..text.reference_corpus import IDF_SOURCES, reference_sets
from .meteor import aggregate, load_resources, meteor, pycocoevalcap_jar
from .meteor_jar import MeteorProcess, meteor_inputs
from .ngram import bleu_columns, bleu_from_statistics, bleu_statistics, bleu_unsmoothed, cider_d, cider_document_frequencies, rouge_l
from .protocol import CaptionScorer, Scores

#: The ``tokenizer`` option every toolkit metric takes.
Tokenizer = Annotated[str, Opt("PTB tokenization as the toolkit does it: `ptb` (pure Python), `ptb-java` (the CoreNLP jar) "
                               "or `none` (text already tokenized)", choices=TOKENIZERS)]


class CocoScorer(CaptionScorer):
    """A toolkit metric: the ``tokenizer`` option and the tokenization every one of them shares."""

    value_range = (0.0, 1.0)

    def __init__(self, *, tokenizer: Tokenizer = "ptb"):
        self.tokenizer = tokenizer

    def tokenized(self, predictions, references) -> tuple[list[str], list[list[str]]]:
        return tokenize_corpus(predictions, references, self.tokenizer)

    def options(self) -> dict:
        return {"tokenizer": self.tokenizer}


#: Per-caption BLEU: the COCO toolkit's epsilons, or none (NLTK's unsmoothed sentence BLEU).
BLEU_SMOOTHING = ("coco", "none")


class BleuScorer(CocoScorer):
    """BLEU-``order`` per caption; the corpus values are BLEU-1..4 from summed counts (``bleu_1`` … ``bleu_4``).

    ``smoothing="coco"`` (default) adds the toolkit's epsilons to every precision; ``"none"`` scores a caption
    0 when one of its n-gram precisions is 0 (NLTK's unsmoothed ``sentence_bleu``, which BERT-TBR's baseline
    BLEU-4 needs). The corpus values always come from summed counts.
    """

    metric, title = "bleu", "BLEU"
    faithful_to = "pycocoevalcap 1.2 (PTB tokenization in pure Python), to 1e-9"
    name = primary = "bleu"
    merge = MERGE_SUM
    offline_runs = (OfflineRun("BLEU-4"),)

    def __init__(self, order: Annotated[int, Opt("which BLEU-n fills `scores` and the corpus value `bleu`", choices=(1, 2, 3, 4))] = 4,
                 *, tokenizer: Tokenizer = "ptb",
                 smoothing: Annotated[str, Opt("per-caption BLEU: `coco` (the toolkit's tiny epsilons) or `none` (a zero n-gram "
                                               "precision gives 0, as NLTK's sentence BLEU)", choices=BLEU_SMOOTHING)] = "coco"):
        self.order = order
        self.smoothing = smoothing
        super().__init__(tokenizer=tokenizer)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        statistics = bleu_statistics(*self.tokenized(predictions, references), n=4)
        if self.smoothing == "none":
            per_caption = [bleu_unsmoothed(row, self.order) for row in statistics]
        else:
            per_caption = bleu_columns(statistics, 4)[self.order - 1]
        return Scores({"bleu": per_caption}, corpus=self.corpus_from_sufficient_statistics(statistics), sufficient_statistics=statistics)

    def corpus_from_sufficient_statistics(self, statistics) -> dict[str, float]:
        corpus = bleu_from_statistics([sum(column) for column in zip(*statistics)], 4)
        return {"bleu": corpus[self.order - 1], **{f"bleu_{k + 1}": corpus[k] for k in range(4)}}

    def corpus_names(self) -> tuple[str, ...]:
        return ("bleu", "bleu_1", "bleu_2", "bleu_3", "bleu_4")

    def options(self) -> dict:
        # The default is left out so that existing hashcodes stay as they were.
        smoothing = {} if self.smoothing == "coco" else {"smoothing": self.smoothing}
        return {"order": self.order, **smoothing, **super().options()}


class RougeScorer(CocoScorer):
    """ROUGE-L (β = 1.2) per caption; the corpus value is the mean."""

    metric, title = "rouge", "ROUGE-L"
    faithful_to = "pycocoevalcap 1.2, to 1e-9"
    name = primary = "rouge_l"
    offline_runs = (OfflineRun("ROUGE-L"),)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        return Scores({"rouge_l": rouge_l(*self.tokenized(predictions, references))})


#: A caption whose best length penalty is below this scores under 10 × it: CIDEr-D reads 0.00.
NEGLIGIBLE_PENALTY = 1e-3


def length_penalties(candidates: list[str], references: list[list[str]], sigma: float) -> list[float]:
    """Per tokenized caption, the largest Gaussian length penalty exp(−δ²/2σ²) CIDEr-D gives it against one of its
    references, δ the difference of their bigram counts (the toolkit's "length"); its CIDEr-D is at most 10 × this.

    >>> [round(p, 4) for p in length_penalties(["a dog runs", "a dog " * 20], [["a dog", "a dog runs fast"], ["a dog"]], 6.0)]
    [0.9862, 0.0]
    """
    def bigrams(text: str) -> int:
        return max(0, len(text.split()) - 1)

    return [max(math.exp(-((bigrams(candidate) - bigrams(reference)) ** 2) / (2 * sigma ** 2)) for reference in refs)
            for candidate, refs in zip(candidates, references)]


def length_penalty_note(penalties: list[float], sigma: float) -> str:
    """The scores' note when some caption's length alone keeps its CIDEr-D under 10 × :data:`NEGLIGIBLE_PENALTY`.

    >>> length_penalty_note([0.9, 1e-5], 6.0)
    'CIDEr-D: 1 of 2 captions differ in length from each of their references by 23 or more words: the length penalty exp(-δ²/2σ²), σ = 6, keeps their scores under 0.01 (see the card)'
    """
    cut = sum(penalty < NEGLIGIBLE_PENALTY for penalty in penalties)
    if not cut:
        return ""
    words = math.floor(sigma * math.sqrt(2 * math.log(1 / NEGLIGIBLE_PENALTY))) + 1
    return (f"CIDEr-D: {cut} of {len(penalties)} captions differ in length from each of their references by {words} or more "
            f"words: the length penalty exp(-δ²/2σ²), σ = {sigma:g}, keeps their scores under {10 * NEGLIGIBLE_PENALTY:g} "
            "(see the card)")


class CiderScorer(CocoScorer):
    """CIDEr-D per caption. ``idf="corpus"`` (default, as the toolkit): document frequencies from the
    references of the call (or of a whole corpus scored in shards, :meth:`with_document_frequencies`);
    ``idf="flickr8k"``: from the references of the 1,000 Flickr8k test images shipped with capeval
    (:mod:`capeval.text.reference_corpus`), so one caption alone gets a meaningful score.

    >>> one = CiderScorer(idf="flickr8k").score(["a dog runs on the grass"], [["a dog runs on the grass", "a dog plays"]])
    >>> round(one["cider"][0], 4), CiderScorer().score(["a dog runs on the grass"], [["a dog runs on the grass"]])["cider"]
    (5.3083, [0.0])
    >>> refs = [["a dog runs on grass", "the dog is running"], ["a cat sits on a mat", "a cat on a mat"]]
    >>> scorer = CiderScorer()
    >>> whole = scorer.score(["a dog runs on the grass", "a cat on the mat"], refs)["cider"]
    >>> corpus = scorer.count_document_frequencies([], refs[:1]).merge(scorer.count_document_frequencies([], refs[1:]))
    >>> scorer.with_document_frequencies(corpus).score(["a cat on the mat"], refs[1:])["cider"] == whole[1:]
    True
    """

    metric, title = "cider", "CIDEr-D"
    faithful_to = "pycocoevalcap 1.2 (IDF from the scored references), to 1e-9"
    name = primary = "cider"
    hash_name = "cider_d"
    value_range = (0.0, 10.0)
    offline_runs = (OfflineRun("CIDEr-D"),)

    def __init__(self, *, tokenizer: Tokenizer = "ptb",
                 sigma: Annotated[float, Opt("σ of the Gaussian length penalty (6 in the toolkit)", within="(0, inf)")] = 6.0,
                 idf: Annotated[str, Opt("document frequencies from the call's references (`corpus`, the toolkit's) or "
                                         "from a reference corpus shipped with capeval", choices=IDF_SOURCES)] = "corpus"):
        self.sigma = sigma
        self.idf = idf
        super().__init__(tokenizer=tokenizer)

    @property
    def corpus_dependent(self) -> bool:  # type: ignore[override]
        return self.idf == "corpus" and self.document_frequencies is None

    def count_document_frequencies(self, predictions, references=None) -> DocumentFrequencies | None:
        """Document frequencies of the references' n-grams (PTB-tokenized) and the number of items;
        ``None`` when they do not come from the call (``idf="flickr8k"``)."""
        if self.idf != "corpus":
            return None
        return cider_document_frequencies(self.tokenized([], references)[1])

    def fixed_document_frequencies(self) -> DocumentFrequencies | None:
        """The fixed n-gram document frequencies: a whole corpus's (:meth:`with_document_frequencies`) or the shipped
        corpus's under this tokenizer; ``None`` when they come from each call."""
        if self.document_frequencies is not None or self.idf == "corpus":
            return self.document_frequencies
        return shipped_cider_frequencies(self.idf, self.tokenizer)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        candidates, tokenized_references = self.tokenized(predictions, references)
        return Scores({"cider": cider_d(candidates, tokenized_references, sigma=self.sigma, frequencies=self.fixed_document_frequencies())},
                      note=length_penalty_note(length_penalties(candidates, tokenized_references, self.sigma), self.sigma))

    def options(self) -> dict:
        return {"sigma": self.sigma, **super().options(), **({} if self.idf == "corpus" else {"idf": self.idf})}


@functools.lru_cache(maxsize=8)
def shipped_cider_frequencies(corpus: str, tokenizer: str) -> DocumentFrequencies:
    """CIDEr-D document frequencies of a shipped reference corpus, tokenized as the scorer tokenizes (cached)."""
    sets = reference_sets(corpus)
    _, tokenized = tokenize_corpus([""] * len(sets), sets, tokenizer)
    return cider_document_frequencies(tokenized)


JAVA_MISSING = ("METEOR's engine=\"jar\" runs the Java jar of pycocoevalcap and needs a Java runtime (java on PATH, Java 8+); "
                "install one (e.g. apt-get install default-jre-headless) or use the default engine=\"python\"")


def meteor_process() -> MeteorProcess:
    """The METEOR process of this Python process, in capeval's model cache: every METEOR scorer shares it (so
    a scorer pickles without it, e.g. to Ray workers), and a failed call makes it start afresh."""
    if shutil.which("java") is None:
        raise RuntimeError(JAVA_MISSING)
    jar = pycocoevalcap_jar()
    return cached(("meteor-jar", str(jar)), lambda: MeteorProcess(jar))


#: How METEOR is computed: in pure Python, or by pycocoevalcap's jar through Java (equal outputs).
METEOR_ENGINES = ("python", "jar")


@dataclass(frozen=True)
class MeteorTable(Need):
    """METEOR's paraphrase table, built once from pycocoevalcap's jar into capeval's cache (nothing to download)."""

    label: str = "METEOR's paraphrase table (built from the jar)"

    @property
    def source(self) -> str:
        return "built here from pycocoevalcap's meteor-1.5.jar"

    def present(self) -> bool:
        # The build's own check: a table of an older format or a damaged one is not there.
        # Without pycocoevalcap (no jar), readiness counts it absent and names the missing meteor extra.
        from .meteor import paraphrase_table_folder, table_problem

        return table_problem(paraphrase_table_folder()) is None

    def fetch(self) -> None:
        # The one call of METEOR's build: its module owns how the table is built and where it is kept.
        from .meteor import build_paraphrase_table

        build_paraphrase_table()



class MeteorScorer(CocoScorer):
    """METEOR 1.5 as the toolkit's jar computes it; the corpus value is METEOR's aggregate over summed statistics.

    ``engine="python"`` (default) computes it in pure Python (:mod:`capeval.scoring.meteor`), equal to the jar on
    every caption it was compared on, without Java; it reads the jar's word lists, synonyms and paraphrase table
    (pycocoevalcap ships them) and keeps the table in capeval's cache after its first use. ``engine="jar"`` runs
    the jar: the JVM starts on the first call (it loads the paraphrase table, ~20 s) and serves every METEOR scorer
    of the process (:func:`meteor_process`); a failed call discards it and the next one starts afresh
    (:class:`~capeval.scoring.meteor_jar.MeteorProcess`). Both give the same per-caption statistics, so shards
    scored by either merge into the same corpus value.
    """

    metric, title = "meteor", "METEOR"
    default_models = "METEOR 1.5's word lists and paraphrase table, read from pycocoevalcap's jar"
    faithful_to = ("pycocoevalcap 1.2's METEOR 1.5 jar: every statistic and per-caption score equal on 25,822 captions "
                   '(`engine="jar"` runs the jar)')
    name = primary = "meteor"
    merge = MERGE_ALL
    extras = ("meteor",)
    needs = (MeteorTable(),)
    offline_runs = (OfflineRun("METEOR", note="METEOR 1.5 in pure Python; the first use caches the jar's paraphrase "
                               "table (about a minute)"),)

    def __init__(self, *, tokenizer: Tokenizer = "ptb",
                 engine: Annotated[str, Opt("`python` (pure Python, no Java) or `jar` (pycocoevalcap's jar through Java); "
                                            "equal outputs", choices=METEOR_ENGINES)] = "python"):
        super().__init__(tokenizer=tokenizer)
        self.engine = engine
        #: Another METEOR process to use instead of the shared one (tests pass one per session).
        self._jar: MeteorProcess | None = None

    def jar(self) -> MeteorProcess:
        return self._jar or meteor_process()

    def start_in_background(self) -> None:
        """With ``engine="jar"``, start the JVM without waiting for it (:meth:`MeteorProcess.start`):
        :func:`capeval.evaluate` calls this first and scores METEOR last, so the other metrics are scored while the
        JVM loads."""
        if self.engine == "jar":
            self.jar().start()

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        candidates, refs = self.tokenized(predictions, references)
        if self.engine == "jar":
            corpus, scores, statistics = self.jar().score(candidates, refs)
        else:
            corpus, scores, rows = meteor(*meteor_inputs(candidates, refs), load_resources())
            statistics = [list(row) for row in rows]
        return Scores({"meteor": scores}, corpus={"meteor": corpus}, sufficient_statistics=statistics)

    def corpus_from_sufficient_statistics(self, statistics) -> dict[str, float]:
        return {"meteor": self.jar().aggregate(statistics) if self.engine == "jar" else aggregate(statistics)}

    def options(self) -> dict:
        # The engines give equal outputs: the engine is not part of the hashcode.
        return {"version": "1.5", **super().options()}
