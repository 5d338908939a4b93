"""AMBER's generative evaluation of multimodal-LLM image descriptions: CHAIR, Cover, Hal, Cog (Wang et al., 2023)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.amber import AmberScorer

_CITATION = """\
@article{wang2023amber,
    title = {An LLM-free Multi-dimensional Benchmark for MLLMs Hallucination Evaluation},
    author = {Wang, Junyang and Wang, Yuhang and Xu, Guohai and Zhang, Jing and Gu, Yukai and Jia, Haitao and
              Yan, Ming and Zhang, Ji and Sang, Jitao},
    journal = {arXiv preprint arXiv:2311.07397},
    year = {2023},
}
"""

_DESCRIPTION = """\
AMBER's generative task: a model describes each of AMBER's 1,004 generative images ("Describe this image."), and
the objects named in each description are matched against the image's annotation (objects present, `truth`;
plausible objects absent, `hallu`) with AMBER's word associations, safe words and a spaCy word similarity (> 0.8).
CHAIR: the share of named objects that are hallucinated; Cover: the share of present objects named; Hal: the share
of descriptions with at least one hallucinated object; Cog: the share of the absent-but-plausible objects named.
All four are ratios of sums over the descriptions, in percent, exactly as AMBER's inference.py computes them.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one description per image.
    references: not used (AMBER's annotations are the ground truth).
    images (list): each description's AMBER image: an id (12), "AMBER_12", "AMBER_12.jpg" or a path to that file.
    region_features, batch_size: not used.
    show_progress (bool, optional): a tqdm bar (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    amber_chair (float): CHAIR over all descriptions, in percent (lower is better).
    scores (list of float): each description's own CHAIR (0 when it names no AMBER object).
    amber_cover, amber_hal, amber_cog (list of float): each description's own Cover, Hal (0 or 100) and Cog.
    means (dict): the corpus Cover, Hal and Cog, ratios of sums like CHAIR.
    amber_objects, amber_hallucinated (list of list of str): the AMBER objects each description names, and those
        counted as hallucinations.
    hashcode (str): data, spaCy model, threshold and capeval version.

Examples:
    Each description names its AMBER image:

    >>> import capeval
    >>> amber = capeval.load("amber")
    >>> amber.compute(predictions=["A dog sleeps on a sofa."])
    Traceback (most recent call last):
    ...
    ValueError: AMBER needs each description's AMBER image: pass images=[id, ...] (12, 'AMBER_12', 'AMBER_12.jpg' or a path), one per prediction

    AMBER's data files come from its repository (downloaded once), or from a folder holding them in AMBER's format,
    such as the small sample capeval ships (two generative images and one question of its own, not AMBER's):

    >>> from capeval.samples import sample_amber_data
    >>> amber = capeval.load("amber", data_dir=sample_amber_data())
    >>> amber.scorer.data().entry(1)
    AmberEntry(id=1, truth=('dog', 'sofa', 'lamp'), hallu=('cat', 'table'))
    >>> amber.compute(predictions=["A dog on a sofa."], images=["AMBER_3.jpg"])
    Traceback (most recent call last):
    ...
    ValueError: images[0]: AMBER id 3 is a discriminative-existence question, not a generative one: the amber metric scores descriptions of the generative images

    With NLTK's tagger and spaCy's en_core_web_lg installed, amber.compute(predictions=["A dog on a sofa."],
    images=[1]) names dog and sofa, both true: CHAIR 0.0, Cover 66.6 (2 of 3 objects: 2 / 3.001, as every
    denominator starts at metrics.txt's 0.001), Hal 0.1 (100 - 1 / 1.001 in percent), Cog 0.0.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Amber(CaptionMetric):
    scorer_class = AmberScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2311.07397",
            codebase_urls=["https://github.com/junyangwang0410/AMBER"],
            reference_urls=["https://arxiv.org/abs/2311.07397"],
        )
