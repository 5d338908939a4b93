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

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, optional): needed with reference_based=True (RefFLEUR).
    images (list): one image per caption (path, bytes, PIL image or datasets.Image value); required.
    batch_size (int, optional): captions per generate() call (default 8).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Constructor options (``evaluate.load(path, ...)``): see the card's option table (model, reference_based, explain,
max_new_tokens, device, dtype).

Returns:
    fleur (float): mean smoothed rating over the captions whose answer could be scored.
    scores (list of float): per caption, in [0, 1]; NaN where the answer gives no rating.
    answer (list of str): the judge's answer; unscored (list of bool); explanation (with explain=True).
    hashcode (str): judge model, options and capeval version.

Examples:
    A scripted tiny Llava (it always answers "0.7") stands in for LLaVA-1.5-13B here:

    >>> import tempfile
    >>> import capeval
    >>> from capeval.backbones.llava import save_scripted_llava
    >>> from capeval.samples import sample_image
    >>> fleur = capeval.load("fleur", model=save_scripted_llava(tempfile.mkdtemp()), device="cpu")
    >>> results = fleur.compute(predictions=["a dog runs across the grass"], images=[str(sample_image())])
    >>> [round(s, 4) for s in results["scores"]], results["answer"]
    ([0.5672], ['0.7'])
"""


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
