"""FLEUR: explainable reference-free evaluation metric for image captioning using a large multimodal model (Lee et
al., ACL 2024), and RefFLEUR."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.fleur import FleurScorer

_CITATION = """\
@inproceedings{lee2024fleur,
    title = {{FLEUR}: An Explainable Reference-Free Evaluation Metric for Image Captioning Using a Large Multimodal Model},
    author = {Lee, Yebin and Park, Imseong and Kang, Myungjoo},
    booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics (ACL)},
    year = {2024},
}
"""

_DESCRIPTION = """\
FLEUR asks LLaVA-1.5-13B to rate a caption of an image on a scale of 0.0 to 1.0 (the released prompt, llava_v1
conversation, LLaVA's pad preprocessing, greedy decoding) and smooths the printed rating over the probabilities of
its digits: sum_k k/10 p_k at the first decimal digit's step, plus sum_k k/100 q_k at the second decimal digit's step
when the rating has one, 0.9 p('0') + p('1') for "1.0". RefFLEUR (reference_based=True) adds the references to the
prompt. capeval reproduces the released code (Yebin46/FLEUR fleur.py, reffleur.py, fleur_exp.py); an answer the
released code cannot score is NaN, named in a warning, and left out of the corpus value.
"""

_KWARGS_DESCRIPTION = FleurScorer.module_usage(references="needed with reference_based=True (RefFLEUR)", example_options="",
                                              example_scores="[0.5672]")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Fleur(CaptionMetric):
    scorer_class = FleurScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://github.com/Yebin46/FLEUR",
            codebase_urls=["https://github.com/Yebin46/FLEUR"],
            reference_urls=["https://github.com/haotian-liu/LLaVA"],
        )
