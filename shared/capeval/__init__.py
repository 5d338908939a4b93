"""capeval: image-caption evaluation metrics that share one backbone library.

:func:`capeval.evaluate` scores captions with every metric in one call:

>>> import capeval
>>> result = capeval.evaluate(["a dog runs"], [["a dog runs fast", "a dog is running"]], metrics=["bleu", "rouge", "cider"])
>>> sorted(result.corpus)
['bleu', 'bleu_1', 'bleu_2', 'bleu_3', 'bleu_4', 'cider', 'rouge_l']

The metric modules (``metrics/``, shipped as ``capeval.metric_modules``) are thin `evaluate`
adapters over this package: the scorers behind one protocol live in :mod:`capeval.scoring`,
model loading and the process-wide model cache in :mod:`capeval.models`, and the table of
metrics in :mod:`capeval.registry`.

>>> import capeval
>>> capeval.load("bleu", order=1).compute(predictions=["a dog"], references=[["a dog runs"]])["bleu"]
0.606530659...
"""

__version__ = "0.2.0"

import importlib

#: Where each public name lives; imported on first use, so ``capeval --version`` and ``import capeval`` stay quick.
_EXPORTS = {"EvaluationResult": "evaluation", "evaluate": "evaluation", "dry_run": "evaluation", "METRICS": "registry", "load": "registry",
            "module_path": "registry", "resolve": "registry"}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'capeval' has no attribute {name!r}")
    return getattr(importlib.import_module(f"capeval.{_EXPORTS[name]}"), name)
