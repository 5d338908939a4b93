"""CLAIR: a language model judges whether a caption describes the same image as its references (Chan et al., EMNLP 2023)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.clair import ClairScorer

_CITATION = """\
@inproceedings{chan-etal-2023-clair,
    title = "{CLAIR}: Evaluating Image Captions with Large Language Models",
    author = "Chan, David and Petryk, Suzanne and Gonzalez, Joseph and Darrell, Trevor and Canny, John",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing",
    year = "2023",
    pages = "13638--13646",
    url = "https://aclanthology.org/2023.emnlp-main.841",
}
"""

_DESCRIPTION = """\
CLAIR asks a text language model, with the released prompt, how likely (0 to 100) a candidate caption describes the
same image as its references, and reads the JSON "score" of its answer (with the released fallbacks); the score is
that number / 100. The judge runs on an OpenAI-compatible server the user names (base_url); answers are cached, so a
rerun sends nothing. Several judges separated by ';' in `model` give CLAIR_E, the mean of their scores.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    clair (float): mean score.
    scores (list of float): per-caption score (the judge's number / 100; not clipped, as released).
    reason (list of str): the judge's reason per caption.
    unparsed (list of list of str): the judges whose answers did not parse after 3 tries (their 0 counted).
    prompt_tokens, completion_tokens (list of int): the server's token counts of each caption's last answer.
    hashcode (str): judge model, revision, decoding and capeval version.

Examples:
    A judge server is needed (nothing is sent anywhere without base_url); what a run would send is known first:

    >>> import capeval
    >>> plan, = capeval.dry_run(["a dog runs"], [["a dog running"]], metrics=["clair:base_url=http://127.0.0.1:8000/v1,model=my-judge"])
    >>> plan.requests, plan.judge
    (1, 'my-judge')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Clair(CaptionMetric):
    scorer_class = ClairScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://davidmchan.github.io/clair/",
            codebase_urls=["https://github.com/DavidMChan/clair"],
            reference_urls=["https://aclanthology.org/2023.emnlp-main.841"],
        )
