"""CLIP-S and RefCLIP-S: CLIPScore, a reference-free image-caption metric (Hessel et al., EMNLP 2021)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.clip import ClipScoreScorer

_CITATION = """\
@inproceedings{hessel-etal-2021-clipscore,
    title = "{CLIPS}core: A Reference-free Evaluation Metric for Image Captioning",
    author = "Hessel, Jack and Holtzman, Ari and Forbes, Maxwell and Le Bras, Ronan and Choi, Yejin",
    booktitle = "Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing",
    year = "2021",
    pages = "7514--7528",
    url = "https://aclanthology.org/2021.emnlp-main.595",
}
"""

_DESCRIPTION = """\
CLIP-S scores a caption against its image with CLIP ViT-B/32: w * max(cos(image, "A photo depicts " + caption), 0)
with w = 2.5. With references, RefCLIP-S is the harmonic mean 2ab / (a + b) of a = CLIP-S and b = the largest
cosine between the caption and its references (unclipped and unscaled, as released; 0 where a + b = 0).

The default (mode="code") computes what jmhessel/clipscore's clipscore.py computes: text cleaned with ftfy and
HTML unescaping, lower-cased and cut to 77 tokens; features pooled at the first <|endoftext|>; images resized
(bicubic, short side 224) and center-cropped (offset rounded half to even) in their own mode before the RGB
conversion, without EXIF rotation; features L2-normalised in numpy. mode="hf" uses transformers' tokenizer and
image processor as they are instead. dtype="float16" follows the released code's CUDA path.

The text context is the model's (77 ids for OpenAI's CLIPs, 248 for LongCLIP): model_name may be ViT-L/14
("openai/clip-vit-large-patch14") or a LongCLIP in transformers' layout, and checkpoint= loads LongCLIP's released
longclip-B.pt / longclip-L.pt. A caption or reference cut to the context is counted per caption (truncated_texts)
and named in one TextTruncationWarning, never cut silently.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, optional): the references of each candidate; with them the result also
        holds RefCLIP-S. An empty list for every candidate counts as no references.
    images (list): one image per caption: a path, bytes, a PIL image or a datasets.Image value.
    region_features: not used.
    batch_size (int, optional): captions or images per forward pass (default 64).
    show_progress: accepted so ``evaluate.combine`` works; ignored.

Constructor options (``evaluate.load(path, ...)`` or ``capeval.load("clip_score", ...)``):
    model_name (str): hub id or folder of a transformers CLIP model with its tokenizer
        (default "openai/clip-vit-base-patch32", the paper's ViT-B/32; "openai/clip-vit-large-patch14": ViT-L/14).
    checkpoint (str, optional): path or URL of a torch.save file whose OpenAI-layout state dict (itself or its
        "state_dict" entry) replaces model_name's weights, e.g. LongCLIP's longclip-L.pt on
        model_name="openai/clip-vit-large-patch14" (its 248 positions become the context).
    w (float): scale of the image term (default 2.5).
    prefix (str): put before every caption and reference (default "A photo depicts"; a space is added).
    mode (str): "code" (the released preprocessing, default) or "hf" (transformers' processor as is).
    device (str, optional): default CUDA when available.
    dtype (str): "float32" (default) or "float16" (the released code's CUDA precision).

Returns:
    clip_score (float): mean CLIP-S.
    scores, clip_s (list of float): CLIP-S per caption.
    refclip_s (list of float): RefCLIP-S per caption (with references).
    means (dict): {"refclip_s": mean RefCLIP-S} (with references).
    truncated_texts (list of int): per caption, how many of its texts (the caption, its references) were longer
        than the text encoder's context and cut to it.
    hashcode (str): model, checkpoint (when given), w, prefix, mode, dtype and capeval version.

Examples:
    A small random CLIP stands in for openai/clip-vit-base-patch32 here:

    >>> import tempfile
    >>> import capeval
    >>> from PIL import Image
    >>> from capeval.backbones.clip import save_random_clip
    >>> clip_score = capeval.load("clip_score", model_name=save_random_clip(tempfile.mkdtemp()), device="cpu")
    >>> images = [Image.new("RGB", (64, 48), "red"), Image.new("L", (30, 90), 200)]
    >>> results = clip_score.compute(predictions=["a red car", "two people in the street"], images=images)
    >>> [round(s, 4) for s in results["clip_s"]], round(results["clip_score"], 4)
    ([0.5284, 0.4338], 0.4811)
    >>> results = clip_score.compute(predictions=["a red car", "two people in the street"], images=images,
    ...                              references=[["a car"], ["people in a street", "a street"]])
    >>> [round(s, 4) for s in results["refclip_s"]]
    [0.6426, 0.5981]

    Without images there is nothing to score:

    >>> clip_score.compute(predictions=["a red car"])
    Traceback (most recent call last):
    ...
    ValueError: CLIP-S / RefCLIP-S scores captions against images: pass images=[...] (one per caption)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ClipScore(CaptionMetric):
    scorer_class = ClipScoreScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2021.emnlp-main.595",
            codebase_urls=["https://github.com/jmhessel/clipscore"],
            reference_urls=["https://aclanthology.org/2021.emnlp-main.595", "https://arxiv.org/abs/2104.08718"],
        )
