"""The base class of capeval's ``evaluate`` modules.

It does what every adapter would otherwise repeat: it rejects misspelt constructor
options (evaluate silently drops unknown ones), turns a missing ``predictions`` or
``references`` into a clear ``ValueError`` before evaluate's own conversion, and
provides the standard feature sets (multi-reference first, single-reference second).
"""

from __future__ import annotations

import abc

import datasets
import evaluate

from .inputs import reject_unknown_options, validate_predictions


def text_features(with_references: bool = True) -> list[datasets.Features]:
    """evaluate features: ``[multi-reference set, single-reference set]`` with identical keys
    (only ``predictions`` for reference-free metrics)."""
    caption = datasets.Value("string", id="sequence")
    if not with_references:
        return [datasets.Features({"predictions": caption})]
    return [
        datasets.Features({"predictions": caption, "references": datasets.Sequence(caption, id="references")}),
        datasets.Features({"predictions": caption, "references": caption}),
    ]


class CaptionMetric(evaluate.Metric, metaclass=abc.ABCMeta):
    """Subclass this (not ``evaluate.Metric``) in a capeval module; set attributes, then call
    ``super().__init__(**kwargs)`` with the options evaluate itself understands.

    It is abstract so that ``evaluate.load``, which takes the first concrete
    ``EvaluationModule`` subclass in a module's namespace, picks the module's own class.
    """

    #: Whether ``compute`` needs references (False for reference-free metrics).
    needs_references = True
    #: Whether scoring needs the images (or their region features); the benchmark harness skips such a
    #: metric with a message when no image folder is given.
    needs_images = False

    def __init__(self, **kwargs):
        reject_unknown_options(type(self).__name__, kwargs)
        super().__init__(**kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``compute`` with clear errors for missing or malformed inputs.

        Predictions are checked here, before evaluate's own conversion, which fails obscurely
        for reference-free modules (IndexError on ``[]``, KeyError on ``[None]``).
        """
        if predictions is None and references is not None:
            raise ValueError("predictions is None: pass a list of caption strings")
        if predictions is not None:
            validate_predictions(predictions)
            if references is None and self.needs_references:
                raise ValueError("references is None: pass one reference, or a list of references, per prediction")
        return super().compute(predictions=predictions, references=references, **kwargs)

    @abc.abstractmethod
    def _compute(self, predictions, references, images=None, region_features=None, batch_size=None, show_progress=None):
        """Score validated inputs; every capeval module takes exactly these keyword arguments."""
