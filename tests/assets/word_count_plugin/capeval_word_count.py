"""A capeval metric from another package: the number of words of each caption (no references, no model)."""

from capeval.scoring.protocol import CaptionScorer, Scores


class WordCountScorer(CaptionScorer):
    metric, title = "word_count", "Word count"
    name = primary = "word_count"
    needs_references = False
    value_range = (0.0, None)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        return Scores({"word_count": [len(caption.split()) for caption in predictions]})

    def options(self) -> dict:
        return {}
