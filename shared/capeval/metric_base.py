"""The base class of capeval's ``evaluate`` modules: a module only declares its scorer and metadata.

A module sets ``scorer_class`` (a :class:`~capeval.scoring.protocol.CaptionScorer`) and implements
``_info`` with :meth:`CaptionMetric.module_info`; everything else happens here, once for every module:

* constructor options are the scorer's keyword arguments: an unknown one raises ``TypeError`` listing
  the valid ones (``evaluate`` itself silently drops them), a bad value fails at ``evaluate.load``;
* ``compute`` checks the call (missing or malformed inputs, a constructor option passed to
  ``compute``) before evaluate's own conversion, which fails obscurely; it is safe to call again
  after a failure, and one instance may be shared by threads (their calls run one at a time);
* ``_compute`` takes the same explicit keyword arguments in every module (so ``evaluate.combine``
  works), validates once, calls the scorer and shapes its columns into evaluate's result dict.

Options stay on the constructor rather than on ``compute`` because ``evaluate.combine`` forwards one
set of ``compute`` arguments to every module: per-metric options there would collide.
"""

from __future__ import annotations

import abc
import inspect
import os
import threading
from typing import Any, ClassVar

import datasets

from .inputs import COMMON_COMPUTE_KWARGS, check_inputs, per_prediction
from .registry import import_evaluate
from .scoring.protocol import CaptionScorer, build_checked, scorer_options, shape_result

import_evaluate()  # first, so that evaluate is imported without transformers (see import_evaluate)
import evaluate  # noqa: E402

#: Keyword arguments ``evaluate.EvaluationModule`` itself takes (cache, distributed setup, ...).
EVALUATE_OPTIONS = frozenset(inspect.signature(evaluate.EvaluationModule.__init__).parameters) - {"self", "kwargs"}


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
    """Subclass this (not ``evaluate.Metric``): set ``scorer_class`` and implement ``_info`` with
    :meth:`module_info`.

    It is abstract (``_info``) so that ``evaluate.load``, which takes the first concrete
    ``EvaluationModule`` subclass in a module's namespace, picks the module's own class.
    """

    #: The scorer this module exposes; its keyword arguments are the module's constructor options.
    scorer_class: ClassVar[type[CaptionScorer]]

    def __init__(self, **options):
        self.scorer = build_checked(self.scorer_class, options, type(self).__name__, other_options=EVALUATE_OPTIONS,
                                    other_label=f" (and evaluate's own: {sorted(EVALUATE_OPTIONS)})")
        self._compute_lock = threading.Lock()
        super().__init__(**{k: v for k, v in options.items() if k in EVALUATE_OPTIONS})

    @property
    def needs_references(self) -> bool:
        return self.scorer.needs_references

    @property
    def needs_images(self) -> bool:
        return self.scorer.needs_images

    @property
    def higher_is_better(self) -> bool:
        return self.scorer.higher_is_better

    @property
    def value_range(self) -> tuple[float | None, float | None]:
        return self.scorer.value_range

    def provenance(self) -> dict[str, Any]:
        """The scorer's provenance: metric, models by id, options and library versions."""
        return self.scorer.provenance()

    def module_info(self, **metadata: Any) -> evaluate.MetricInfo:
        """``MetricInfo`` with the features this scorer takes (references unless the scorer is reference-free) and
        the scorer's declared options appended to the inputs description."""
        from .reports.cards import options_text

        metadata["inputs_description"] = f"{metadata.get('inputs_description', '').rstrip()}\n\n{options_text(self.scorer_class)}\n"
        metadata.setdefault("description", self.scorer_class.__doc__ or self.scorer_class.title)
        metadata.setdefault("citation", "")
        with_references = self.needs_references or self.scorer.references_optional
        return evaluate.MetricInfo(features=text_features(with_references=with_references), **metadata)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``compute``, checked first and safe to call again after a failure.

        Missing or malformed inputs and misplaced options raise before evaluate's own conversion (which
        would stringify a malformed reference or fail obscurely); any iterable is accepted where a list
        is expected. A call that fails leaves no cache files behind and does not affect the next one.
        Calls on one instance from several threads run one at a time.
        """
        misplaced = sorted(set(kwargs) - set(COMMON_COMPUTE_KWARGS))
        if misplaced:
            options = [k for k in misplaced if k in scorer_options(self.scorer_class)]
            if options:
                raise TypeError(f"{options} {'is a constructor option' if len(options) == 1 else 'are constructor options'}: "
                                f"pass {'it' if len(options) == 1 else 'them'} to evaluate.load(path, {options[0]}=...)")
            raise TypeError(f"compute() got unexpected argument(s) {misplaced}; it takes predictions, references and "
                            f"{list(COMMON_COMPUTE_KWARGS)}")
        if predictions is None and references is not None:
            raise ValueError("predictions is None: pass a list of caption strings")
        if predictions is not None:
            if references is None and self.needs_references:
                raise ValueError("references is None: pass one reference, or a list of references, per prediction")
            # Checked lists from here on: references always in the multi-reference form, so evaluate's feature
            # choice never depends on which form an earlier call used.
            visual = {k: v for k, v in kwargs.items() if k in ("images", "region_features")}
            # In evaluate's distributed mode each process holds a shard of the predictions while the images go
            # with the gathered set to process 0: their count is checked there, against all predictions.
            local_visual = {} if self.num_process > 1 else visual
            checked = check_inputs(self.scorer, predictions, references, batch_size=kwargs.get("batch_size"), **local_visual)
            predictions, references = checked.pop("predictions"), checked.pop("references")
            if references is None and self.scorer.references_optional:
                references = [[] for _ in predictions]  # evaluate needs every feature: empty lists stand for none
            kwargs.update({k: v for k, v in checked.items() if v is not None})
        with self._compute_lock:
            try:
                return super().compute(predictions=predictions, references=references, **kwargs)
            except BaseException:
                self._discard_failed_call()
                raise

    def _discard_failed_call(self) -> None:
        """Forget what a failed ``compute`` left: the Arrow writer, its cache files and locks, the chosen feature format."""
        state: Any = self  # evaluate's writer state, set by EvaluationModule as it goes
        paths = [*(getattr(state, "file_paths", None) or []), *([state.cache_file_name] if state.cache_file_name else [])]
        for path in dict.fromkeys(paths):
            if os.path.exists(path):
                os.remove(path)
        for lock in [*(getattr(state, "filelocks", None) or []), *([state.filelock] if state.filelock else [])]:
            lock.release(force=True)
            if os.path.exists(lock.lock_file):
                os.remove(lock.lock_file)
        state.writer = state.buf_writer = state.data = state.filelock = state.cache_file_name = None
        state.file_paths, state.filelocks = [], []
        state.selected_feature_format = None

    def _compute(self, predictions, references=None, images=None, region_features=None, batch_size=None, show_progress=None):
        """Score the call ``compute`` validated and shape the result: every capeval module takes exactly these keyword
        arguments. In evaluate's distributed mode the images reach process 0 with the gathered predictions, and are
        counted against them here."""
        if self.num_process > 1:
            images, region_features = (per_prediction(name, values, len(predictions))
                                       for name, values in (("images", images), ("region_features", region_features)))
        # Optional references (RefCLIP-S) come back from evaluate's table as an empty list per caption when none were given.
        given = self.needs_references or (self.scorer.references_optional and any(references or []))
        scores = self.scorer.score(predictions, references if given else None, images=images,
                                   region_features=region_features, batch_size=batch_size, show_progress=show_progress)
        return shape_result(self.scorer, scores)

    @abc.abstractmethod
    def _info(self) -> evaluate.MetricInfo:
        """The module's metadata: ``return self.module_info(description=..., citation=..., ...)``."""
