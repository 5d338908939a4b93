"""capeval: image-caption evaluation metrics that share one backbone library.

The metric modules (``metrics/``, shipped as ``capeval.metric_modules``) are thin `evaluate`
adapters over this package: the scorers behind one protocol live in :mod:`capeval.scoring`,
model loading and the process-wide model cache in :mod:`capeval.models`, and the table of
metrics in :mod:`capeval.registry`.

>>> import capeval
>>> capeval.load("bleu", order=1).compute(predictions=["a dog"], references=[["a dog runs"]])["bleu"]
0.606530659...
"""

__version__ = "0.2.0"

from capeval.registry import METRICS, load, module_path  # noqa: E402

__all__ = ["METRICS", "__version__", "load", "module_path"]
