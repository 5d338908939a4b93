"""capeval metrics as ``torchmetrics.Metric`` objects, for Lightning's validation steps and any DDP loop
(``pip install "capeval[lightning]"``).

``update(predictions, references, images=None, region_features=None)`` takes a batch of decoded captions;
``compute()`` gives the corpus value over every batch of every process, a process that added none included.
Each process scores its own batches in ``update`` (the model work is split between the processes), and the
states sync by the rule the scorer declares for its corpus values (``CaptionScorer.merge``):

* ``"mean"`` (ROUGE-L, CIDEr-D with a shipped IDF, SMURF, UMIC, CLIP-S, ...): the column sums and the caption count;
* ``"sum"`` (BLEU): the element-wise sums of the captions' sufficient statistics (n-gram counts);
* ``"all"`` (METEOR): every caption's sufficient statistics, from which the scorer computes its aggregate.

Only a scorer whose per-caption scores depend on the whole corpus (``corpus_dependent``: CIDEr-D's and BERT-TBR's
IDF over the scored corpus) keeps its inputs instead, gathers them from every process in ``compute`` and scores
the gathered corpus once. Every rule gives exactly a single process's values on the same captions.

>>> cider = CaptionScoreMetric("cider")
>>> cider.update(["a dog runs on the grass"], [["a dog running on grass", "a dog runs"]])
>>> cider.update(["a cat sleeps"], [["a cat sleeping on a bed", "a sleeping cat"]])
>>> round(float(cider.compute()), 4)
2.2204
>>> bleu = CaptionScoreMetric("bleu", column="all", order=2)
>>> bleu.update(["a dog runs"], [["a dog runs fast"]])
>>> {name: round(float(value), 4) for name, value in bleu.compute().items()}
{'bleu': 0.7165, 'bleu_1': 0.7165, 'bleu_2': 0.7165, 'bleu_3': 0.7165, 'bleu_4': 0.0227}
"""

from __future__ import annotations

import functools
import pickle
from typing import Any, Sequence

import torch
from torchmetrics import Metric
from torchmetrics.utilities.data import dim_zero_cat

from ..declaration import MERGE_MEAN, MERGE_SUM
from ..inputs import check_batch_size, check_inputs
from ..registry import build_scorer, entry
from ..scoring.protocol import CaptionScorer

ALL_COLUMNS = "all"

#: How the states of a metric sync (:func:`sync_rule`).
GATHER_INPUTS, COLUMN_MEANS, STATISTICS = "inputs", "means", "statistics"

#: Each list state and the dtype of its tensors: a process that never calls ``update`` still sends one (empty)
#: tensor of that dtype, where torchmetrics would send its default float and abort the gather of the others.
LIST_STATES = {GATHER_INPUTS: {"input_bytes": torch.uint8, "input_sizes": torch.long},
               STATISTICS: {"statistics": torch.float64}}


def scorer_of(metric: str, options: dict[str, Any]) -> CaptionScorer:
    """The one place this integration builds scorers (checked options, models loaded on first use)."""
    return build_scorer(metric, options)


def sync_rule(scorer: CaptionScorer) -> str:
    """What the processes share: their inputs (only where the IDF comes from the whole corpus), the captions'
    sufficient statistics (a corpus value that is no mean), or column sums."""
    if scorer.corpus_dependent:
        return GATHER_INPUTS
    return COLUMN_MEANS if scorer.merge == MERGE_MEAN else STATISTICS


class CaptionScoreMetric(Metric):
    """The capeval metric ``metric`` (a registry name) with constructor ``options``, as a torchmetrics Metric.

    ``column``: the corpus value ``compute()`` returns, a 0-d float64 tensor (default: the metric's score,
    e.g. BLEU-n for ``bleu``, F for ``vilbertscore``); ``"all"`` returns a dict of every corpus value.
    ``batch_size`` / ``show_progress`` are passed to each scoring call. Every argument is checked here.
    """

    is_differentiable = False
    full_state_update = False
    # The states (add_state): lists until a sync concatenates them, which dim_zero_cat reads either way.
    input_bytes: list[torch.Tensor]
    input_sizes: list[torch.Tensor]
    statistics: list[torch.Tensor]
    statistic_rows: torch.Tensor
    column_sums: torch.Tensor
    captions: torch.Tensor

    def __init__(self, metric: str, *, column: str | None = None, batch_size: int | None = None,
                 show_progress: bool | None = False, **options: Any):
        super().__init__()
        self.scorer = scorer_of(metric, options)
        self.metric = metric
        columns = self.scorer.columns()
        self.column = column or self.scorer.primary
        corpus_names = self.scorer.corpus_names()
        if self.column != ALL_COLUMNS and self.column not in corpus_names:
            raise ValueError(f"{metric} has no column {self.column!r}; choose one of {list(corpus_names)} or 'all'")
        self.batch_size, self.show_progress = check_batch_size(batch_size), show_progress
        self.rule = sync_rule(self.scorer)
        if self.rule == GATHER_INPUTS:
            # Each update's inputs pickled to bytes: text and images are not tensors, and `cat` joins each
            # process's list before the gather, so the byte counts say where each update's bytes end.
            self.add_state("input_bytes", default=[], dist_reduce_fx="cat")
            self.add_state("input_sizes", default=[], dist_reduce_fx="cat")
        elif self.rule == STATISTICS:
            # Flat vectors of one width, and how many: "sum" adds each update's rows up first, "all" keeps every row.
            self.add_state("statistics", default=[], dist_reduce_fx="cat")
            self.add_state("statistic_rows", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("column_sums", default=torch.zeros(len(columns), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("captions", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        self._seed_list_states()

    def _seed_list_states(self) -> None:
        for name, dtype in LIST_STATES.get(self.rule, {}).items():
            getattr(self, name).append(torch.zeros(0, dtype=dtype, device=self.device))

    def reset(self) -> None:
        super().reset()
        self._seed_list_states()

    def update(self, predictions: Sequence[str], references: Sequence[Sequence[str]] | None = None,
               images: Sequence[Any] | None = None, region_features: Sequence[Any] | None = None) -> None:
        """Add a batch of captions (checked now, so a bad batch fails at its own step)."""
        inputs = check_inputs(self.scorer, predictions, references, images=images, region_features=region_features)
        del inputs["batch_size"]
        self.captions += len(inputs["predictions"])
        if self.rule == GATHER_INPUTS:
            data = pickle.dumps(inputs, protocol=pickle.HIGHEST_PROTOCOL)
            self.input_bytes.append(torch.frombuffer(bytearray(data), dtype=torch.uint8).to(self.device))
            self.input_sizes.append(torch.tensor([len(data)], dtype=torch.long, device=self.device))
            return
        scores = self.scorer.score(**inputs, batch_size=self.batch_size, show_progress=self.show_progress)
        sums = [sum(scores[name]) for name in self.scorer.columns()]
        self.column_sums += torch.tensor(sums, dtype=torch.float64, device=self.device)
        if self.rule == STATISTICS:
            rows = torch.tensor(scores.sufficient_statistics, dtype=torch.float64, device=self.device)
            if self.scorer.merge == MERGE_SUM:
                rows = rows.sum(dim=0, keepdim=True)
            self.statistics.append(rows.flatten())
            self.statistic_rows += rows.shape[0]

    def compute(self) -> torch.Tensor | dict[str, torch.Tensor]:
        """The corpus value(s) over every caption every process added since the last ``reset``."""
        if int(self.captions) == 0:
            raise ValueError(f"{self.metric}: compute() before any update(); add captions first")
        if self.rule == GATHER_INPUTS:
            corpus = self._score_gathered_inputs()
        else:
            corpus = dict(zip(self.scorer.columns(), (self.column_sums / self.captions).tolist()))
            if self.rule == STATISTICS:
                rows = dim_zero_cat(self.statistics).reshape(int(self.statistic_rows), -1)
                corpus.update(self.scorer.corpus_from_sufficient_statistics(rows.tolist()))
        if self.column == ALL_COLUMNS:
            return {name: torch.tensor(value, dtype=torch.float64) for name, value in corpus.items()}
        return torch.tensor(corpus[self.column], dtype=torch.float64)

    def _score_gathered_inputs(self) -> dict[str, float]:
        blob = dim_zero_cat(self.input_bytes).cpu().numpy().tobytes()
        predictions: list[str] = []
        references: list[list[str]] | None = None if not self.scorer.needs_references else []
        visual: dict[str, list | None] = {"images": None, "region_features": None}
        start = 0
        for size in dim_zero_cat(self.input_sizes).tolist():
            batch = pickle.loads(blob[start : start + size])  # written by update() of this metric on one of the processes
            start += size
            predictions += batch["predictions"]
            if references is not None:
                references += batch["references"]
            for name, values in visual.items():
                if batch[name] is not None:
                    visual[name] = (values or []) + list(batch[name])
        inputs = check_inputs(self.scorer, predictions, references, **visual, batch_size=self.batch_size)
        return self.scorer.score(**inputs, show_progress=self.show_progress).corpus


@functools.cache
def metric_class(name: str) -> type[CaptionScoreMetric]:
    """The ``CaptionScoreMetric`` subclass of registry metric ``name`` (its options are the constructor's), one per
    metric: ``metric_class("cider")(idf="flickr8k")``.

    >>> Cider = metric_class("cider")
    >>> Cider.__name__, Cider(idf="flickr8k").metric
    ('CiderMetric', 'cider')
    """
    metric_entry = entry(name)  # an UnknownMetricError listing the known names

    def __init__(self, **options: Any) -> None:
        CaptionScoreMetric.__init__(self, name, **options)

    class_name = "".join(part.capitalize() for part in name.split("_")) + "Metric"
    scorer_class: type[CaptionScorer] = metric_entry.scorer_class()
    attributes = {"__init__": __init__, "higher_is_better": scorer_class.higher_is_better,
                  "__doc__": f"{metric_entry.title} as a torchmetrics Metric (see :class:`CaptionScoreMetric`)."}
    return type(class_name, (CaptionScoreMetric,), attributes)
