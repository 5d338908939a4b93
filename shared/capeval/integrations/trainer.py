"""capeval metrics inside a training loop: ``compute_metrics`` for HuggingFace's ``Seq2SeqTrainer``, or
:class:`CaptionEvaluator` for a plain PyTorch loop.

An eval set of images holds several references per image, which ``eval_pred.label_ids`` (one target
sequence per example) cannot carry: the references (and images or region features) are given once, by
eval-set index, and each evaluation scores the decoded predictions against them. The scorers are built
once, so their models load on the first evaluation only, and the text encoders keep past encodings
(:class:`capeval.text.encoder.EncodingCache`): from the second evaluation on, only the new predictions are
encoded. Every corpus value comes back as one float under a stable name (``bleu``, ``bleu_1`` ..
``bleu_4``, ``rouge_l``, ``cider``, ``bert_tbr``, ``smurf``, ``sparcs``, ...), ready for the Trainer's logs.

>>> evaluator = CaptionEvaluator(["bleu", ("cider", {"idf": "flickr8k"})],
...                              references=[["a dog runs on the grass", "a brown dog runs"], ["a cat sleeps", "a cat on a bed"]])
>>> {name: round(value, 4) for name, value in evaluator.evaluate_texts(["a dog runs", "a cat sleeps"]).items()}
{'bleu': 0.0268, 'bleu_1': 0.8465, 'bleu_2': 0.8465, 'bleu_3': 0.8465, 'bleu_4': 0.0268, 'cider': 4.3677}
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..evaluation import evaluate_runs, metric_runs
from ..inputs import normalize_references, validate_predictions
from ..scoring.protocol import CaptionScorer

#: A metric as the hook takes it: a registry name, ``"name:key=value,..."``, (name, constructor options), or a scorer.
MetricSpec = str | tuple[str, Mapping[str, Any]] | CaptionScorer


class CaptionEvaluator:
    """Scores decoded captions with several metrics against an eval set's references and images, by index.

    ``references``: one reference, or one list of references, per eval example (several per image), exactly as the
    modules accept them; ``None`` when the caller passes references with each call (e.g. the decoded labels).
    ``images`` / ``region_features``: one entry per eval example, for image metrics.
    """

    def __init__(self, metrics: Sequence[MetricSpec] | MetricSpec | Mapping[str, Mapping[str, Any]], *, references: Sequence[Sequence[str]] | Sequence[str] | None = None,
                 images: Sequence[Any] | None = None, region_features: Sequence[Any] | None = None):
        self.runs = metric_runs(metrics)  # one spec, a list, or names mapped to options, as capeval.evaluate takes them
        self.references = None if references is None else normalize_references(references, len(references))
        self.images = images
        self.region_features = region_features
        for name, column in (("images", images), ("region_features", region_features)):
            if column is not None and self.references is not None and len(column) != len(self.references):
                raise ValueError(f"{len(column)} {name} for {len(self.references)} reference lists; give one per eval example")

    @property
    def scorers(self) -> list[CaptionScorer]:
        return [run.scorer for run in self.runs]

    def evaluate_texts(self, predictions: Sequence[str], *, indices: Sequence[int] | None = None,
                       references: Sequence[Sequence[str]] | Sequence[str] | None = None) -> dict[str, float]:
        """Every metric's corpus values for ``predictions`` (prediction i is eval example ``indices[i]``,
        default i), as ``{name: float}`` (:attr:`capeval.evaluation.EvaluationResult.corpus`); ``references``
        overrides the stored ones for this call."""
        predictions = validate_predictions(predictions)
        known = len(self.references) if self.references is not None else len(predictions)
        if indices is None:  # the whole eval set in order: its columns as they are
            if len(predictions) != known:
                raise ValueError(f"{len(predictions)} predictions for an eval set of {known} examples: evaluate the whole "
                                 "eval set in order, or pass indices=")
        else:
            indices = list(indices)
            if len(indices) != len(predictions):
                raise ValueError(f"{len(indices)} indices for {len(predictions)} predictions; give one per prediction")
            bad = [i for i in indices if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < known]
            if bad:
                raise ValueError(f"indices {bad[:3]} are not eval-set positions (0 to {known - 1})")

        def by_index(column):
            return column if column is None or indices is None else [column[i] for i in indices]

        if references is None:
            if self.references is None:
                raise ValueError("no references: pass references= to CaptionEvaluator (or to this call)")
            references = by_index(self.references)

        return evaluate_runs(self.runs, predictions, references, images=by_index(self.images),
                             region_features=by_index(self.region_features)).corpus


def decode(token_ids: Any, tokenizer: Any) -> list[str]:
    """Token-id rows as stripped text; ``-100`` (the Trainer's padding of labels and gathered predictions)
    becomes the pad token first.

    >>> class Chars:
    ...     pad_token_id = 0
    ...     def batch_decode(self, rows, skip_special_tokens):
    ...         return ["".join(chr(96 + t) for t in row if t) + " " for row in rows]
    >>> decode(np.array([[1, 2, -100], [3, 0, 0]]), Chars())
    ['ab', 'c']
    """
    if isinstance(token_ids, tuple):  # (generated ids, ...) from models that return several outputs
        token_ids = token_ids[0]
    token_ids = np.asarray(token_ids)
    if token_ids.ndim != 2:
        raise ValueError(f"expected generated token ids of shape (examples, length), got shape {token_ids.shape}: "
                         "use Seq2SeqTrainer with predict_with_generate=True")
    if token_ids.size and not np.issubdtype(token_ids.dtype, np.integer):
        raise ValueError(f"token ids must be integers, got {token_ids.dtype}: pass the generated ids, not logits or scores")
    if ((token_ids < 0) & (token_ids != -100)).any():
        raise ValueError(f"negative token id {int(token_ids[(token_ids < 0) & (token_ids != -100)][0])}: only -100 (padding) "
                         "may be negative")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    rows = np.where(token_ids == -100, pad, token_ids)
    return [text.strip() for text in tokenizer.batch_decode(rows, skip_special_tokens=True)]


def compute_metrics_fn(metrics: Sequence[MetricSpec], tokenizer: Any, *, references: Sequence[Sequence[str]] | None = None,
                       images: Sequence[Any] | None = None, region_features: Sequence[Any] | None = None
                       ) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics`` for ``Seq2SeqTrainer(..., predict_with_generate=True)``.

    Each evaluation decodes the generated ids (``-100`` replaced), scores them against ``references``
    (one list per eval example, in eval-set order; default: the decoded labels, one reference each) and
    ``images`` / ``region_features`` by eval-set index, and returns flat floats (the Trainer prefixes
    ``eval_``). See the module docstring for names and caching.
    """
    evaluator = CaptionEvaluator(metrics, references=references, images=images, region_features=region_features)

    def compute_metrics(eval_pred) -> dict[str, float]:
        predictions = decode(eval_pred.predictions, tokenizer)
        labels = None if references is not None else [[text] for text in decode(eval_pred.label_ids, tokenizer)]
        return evaluator.evaluate_texts(predictions, references=labels)

    compute_metrics.evaluator = evaluator  # type: ignore[attr-defined]
    return compute_metrics
