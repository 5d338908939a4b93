"""METEOR 1.5 for image captions, through the COCO caption toolkit's Java jar (Denkowski & Lavie, 2014)."""

import shutil

import evaluate

from capeval.inputs import hashcode
from capeval.metric_base import CaptionMetric
from capeval.metric_base import text_features
from capeval.text.ptb import check_tokenizer
from capeval.text.ptb import coco_inputs

_CITATION = """\
@inproceedings{denkowski-lavie-2014-meteor,
    title = "Meteor Universal: Language Specific Translation Evaluation for Any Target Language",
    author = "Denkowski, Michael and Lavie, Alon",
    booktitle = "Proceedings of the Ninth Workshop on Statistical Machine Translation",
    year = "2014",
    pages = "376--380",
}
"""

_DESCRIPTION = """\
METEOR 1.5 as the COCO caption evaluation toolkit runs it: pycocoevalcap's meteor-1.5.jar (English,
normalised, exact/stem/synonym/paraphrase matching) on PTB-tokenized captions. It needs Java and the optional
``pycocoevalcap`` package (``pip install capeval[meteor]``). The corpus score is METEOR's own aggregate over
the summed statistics, not the mean of the per-caption scores.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images, region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Constructor options (``evaluate.load(path, ...)``):
    tokenizer (str): "ptb" (pure-Python PTB tokenization, default), "ptb-java" (the CoreNLP jar) or "none".

Returns:
    meteor (float): corpus METEOR, the toolkit's "METEOR".
    scores (list of float): per-caption METEOR.
    hashcode (str): tokenizer and capeval version.

Examples:
    >>> import evaluate
    >>> meteor = evaluate.load("metrics/meteor")
    >>> results = meteor.compute(predictions=["A dog runs on the grass."],
    ...                          references=[["A dog runs on grass.", "The dog is running."]])
    >>> round(results["scores"][0], 4)
    0.4937

    Without Java the module says so:
    >>> meteor.java_missing_message()[:45]
    'METEOR runs the Java jar of pycocoevalcap and'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Meteor(CaptionMetric):
    def __init__(self, tokenizer="ptb", **kwargs):
        self.tokenizer = check_tokenizer(tokenizer)
        self._scorer = None
        super().__init__(**kwargs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_features(),
            homepage="https://www.cs.cmu.edu/~alavie/METEOR/",
            codebase_urls=["https://github.com/salaniz/pycocoevalcap"],
            reference_urls=["https://aclanthology.org/W14-3348", "https://arxiv.org/abs/1504.00325"],
        )

    @staticmethod
    def java_missing_message():
        return ("METEOR runs the Java jar of pycocoevalcap and needs a Java runtime (java on PATH, Java 8+); "
                "install one (e.g. apt-get install default-jre-headless) or leave METEOR out")

    def scorer(self):
        """The jar process (started once per module instance; it loads METEOR's paraphrase table)."""
        if self._scorer is None:
            if shutil.which("java") is None:
                raise RuntimeError(self.java_missing_message())
            try:
                from pycocoevalcap.meteor.meteor import Meteor as MeteorJar
            except ImportError as error:
                raise ImportError("METEOR needs the optional pycocoevalcap package: pip install capeval[meteor]") from error
            self._scorer = MeteorJar()
        return self._scorer

    def _compute(self, predictions, references, images=None, region_features=None, batch_size=None, show_progress=None):
        candidates, refs = coco_inputs(predictions, references, self.tokenizer)
        corpus, scores = self.scorer().compute_score(dict(enumerate(refs)), {i: [c] for i, c in enumerate(candidates)})
        return {"meteor": float(corpus), "scores": [float(s) for s in scores],
                "hashcode": hashcode("meteor", version="1.5", tokenizer=self.tokenizer)}
