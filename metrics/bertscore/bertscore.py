"""BERTScore: evaluating text generation with BERT (Zhang et al., ICLR 2020), as bert_score 0.3.12 computes it."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.bertscore import BERTScorer

_CITATION = """\
@inproceedings{bert-score,
    title = {BERTScore: Evaluating Text Generation with BERT},
    author = {Tianyi Zhang and Varsha Kishore and Felix Wu and Kilian Q. Weinberger and Yoav Artzi},
    booktitle = {International Conference on Learning Representations},
    year = {2020},
    url = {https://openreview.net/forum?id=SkeHuCVFDr},
}
"""

_DESCRIPTION = """\
BERTScore matches the contextual token embeddings of a candidate and a reference greedily by cosine similarity:
precision averages each candidate token's best match, recall each reference token's, F1 is their harmonic mean.
With several references, P, R and F are each the maximum over the references (independently, as bert_score).
Values equal bert_score.score on the same model and layer (to 1e-6), with and without IDF weighting and baseline
rescaling; the output names are those of the canonical evaluate module (precision, recall, f1 lists).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features: accepted so ``evaluate.combine`` works; ignored.
    batch_size (int, optional): sentences per forward pass and (as bert_score) pairs per padded batch (default 64).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Constructor options (``evaluate.load(path, ...)``):
    model_name (str): hub id or folder of the encoder (default "roberta-large", bert_score's English default).
    layer (int, optional): hidden state to match (default: bert_score's layer for the model, e.g. 17 for
        roberta-large; the last layer for models bert_score has no default for).
    idf (bool): IDF weights from the references of the call (or idf_sentences), default False.
    idf_sentences (list of str, optional): IDF documents instead of the references.
    rescale_with_baseline (bool): (s − b)/(1 − b) with bert_score's English baseline for the model and layer
        (the files the bert_score package ships), default False.
    baseline_path (str, optional): a baseline file in bert_score's format for other models.
    pad_like_bert_score (bool): keep bert_score's padding quirk (default True, see the card).
    device (str, optional): default CUDA when available.

Returns:
    precision, recall, f1 (list of float): per candidate.
    bertscore (float): mean F1; scores (list of float): F1 per candidate; means: mean precision, recall and f1.
    hashcode (str): model, layer, idf, rescaling and capeval version.

Examples:
    >>> import capeval
    >>> from capeval.declaration import minilm_path
    >>> bertscore = capeval.load("bertscore", model_name=minilm_path(), layer=6)
    >>> results = bertscore.compute(predictions=["a man rides a bicycle on the street"],
    ...                             references=[["a man riding a red bike down the street", "a person cycles along a road"]])
    >>> round(results["f1"][0], 3), round(results["precision"][0], 4), round(results["recall"][0], 4)
    (0.778, 0.8249, 0.7366)

    bert_score ships baselines for its own models only; others need a baseline file:

    >>> capeval.load("bertscore", model_name=minilm_path(), layer=6, rescale_with_baseline=True)
    Traceback (most recent call last):
    ...
    ValueError: bert_score ships no English baseline for '...'; pass baseline_path= (a TSV of LAYER,P,R,F rows) or rescale_with_baseline=False
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bertscore(CaptionMetric):
    scorer_class = BERTScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://github.com/Tiiiger/bert_score",
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://arxiv.org/abs/1904.09675", "https://openreview.net/forum?id=SkeHuCVFDr"],
        )
