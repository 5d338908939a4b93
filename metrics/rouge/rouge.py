"""ROUGE-L for image captions, as the COCO caption toolkit computes it (Lin, 2004)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.coco import RougeScorer

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    pages = "74--81",
}
"""

_DESCRIPTION = """\
ROUGE-L as in the COCO caption evaluation toolkit (pycocoevalcap): on PTB-tokenized, lowercased captions
without punctuation, the longest common subsequence gives a precision and a recall against every reference;
the best precision and the best recall (possibly from different references) combine into F with β = 1.2.
The corpus score is the mean. Values equal pycocoevalcap's.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    rouge_l (float): mean ROUGE-L F over the candidates, the toolkit's "ROUGE_L".
    scores (list of float): per-caption ROUGE-L F in [0, 1].
    hashcode (str): tokenizer and capeval version.

Examples:
    >>> import capeval
    >>> rouge = capeval.load("rouge")
    >>> results = rouge.compute(predictions=["A dog runs on the grass.", "a cat"],
    ...                         references=[["A dog runs on grass.", "The dog is running."], ["a cat sleeps"]])
    >>> [round(s, 4) for s in results["scores"]]
    [0.9242, 0.7722]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rouge(CaptionMetric):
    scorer_class = RougeScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/W04-1013",
            codebase_urls=["https://github.com/salaniz/pycocoevalcap"],
            reference_urls=["https://aclanthology.org/W04-1013", "https://arxiv.org/abs/1504.00325"],
        )
