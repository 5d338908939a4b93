"""capeval: image-caption evaluation metrics that share one backbone library.

The metric modules in ``metrics/`` are thin `evaluate` adapters over this package:
model loading and the process-wide model cache live in :mod:`capeval.models`,
text encoders in :mod:`capeval.text`, and the scoring math (pure functions) in
:mod:`capeval.scoring`.
"""

__version__ = "0.1.0"
