"""G-VEval: a GPT-4o judge's expected score from its log-probabilities (Tong et al., 2024)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.gveval import GvevalScorer

_CITATION = """\
@article{tong2024gveval,
    title = "{G-VEval}: A Versatile Metric for Evaluating Image and Video Captions Using {GPT-4o}",
    author = "Tong, Tony Cheng and He, Sirui and Shao, Zhiwen and Yeung, Dit-Yan",
    journal = "arXiv preprint arXiv:2412.13647",
    year = "2024",
}
"""

_DESCRIPTION = """\
G-VEval gives a vision language model the released prompt (ref-only, ref-free or combined: references, the image,
or both), lets it reason and end with "The final score is $N$.", and scores the caption with the expected value of
N over the top-5 log-probabilities of the token after the first '$' (0 to 100). The judge runs on an
OpenAI-compatible server that returns log-probabilities (base_url); answers are cached, so a rerun sends nothing.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate (ref-only, combined).
    images (list, optional): one image per caption (ref-free, combined): a path, bytes, PIL image or datasets.Image value.
    region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    g_veval (float): mean score over the captions that could be scored.
    scores (list of float): per-caption score in [0, 100]; NaN (named in a warning) where no answer could be read.
    reason (list of str): the judge's answer per caption.
    prompt_tokens, completion_tokens (list of int): the server's token counts of each caption's last answer.
    hashcode (str): judge model, revision, setting, decoding and capeval version.

Examples:
    A judge server is needed (nothing is sent anywhere without base_url); what a run would send is known first:

    >>> import capeval
    >>> plan, = capeval.dry_run(["a dog runs"], [["a dog running"]], metrics=["g_veval:base_url=http://127.0.0.1:8000/v1"])
    >>> plan.requests, plan.judge
    (1, 'gpt-4o-2024-05-13')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Gveval(CaptionMetric):
    scorer_class = GvevalScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2412.13647",
            codebase_urls=["https://github.com/ztangaj/gveval"],
            reference_urls=["https://arxiv.org/abs/2412.13647"],
        )
