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

_KWARGS_DESCRIPTION = ExpertScorer.module_usage(references=None, example_options="adapter=None, ", example_scores="[0.2286]")


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
