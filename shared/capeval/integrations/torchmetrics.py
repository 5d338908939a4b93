"""capeval metrics as ``torchmetrics.Metric`` objects, for Lightning's validation steps and any DDP loop
(``pip install "capeval[lightning]"``).

``update(predictions, references, images=None, region_features=None)`` takes a batch of decoded captions;
``compute()`` gives the corpus value over every batch of every process. The states sync across processes
the way each metric needs:

* a metric whose captions score independently and whose corpus value is their mean (ROUGE-L, SMURF, UMIC,
  ViLBERTScore, QACE) scores each batch in ``update`` on its own process and syncs the column sums and the
  caption count, so the model work is split between the processes;
* a corpus-level metric (CIDEr-D's and BERT-TBR's IDF over the corpus, BLEU's summed n-gram counts,
  METEOR's aggregate) keeps its inputs, gathers them from every process in ``compute`` and scores the
  gathered corpus once, so its value equals a single process's on the same captions exactly.

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

from ..declaration import MERGE_MEAN
from ..inputs import check_inputs
from ..registry import build_scorer, entry
from ..scoring.protocol import CaptionScorer

ALL_COLUMNS = "all"


def scorer_of(metric: str, options: dict[str, Any]) -> CaptionScorer:
    """The one place this integration builds scorers (checked options, models loaded on first use)."""
    return build_scorer(metric, options)


def kept_whole(scorer: CaptionScorer) -> bool:
    """Whether the scorer must see the whole corpus at once (its inputs are gathered, not its scores)."""
    return scorer.corpus_dependent or scorer.merge != MERGE_MEAN


class CaptionScoreMetric(Metric):
    """The capeval metric ``metric`` (a registry name) with constructor ``options``, as a torchmetrics Metric.

    ``column``: the corpus value ``compute()`` returns, a 0-d float64 tensor (default: the metric's score,
    e.g. BLEU-n for ``bleu``, F for ``vilbertscore``); ``"all"`` returns a dict of every corpus value.
    ``batch_size`` / ``show_progress`` are passed to each scoring call.
    """

    is_differentiable = False
    full_state_update = False
    # The states (add_state): lists until a sync concatenates them, which dim_zero_cat reads either way.
    input_bytes: list[torch.Tensor]
    input_sizes: list[torch.Tensor]
    column_sums: torch.Tensor
    captions: torch.Tensor

    def __init__(self, metric: str, *, column: str | None = None, batch_size: int | None = None,
                 show_progress: bool | None = False, **options: Any):
        super().__init__()
        self.scorer = scorer_of(metric, options)
        self.metric = metric
        columns = self.scorer.columns()
        self.column = column or (self.scorer.primary if self.scorer.primary in columns else columns[0])
        self.batch_size, self.show_progress = batch_size, show_progress
        self.whole = kept_whole(self.scorer)
        if self.whole:
            # Each update's inputs pickled to bytes: text and images are not tensors, and `cat` joins each
            # process's list before the gather, so the byte counts say where each update's bytes end.
            self.add_state("input_bytes", default=[], dist_reduce_fx="cat")
            self.add_state("input_sizes", default=[], dist_reduce_fx="cat")
        else:
            if self.column != ALL_COLUMNS and self.column not in columns:
                raise ValueError(f"{metric} has no column {self.column!r}; choose one of {list(columns)} or 'all'")
            self.add_state("column_sums", default=torch.zeros(len(columns), dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state("captions", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, predictions: Sequence[str], references: Sequence[Sequence[str]] | None = None,
               images: Sequence[Any] | None = None, region_features: Sequence[Any] | None = None) -> None:
        """Add a batch of captions (checked now, so a bad batch fails at its own step)."""
        inputs = check_inputs(self.scorer, predictions, references, images=images, region_features=region_features)
        del inputs["batch_size"]
        if self.whole:
            data = pickle.dumps(inputs, protocol=pickle.HIGHEST_PROTOCOL)
            self.input_bytes.append(torch.frombuffer(bytearray(data), dtype=torch.uint8).to(self.device))
            self.input_sizes.append(torch.tensor([len(data)], dtype=torch.long, device=self.device))
            return
        scores = self.scorer.score(**inputs, batch_size=self.batch_size, show_progress=self.show_progress)
        sums = [sum(scores[name]) for name in self.scorer.columns()]
        self.column_sums += torch.tensor(sums, dtype=torch.float64, device=self.device)
        self.captions += len(inputs["predictions"])

    def compute(self) -> torch.Tensor | dict[str, torch.Tensor]:
        """The corpus value(s) over every caption every process added since the last ``reset``."""
        if self.whole:
            corpus = self._score_gathered_inputs()
        else:
            if int(self.captions) == 0:
                raise ValueError(f"{self.metric}: compute() before any update(); add captions first")
            means = (self.column_sums / self.captions).tolist()
            corpus = dict(zip(self.scorer.columns(), means))
        if self.column == ALL_COLUMNS:
            return {name: torch.tensor(value, dtype=torch.float64) for name, value in corpus.items()}
        if self.column not in corpus:
            raise ValueError(f"{self.metric} has no corpus value {self.column!r}; choose one of {sorted(corpus)} or 'all'")
        return torch.tensor(corpus[self.column], dtype=torch.float64)

    def _score_gathered_inputs(self) -> dict[str, float]:
        if not len(self.input_sizes):
            raise ValueError(f"{self.metric}: compute() before any update(); add captions first")
        blob = dim_zero_cat(self.input_bytes).cpu().numpy().tobytes()
        predictions: list[str] = []
        references: list[list[str]] | None = None if not self.scorer.needs_references else []
        visual: dict[str, list | None] = {"images": None, "region_features": None}
        start = 0
        for size in dim_zero_cat(self.input_sizes).tolist():
            batch = pickle.loads(blob[start : start + size])
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

