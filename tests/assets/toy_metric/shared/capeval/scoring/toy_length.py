"""A toy metric, the example of adding a metric to capeval: the candidate's length in words over a reference's.

>>> ToyLengthScorer().score(["a dog runs"], [["a dog", "the dog runs fast"]])["toy_length"]
[1.5]
>>> ToyLengthScorer(reference="longest").score(["a dog runs"], [["a dog", "the dog runs fast"]])["toy_length"]
[0.75]
"""

from __future__ import annotations

from typing import Annotated

from ..declaration import OfflineRun, Opt
from .protocol import CaptionScorer, Scores

#: Which reference's length divides the candidate's.
REFERENCE_CHOICES = ("shortest", "longest")


class ToyLengthScorer(CaptionScorer):
    """Words in the candidate over words in its shortest (or longest) non-blank reference."""

    metric, title = "toy_length", "Toy length ratio"
    name = primary = "toy_length"
    value_range = (0.0, None)
    #: A blank reference has no words to divide by.
    blank_references_allowed = False
    offline_runs = (OfflineRun("Toy length ratio"),)

    def __init__(self, *, reference: Annotated[str, Opt("the reference whose word count divides the candidate's",
                                                         choices=REFERENCE_CHOICES)] = "shortest"):
        self.reference = reference

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        pick = min if self.reference == "shortest" else max
        return Scores({"toy_length": [len(candidate.split()) / pick(len(r.split()) for r in refs if r.split())
                                      for candidate, refs in zip(predictions, references)]})

    def options(self) -> dict:
        return {"reference": self.reference}
