"""METEOR 1.5 for image captions as the COCO caption toolkit's Java jar computes it (Denkowski & Lavie, 2014)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.coco import MeteorScorer

_CITATION = """\
@inproceedings{denkowski-lavie-2014-meteor,
    title = "Meteor Universal: Language Specific Translation Evaluation for Any Target Language",
    author = "Denkowski, Michael and Lavie, Alon",
    booktitle = "Proceedings of the Ninth Workshop on Statistical Machine Translation",
    year = "2014",
    pages = "376--380",
}
"""

_DESCRIPTION = """\
METEOR 1.5 as the COCO caption evaluation toolkit runs it (pycocoevalcap's meteor-1.5.jar: English,
normalised, exact/stem/synonym/paraphrase matching) on PTB-tokenized captions, computed in pure Python with the
same results (``engine="python"``, default) or by the jar itself (``engine="jar"``, needs Java). Either needs
the optional ``pycocoevalcap`` package, which ships the jar and its data (``pip install capeval[meteor]``). The
corpus score is METEOR's own aggregate over the summed statistics, not the mean of the per-caption scores.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    meteor (float): corpus METEOR, the toolkit's "METEOR".
    scores (list of float): per-caption METEOR.
    hashcode (str): tokenizer and capeval version.

Examples:
    >>> import capeval
    >>> meteor = capeval.load("meteor")
    >>> results = meteor.compute(predictions=["A dog runs on the grass."],
    ...                          references=[["A dog runs on grass.", "The dog is running."]])
    >>> round(results["scores"][0], 4)
    0.4937

    The jar itself gives the same numbers (it needs Java; without it the module says so):
    >>> from capeval.scoring.coco import JAVA_MISSING
    >>> print(JAVA_MISSING[:44])
    METEOR's engine="jar" runs the Java jar of p
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Meteor(CaptionMetric):
    scorer_class = MeteorScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://www.cs.cmu.edu/~alavie/METEOR/",
            codebase_urls=["https://github.com/salaniz/pycocoevalcap"],
            reference_urls=["https://aclanthology.org/W14-3348", "https://arxiv.org/abs/1504.00325"],
        )
