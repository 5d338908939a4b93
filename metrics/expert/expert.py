"""EXPERT: an explainable image captioning evaluation metric with structured explanations (Kim et al., ACL 2025 Findings)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.expert import ExpertScorer

_CITATION = """\
@article{kim2025expert,
    title = {{EXPERT}: An Explainable Image Captioning Evaluation Metric with Structured Explanations},
    author = {Kim, Hyunjong and Kim, Sangyeop and Jeong, Jongheon and Cho, Yeongjae and Cho, Sungzoon},
    journal = {arXiv preprint arXiv:2506.24016},
    year = {2025},
}
"""

_DESCRIPTION = """\
EXPERT fine-tunes LLaVA-1.5-13B with LoRA on structured explanations (fluency, relevance, descriptiveness) and rates
a caption of an image on a scale of 0.0 to 1.0, the rating smoothed over its digits' probabilities as FLEUR smooths
it. capeval reproduces the released code (hjkim811/EXPERT expert.py): its prompts in the llava_v0 conversation the
released code renders, LLaVA's pad preprocessing, greedy decoding, the released LoRA merged into transformers'
Llava; explain=True asks the second turn and puts the parsed explanation in the details. An answer the released code
cannot score is NaN, named in a warning, and left out of the corpus value.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    images (list): one image per caption (path, bytes, PIL image or datasets.Image value); required.
    batch_size (int, optional): captions per generate() call (default 8).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Constructor options (``evaluate.load(path, ...)``): see the card's option table (model, adapter, explain,
max_new_tokens, device, dtype).

Returns:
    expert (float): mean smoothed rating over the captions whose answer could be scored.
    scores (list of float): per caption, in [0, 1]; NaN where the answer gives no rating.
    answer (list of str): the judge's answer; unscored (list of bool); explanation (with explain=True).
    hashcode (str): judge model, adapter, options and capeval version.

Examples:
    A scripted tiny Llava (it always answers "0.7"), without the LoRA, stands in for EXPERT here:

    >>> import tempfile
    >>> import capeval
    >>> from capeval.backbones.llava import save_scripted_llava
    >>> from capeval.samples import sample_image
    >>> expert = capeval.load("expert", model=save_scripted_llava(tempfile.mkdtemp()), adapter=None, device="cpu")
    >>> results = expert.compute(predictions=["a dog runs across the grass"], images=[str(sample_image())])
    >>> [round(s, 4) for s in results["scores"]], results["answer"]
    ([0.2286], ['0.7'])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Expert(CaptionMetric):
    scorer_class = ExpertScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2506.24016",
            codebase_urls=["https://github.com/hjkim811/EXPERT"],
            reference_urls=["https://arxiv.org/abs/2506.24016"],
        )
