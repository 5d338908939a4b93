"""CIDEr-D for image captions, as the COCO caption toolkit computes it (Vedantam et al., CVPR 2015)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.coco import CiderScorer

_CITATION = """\
@inproceedings{vedantam2015cider,
    title = {CIDEr: Consensus-based Image Description Evaluation},
    author = {Vedantam, Ramakrishna and Zitnick, C. Lawrence and Parikh, Devi},
    booktitle = {Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition (CVPR)},
    year = {2015},
    pages = {4566--4575},
}
"""

_DESCRIPTION = """\
CIDEr-D as in the COCO caption evaluation toolkit (pycocoevalcap's "CIDEr"): TF-IDF vectors of 1- to 4-grams
of PTB-tokenized captions, with the IDF taken from the references of the whole scored corpus; the clipped
cosine similarity with each reference is damped by a Gaussian length penalty (σ = 6), averaged over n and over
the references, and multiplied by 10. Scores depend on the corpus passed to one compute() call; a single
caption scores 0. Values equal pycocoevalcap's.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    cider (float): mean CIDEr-D over the candidates, the toolkit's "CIDEr" (range 0-10).
    scores (list of float): per-caption CIDEr-D.
    hashcode (str): σ, tokenizer and capeval version.

Examples:
    >>> import capeval
    >>> cider = capeval.load("cider")
    >>> results = cider.compute(predictions=["A dog runs on the grass.", "A cat on the mat."],
    ...                         references=[["A dog runs on grass.", "The dog is running."],
    ...                                     ["A cat sits on a mat.", "A cat on a mat."]])
    >>> [round(s, 4) for s in results["scores"]]
    [3.7008, 3.1598]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Cider(CaptionMetric):
    scorer_class = CiderScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/1411.5726",
            codebase_urls=["https://github.com/salaniz/pycocoevalcap", "https://github.com/vrama91/cider"],
            reference_urls=["https://arxiv.org/abs/1411.5726", "https://arxiv.org/abs/1504.00325"],
        )
