"""Toy length ratio: the example metric of capeval's README (a caption's length over its shortest reference's)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.toy_length import ToyLengthScorer

_DESCRIPTION = """\
The number of whitespace-separated words in the candidate over that of its shortest non-blank reference
(or its longest, with ``reference="longest"``). The corpus value is the mean.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    toy_length (float): the mean ratio.
    scores (list of float): the ratio of each candidate.
    hashcode (str): the option and capeval version.

Examples:
    >>> import capeval
    >>> toy = capeval.load("toy_length")
    >>> toy.compute(predictions=["a dog runs"], references=[["a dog", "the dog runs fast"]])["scores"]
    [1.5]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ToyLength(CaptionMetric):
    scorer_class = ToyLengthScorer

    def _info(self):
        return self.module_info(description=_DESCRIPTION, inputs_description=_KWARGS_DESCRIPTION)
