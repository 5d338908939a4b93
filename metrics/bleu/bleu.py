"""BLEU-1..4 for image captions, as the COCO caption toolkit computes them (Papineni et al., ACL 2002)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.coco import BleuScorer

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
"""

_DESCRIPTION = """\
BLEU as in the COCO caption evaluation toolkit (pycocoevalcap): captions are PTB-tokenized and lowercased
with punctuation removed, n-gram precisions are clipped by the maximum count in any reference, and the brevity
penalty uses the reference length closest to the candidate's. The corpus score comes from summed counts; the
per-caption scores add 1e-15/1e-9 to each precision as the toolkit does. Values equal pycocoevalcap's.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    bleu (float): corpus BLEU-n (n = order), the toolkit's "Bleu_n".
    bleu_1 ... bleu_4 (float): corpus BLEU-1..4.
    scores (list of float): per-caption BLEU-n.
    hashcode (str): order, tokenizer and capeval version.

Examples:
    >>> import capeval
    >>> bleu = capeval.load("bleu")
    >>> results = bleu.compute(predictions=["A dog runs on the grass.", "a cat"],
    ...                        references=[["A dog runs on grass.", "The dog is running."], ["a cat sleeps"]])
    >>> round(results["bleu_1"], 4), [round(s, 4) for s in results["scores"]]
    (1.0, [0.5623, 0.0006])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(CaptionMetric):
    scorer_class = BleuScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/P02-1040",
            codebase_urls=["https://github.com/salaniz/pycocoevalcap"],
            reference_urls=["https://aclanthology.org/P02-1040", "https://arxiv.org/abs/1504.00325"],
        )
