"""UMIC: an unreferenced metric for image captioning via contrastive learning (Lee et al., ACL 2021)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.umic import UmicScorer

_CITATION = """\
@inproceedings{lee-etal-2021-umic,
    title = "{UMIC}: An Unreferenced Metric for Image Captioning via Contrastive Learning",
    author = "Lee, Hwanhee and Yoon, Seunghyun and Dernoncourt, Franck and Bui, Trung and Jung, Kyomin",
    booktitle = "Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing (Volume 2: Short Papers)",
    year = "2021",
    pages = "220--226",
    url = "https://aclanthology.org/2021.acl-short.29",
}
"""

_DESCRIPTION = """\
UMIC scores a caption against its image, without references. A UNITER-base model fine-tuned contrastively
(against captions with substituted, reordered, repeated or removed words and captions of similar images)
reads "[CLS] caption [SEP]" together with the image's bottom-up-attention region features; the score is the
sigmoid of a linear head on the pooled [CLS] state, in [0, 1].

The default reproduces the released code: captions are lower-cased (as the benchmark data was) and each
whitespace word is word-pieced separately without truncation; the first clamp(#(conf > 0.2), 10, 100) regions
are used, from fp16 features, with the 7-d box position; the sigmoid is taken in float64. UMIC was trained on
BUTD features (ResNet-101 Faster R-CNN on Visual Genome): pass those as region_features for meaningful scores.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions. An empty caption is scored as "[CLS] [SEP]" with its image.
    references: not used (UMIC is reference-free); may be None.
    images (list, optional): one image per caption (path, bytes, PIL image or datasets.Image value). Used only
        without region_features; features then come from the ``extractor`` option (an approximation).
    region_features (list, optional): one entry per caption: a BUTD ``.npz`` path or a dict/RegionFeatures
        with ``features`` (N×2048), ``norm_bb`` (N×6) and ``conf`` (N); the format of the released img_dbs.
    batch_size (int, optional): captions per forward pass (default 128 on GPU, as released; 16 on CPU, faster there).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    umic (float): mean score.
    scores (list of float): one score in [0, 1] per caption.
    hashcode (str): checkpoint, tokenizer, casing, feature source and capeval version.

Examples:
    A random-weight UNITER and a tiny cased vocabulary stand in for umic.pt and bert-base-cased here:

    >>> import tempfile
    >>> import capeval
    >>> import numpy as np
    >>> from transformers import BertTokenizer
    >>> from capeval.backbones.uniter import save_random_checkpoint, uniter_config
    >>> folder = tempfile.mkdtemp()
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "two", "man", "men", "riding", "horse", "##s", "."]
    >>> _ = BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=False, model_max_length=512).save_pretrained(folder)
    >>> config = uniter_config(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    >>> checkpoint = save_random_checkpoint(f"{folder}/umic-random.pt", config, seed=0)
    >>> umic = capeval.load("umic", checkpoint=checkpoint, tokenizer=folder, num_attention_heads=4, device="cpu")
    >>> rng = np.random.default_rng(0)
    >>> image = {"features": rng.random((36, 2048)).astype(np.float16), "norm_bb": np.tile([0.1, 0.2, 0.5, 0.6, 0.4, 0.4], (36, 1)),
    ...          "conf": np.linspace(0.9, 0.1, 36)}
    >>> results = umic.compute(predictions=["Two men riding horses.", "a horse"], region_features=[image, image])
    >>> [round(s, 4) for s in results["scores"]]
    [0.8711, 0.5794]

    Without features or images there is nothing to score:

    >>> umic.compute(predictions=["a horse"])
    Traceback (most recent call last):
    ...
    ValueError: UMIC scores captions against images: pass region_features=[...] (BUTD features, one per caption) or images=[...] with an extractor
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Umic(CaptionMetric):
    scorer_class = UmicScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2021.acl-short.29",
            codebase_urls=["https://github.com/hwanheelee1993/UMIC"],
            reference_urls=["https://aclanthology.org/2021.acl-short.29", "https://arxiv.org/abs/2106.14019"],
        )
