"""CAPTURE: objects, attributes and relations of detailed captions, matched exactly, by synonyms and softly (Dong et al., 2024)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.capture import CaptureScorer

_CITATION = """\
@article{dong2024benchmarking,
    title = {Benchmarking and Improving Detail Image Caption},
    author = {Dong, Hongyuan and Li, Jiawen and Wu, Bohong and Wang, Jiacong and Zhang, Yuan and Guo, Haoyuan},
    journal = {arXiv preprint arXiv:2405.19092},
    year = {2024},
}
"""

_DESCRIPTION = """\
CAPTURE (CAPtion evaluation by exTracting and coUpling coRE information) parses the candidate and each reference
into scene graphs with the FACTUAL parser (a Flan-T5), keeps the objects, attributes and relations the text
mentions as nouns (WordNet lemmas, NLTK tags; 317 stop-word objects dropped), and matches them in three stages:
exactly, by WordNet synonyms, then by the cosine of all-mpnet-base-v2 embeddings of what is left. Per kind it
takes an F1; CAPTURE = (0.5·F1_obj + 0.5·F1_attr + 0.2·F1_rel) / 1.2, averaged over the references. Values equal
pip capture-metric 0.1.13; every sentence of a call is parsed in batches on one device. Needs NLTK's punkt and
tagger data and WordNet.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions (typically long, detailed ones).
    references (list of list of str, or list of str): the references of each candidate.
    batch_size (int, optional): sentences per generation batch (default 16 on CPU, 256 on GPU) and phrases per
        encoder batch (default 256); it does not change the scores.
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).
    images, region_features: accepted so ``evaluate.combine`` works; ignored.

Returns:
    capture (float): mean CAPTURE.
    scores (list of float): per caption, the mean over its references.
    capture_object_precision, ..., capture_relation_f1 (list of float): the nine components, per caption.
    means (dict): their corpus means.
    elements (list of dict): per caption, the candidate's objects, attributes and relations.
    hashcode (str): parser, encoder, weights, switches and capeval version.

Examples:
    The defaults are the package's; models load on the first compute. Tiny stand-in models (the ones capeval's
    tests use) load the same way:

    >>> import capeval
    >>> capture = capeval.load("capture", parser_model="tests/assets/capture/parser",
    ...                        encoder_model="tests/assets/capture/encoder", device="cpu")
    >>> {key: value for key, value in capture.scorer.options().items() if key not in ("parser_model", "encoder_model")}
    {'alpha': 0.5, 'beta': 0.5, 'gamma': 0.2, 'synonym_matching': True, 'soft_matching': True, 'stop_words': True, 'factual_version': '0.5'}
    >>> capeval.load("capture", alpha=0.6)
    Traceback (most recent call last):
    ValueError: alpha + beta must be 1 (CAPTURE's object and attribute weights share 1), got 0.6 + 0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Capture(CaptionMetric):
    scorer_class = CaptureScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2405.19092",
            codebase_urls=["https://github.com/foundation-multimodal-models/CAPTURE", "https://github.com/zhuang-li/FACTUAL"],
            reference_urls=["https://arxiv.org/abs/2405.19092", "https://aclanthology.org/2023.findings-acl.398"],
        )
