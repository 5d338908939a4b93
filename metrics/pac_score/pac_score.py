"""PAC-S and RefPAC-S: positive-augmented contrastive learning for captioning evaluation (Sarto et al., CVPR 2023),
and PAC-S++ / RefPAC-S++ (Sarto et al., IJCV 2025)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.clip import PacScoreScorer

_CITATION = """\
@inproceedings{sarto2023positive,
    title = {Positive-Augmented Contrastive Learning for Image and Video Captioning Evaluation},
    author = {Sarto, Sara and Barraco, Manuele and Cornia, Marcella and Baraldi, Lorenzo and Cucchiara, Rita},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition},
    year = {2023},
    pages = {6914--6924},
}
@article{sarto2025positive,
    title = {Positive-Augmented Contrastive Learning for Vision-and-Language Evaluation and Training},
    author = {Sarto, Sara and Moratelli, Nicholas and Cornia, Marcella and Baraldi, Lorenzo and Cucchiara, Rita},
    journal = {International Journal of Computer Vision},
    year = {2025},
}
"""

_DESCRIPTION = """\
PAC-S scores a caption against its image with CLIP ViT-B/32 fine-tuned by positive-augmented contrastive learning
(the released clip_ViT-B-32.pth): 2.0 * max(cos(image, "A photo depicts " + caption), 0). With references,
RefPAC-S is 2ab / (a + b) with a = PAC-S and b = the largest cosine between the caption and its references
(unclipped and unscaled, as released; 0 where a + b = 0).

Computed as aimagelab/pacscore's pac_score.py computes it: the preprocessing of CLIPScore's released code (text
cleaned with ftfy and HTML unescaping, lower-cased, cut to 77 tokens; features pooled at the first <|endoftext|>;
images resized and center-cropped in their own mode before the RGB conversion, no EXIF rotation), the model in
float32, features L2-normalised in numpy. The checkpoint (a dict whose "state_dict" is in OpenAI CLIP's key layout)
is mapped onto transformers' CLIPModel.

variant="pac-s++" scores PAC-S++ (Sarto et al., IJCV 2025): OpenAI CLIP ViT-B/32 or ViT-L/14 with rank-4 LoRA
adapters, its published checkpoint (PAC++_clip_ViT-B-32.pth / PAC++_clip_ViT-L-14.pth) downloaded once by default,
computed as aimagelab/pacscore's compute_correlations_pac++.py loads it: the attention and patch-embedding adapters
applied, the MLP adapters unused (the MLP weights as the checkpoint stores them). PAC-S's OpenCLIP ViT-L/14 checkpoint
runs on model_name="laion/CLIP-ViT-L-14-laion2B-s32B-b82K" with open_clip's pixel normalisation (mean = std = 0.5).
A caption or reference cut to the 77-token context is counted per caption (truncated_texts) and named in a warning.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, optional): the references of each candidate; with them the result also
        holds RefPAC-S. An empty list for every candidate counts as no references.
    images (list): one image per caption: a path, bytes, a PIL image or a datasets.Image value.
    region_features: not used.
    batch_size (int, optional): captions or images per forward pass (default 64).
    show_progress: accepted so ``evaluate.combine`` works; ignored.

Constructor options (``evaluate.load(path, ...)`` or ``capeval.load("pac_score", ...)``):
    variant (str): "pac-s" (default) or "pac-s++".
    checkpoint (str): path or URL of the released weights (a URL is downloaded once): PAC-S's clip_ViT-B-32.pth
        (required for "pac-s"); for "pac-s++" the default is the published checkpoint of model_name.
    model_name (str): hub id or folder giving the CLIP architecture and tokenizer (default
        "openai/clip-vit-base-patch32"; "openai/clip-vit-large-patch14" for PAC-S++ ViT-L/14,
        "laion/CLIP-ViT-L-14-laion2B-s32B-b82K" for PAC-S's openClip_ViT-L-14.pth; its weights are not loaded).
    w (float): scale of the image term (default 2.0).
    prefix (str): put before every caption and reference (default "A photo depicts"; a space is added).
    mode (str): "code" (the released preprocessing, default) or "hf" (transformers' processor as is).
    device (str, optional): default CUDA when available.
    dtype (str): "float32" (default, as released) or "float16".

Returns:
    pac_score (float): mean PAC-S.
    scores, pac_s (list of float): PAC-S per caption.
    refpac_s (list of float): RefPAC-S per caption (with references).
    means (dict): {"refpac_s": mean RefPAC-S} (with references).
    truncated_texts (list of int): per caption, how many of its texts (the caption, its references) were cut to the
        77-token context.
    hashcode (str): checkpoint, model, w, prefix, mode, dtype, variant and capeval version.

Examples:
    A small random CLIP, saved in the checkpoint's layout, stands in for clip_ViT-B-32.pth here:

    >>> import tempfile
    >>> import capeval
    >>> from PIL import Image
    >>> from capeval.backbones.clip import save_openai_checkpoint, save_random_clip
    >>> folder = save_random_clip(tempfile.mkdtemp(), seed=2)
    >>> checkpoint = save_openai_checkpoint(folder, f"{folder}/clip_ViT-B-32.pth")
    >>> pac_score = capeval.load("pac_score", checkpoint=checkpoint, model_name=folder, device="cpu")
    >>> images = [Image.new("RGB", (64, 48), "red"), Image.new("L", (30, 90), 200)]
    >>> results = pac_score.compute(predictions=["a red car", "two people in the street"], images=images,
    ...                             references=[["a car"], ["people in a street", "a street"]])
    >>> [round(s, 4) for s in results["pac_s"]], [round(s, 4) for s in results["refpac_s"]]
    ([0.6067, 0.0], [0.7323, 0.0])

    PAC-S++ reads a checkpoint with LoRA factors (here random ones on the same small CLIP):

    >>> from capeval.backbones.clip import save_pac_lora_checkpoint
    >>> lora = save_pac_lora_checkpoint(folder, f"{folder}/PAC++_clip_ViT-B-32.pth")
    >>> pac_plus_plus = capeval.load("pac_score", variant="pac-s++", checkpoint=lora, model_name=folder, device="cpu")
    >>> results = pac_plus_plus.compute(predictions=["a red car", "two people in the street"], images=images)
    >>> [round(s, 4) for s in results["pac_s"]], results["truncated_texts"]
    ([0.8933, 0.1235], [0, 0])

    Without the checkpoint there is nothing to score with:

    >>> capeval.load("pac_score").compute(predictions=["a red car"], images=images[:1])
    Traceback (most recent call last):
    ...
    ValueError: PAC-S needs its fine-tuned weights: pass checkpoint= (the path or URL of the released clip_ViT-B-32.pth) to the constructor, or variant='pac-s++' for PAC-S++'s published weights
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PacScore(CaptionMetric):
    scorer_class = PacScoreScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://openaccess.thecvf.com/content/CVPR2023/html/Sarto_Positive-Augmented_Contrastive_Learning_for_Image_and_Video_Captioning_Evaluation_CVPR_2023_paper.html",
            codebase_urls=["https://github.com/aimagelab/pacscore"],
            reference_urls=["https://arxiv.org/abs/2303.12112"],
        )
