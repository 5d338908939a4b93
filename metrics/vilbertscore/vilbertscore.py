"""ViLBERTScore: BERTScore over ViLBERT's image-conditioned token states (Lee et al., Eval4NLP 2020)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.vilbertscore import VilbertScoreScorer

_CITATION = """\
@inproceedings{lee-etal-2020-vilbertscore,
    title = "{V}i{LBERTS}core: Evaluating Image Caption Using Vision-and-Language {BERT}",
    author = "Lee, Hwanhee and Yoon, Seunghyun and Dernoncourt, Franck and Kim, Doo Soon and Bui, Trung and Jung, Kyomin",
    booktitle = "Proceedings of the First Workshop on Evaluation and Comparison of NLP Systems",
    year = "2020",
    pages = "34--39",
    url = "https://aclanthology.org/2020.eval4nlp-1.4",
}
"""

_DESCRIPTION = """\
ViLBERTScore compares a caption with its references as BERTScore does, on token states that ViLBERT computes
with the image: candidate and reference are each encoded together with the image's region features, the
text-stream outputs after the 6th co-attention block are matched greedily by cosine (precision over candidate
tokens, recall over reference tokens, F1), and P, R and F are each averaged over the references.

The default reproduces the released scorer, quirks included (a fixed 37-token window, the task-token output
scored in place of [SEP], masked similarities as 0 inside the maxima, no IDF); mode="clean" is plain BERTScore
on the same states and is not comparable with the paper. The default checkpoint is the 12-in-1 multi-task
ViLBERT (the paper's ViLBERTScore*).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate (the paper used 5; any
        number >= 1 is averaged).
    region_features (list): one entry per caption: a ``.npz``/``.npy`` path or dict with ``features`` (N×2048),
        ``bbox`` (N×4, pixels), ``image_width`` and ``image_height`` (the vilbert-multi-task extractor's format;
        the paper used N = 100), or BUTD features with ``norm_bb``.
    images (list, optional): one image per caption, used only without region_features; features then come from
        the ``extractor`` option (an approximation of the ResNeXt-152 features ViLBERT was trained on).
    batch_size (int, optional): (caption, image) pairs per forward pass (default 64 on GPU, 16 on CPU).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    vilbertscore (float): mean F1.
    scores, f1, precision, recall (list of float): per caption, each in [-1, 1].
    means (dict): the mean of precision, recall and f1.
    hashcode (str): checkpoint, config, tokenizer, layer, mode, feature source, box and reference counts.

Examples:
    A random ViLBERT (2 co-attention blocks) and a tiny vocabulary stand in for the released model here:

    >>> import json, tempfile
    >>> import capeval
    >>> import numpy as np
    >>> from transformers import BertTokenizer
    >>> from capeval.backbones.vilbert import read_vilbert_config, save_random_checkpoint
    >>> folder = tempfile.mkdtemp()
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "two", "men", "riding", "horse", "##s", "on", "."]
    >>> _ = BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True).save_pretrained(folder)
    >>> with open(f"{folder}/tiny.json", "w") as handle:
    ...     json.dump({"vocab_size": len(vocab), "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
    ...                "v_hidden_size": 32, "v_num_attention_heads": 4, "v_intermediate_size": 64, "bi_hidden_size": 32,
    ...                "bi_num_attention_heads": 4}, handle)
    >>> checkpoint = save_random_checkpoint(f"{folder}/random.bin", read_vilbert_config(f"{folder}/tiny.json"))
    >>> vilbertscore = capeval.load("vilbertscore", checkpoint=checkpoint, config=f"{folder}/tiny.json",
    ...                              tokenizer=folder, device="cpu")
    >>> rng = np.random.default_rng(0)
    >>> image = {"features": rng.random((100, 2048), dtype=np.float32), "bbox": np.tile([10.0, 20.0, 200.0, 150.0], (100, 1)),
    ...          "image_width": 640, "image_height": 480}
    >>> results = vilbertscore.compute(predictions=["Two men riding horses."], references=[["men riding horses", "a horse"]],
    ...                                region_features=[image])
    >>> [round(results[column][0], 3) for column in ("precision", "recall", "f1")]
    [0.657, 0.781, 0.713]

    Without features or images there is nothing to encode the captions with:

    >>> vilbertscore.compute(predictions=["a horse"], references=[["a horse"]])
    Traceback (most recent call last):
    ...
    ValueError: ViLBERTScore scores captions against images: pass region_features=[...] (ViLBERT features, one per caption) or images=[...] with an extractor
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Vilbertscore(CaptionMetric):
    scorer_class = VilbertScoreScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2020.eval4nlp-1.4",
            codebase_urls=["https://github.com/hwanheelee1993/ViLBERTScore", "https://github.com/facebookresearch/vilbert-multi-task"],
            reference_urls=["https://aclanthology.org/2020.eval4nlp-1.4", "https://arxiv.org/abs/2011.00436"],
        )
