"""SPICE 1.0 for image captions, through the SPICE jar that pycocoevalcap ships (Anderson et al., ECCV 2016)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.spice import SpiceScorer

_CITATION = """\
@inproceedings{anderson2016spice,
    title = {SPICE: Semantic Propositional Image Caption Evaluation},
    author = {Anderson, Peter and Fernando, Basura and Johnson, Mark and Gould, Stephen},
    booktitle = {Computer Vision -- ECCV 2016},
    year = {2016},
    pages = {382--398},
}
"""

_DESCRIPTION = """\
SPICE 1.0 as the COCO caption evaluation toolkit runs it: pycocoevalcap's spice-1.0.jar parses each candidate and its
references with Stanford CoreNLP 3.6.0 into scene-graph tuples (objects, attributes, relations) and scores the
candidate's tuples against the union of the references' (F-score, WordNet synonyms matching), on PTB-tokenized
captions. The numbers are the jar's; capeval runs it so that it works on current Java versions, fetches CoreNLP
only through ``capeval download spice``, caches each caption's result and scores in chunks that survive a bad caption.
Needs Java 8+ and ``pip install capeval[spice]``.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ``show_progress``
        shows a progress bar over the captions the jar scores.

Returns:
    spice (float): corpus SPICE, the mean of the per-caption F-scores (pycocoevalcap's "SPICE").
    scores (list of float): per-caption SPICE (the F-score of all tuples).
    spice_precision, spice_recall (list of float): per-caption precision and recall of all tuples.
    spice_object, spice_attribute, spice_relation, spice_color, spice_count, spice_size (list of float): per-caption
        F-scores of those tuples (each with ``_precision`` and ``_recall``); NaN where the references hold none.
    means (dict): the corpus value of every other column, over the captions where it is defined.
    hashcode (str): SPICE version, options and capeval version.

Examples:
    >>> import capeval
    >>> spice = capeval.load("spice")
    >>> spice.scorer.options()
    {'version': '1.0', 'synonyms': True, 'tokenizer': 'ptb'}
    >>> results = spice.compute(predictions=["A dog runs on the grass."],
    ...                         references=[["A dog running on grass.", "The dog runs on the green grass."]])  # doctest: +SKIP

    Without Stanford CoreNLP, ``compute`` raises ``capeval.models.ModelUnavailableError`` saying what to run:
    >>> from capeval.scoring.spice import CORENLP_MISSING
    >>> CORENLP_MISSING[:79]
    'SPICE needs Stanford CoreNLP 3.6.0, which is not installed: run `capeval downlo'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Spice(CaptionMetric):
    scorer_class = SpiceScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://panderson.me/spice/",
            codebase_urls=["https://github.com/peteanderson80/SPICE", "https://github.com/salaniz/pycocoevalcap"],
            reference_urls=["https://arxiv.org/abs/1607.08822", "https://arxiv.org/abs/1504.00325"],
        )
