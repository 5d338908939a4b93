"""Polos: multimodal metric learning from human feedback for image captioning (Wada et al., CVPR 2024)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.polos import PolosScorer

_CITATION = """\
@inproceedings{wada2024polos,
    title = {{Polos: Multimodal Metric Learning from Human Feedback for Image Captioning}},
    author = {Wada, Yuiga and Kaneda, Kanta and Saito, Daichi and Sugiura, Komei},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
    year = {2024},
    pages = {13559--13568},
}
"""

_DESCRIPTION = """\
Polos is a supervised caption score trained on 131K human judgements (the Polaris dataset). For each reference,
a feed-forward head reads SimCSE-RoBERTa vectors of the candidate and the reference (first token after a
ScalarMix with layer norm over every hidden state), their difference and product, and CLIP ViT-B/32 embeddings
of the image, the candidate and the reference (with the prompt "A photo depicts "), their differences and
products; the score is the maximum over references of the head's sigmoid output, in [0, 1].

capeval reproduces the released code (keio-smilab24/Polos) from its Lightning checkpoint without
pytorch-lightning. By default each caption is scored alone with all of its references (the released predict()
with batch size 1); mode="code" reproduces predict()'s batching, where the layer-norm statistics are shared
by a batch and each batch uses only its items' first min(#references) references.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate.
    images (list): one image per caption (path, bytes, PIL image or datasets.Image value); required.
    region_features: not used.
    batch_size (int, optional): texts or images per forward pass (default 64); does not change the scores.
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Constructor options (``evaluate.load(path, ...)``):
    checkpoint (str): the released checkpoint: reprod.zip (default: its URL, downloaded once into
        ~/.cache/capeval), the folder it unpacks to, or the .ckpt with hparams.yaml beside it.
    text_model (str, optional): hub id or folder giving the RoBERTa's config and tokenizer (default: the
        checkpoint's pretrained_model, princeton-nlp/sup-simcse-roberta-base); weights come from the checkpoint.
    clip_model (str): hub id or folder of a transformers CLIPModel (default "openai/clip-vit-base-patch32").
    mode (str): "item" (default) or "code" (see the description).
    predict_batch_size (int, optional): with mode="code", predict()'s batch_size (default: the checkpoint's
        training batch size, predict()'s own default).
    device (str, optional): default CUDA when available.

Returns:
    polos (float): mean score.
    scores (list of float): one score in [0, 1] per caption.
    truncated_texts (list of int): per caption, how many of its texts the CLIP side cut to its 77-token context.
    hashcode (str): checkpoint, models, mode and capeval version.

Examples:
    A random head over all-MiniLM-L6-v2 and a tiny random CLIP stand in for the released models here:

    >>> import tempfile
    >>> import capeval
    >>> from capeval.backbones.clip import save_random_clip
    >>> from capeval.backbones.polos import save_random_polos
    >>> from capeval.declaration import minilm_path
    >>> from capeval.samples import sample_image
    >>> folder = tempfile.mkdtemp()
    >>> clip = save_random_clip(f"{folder}/clip")
    >>> checkpoint = save_random_polos(f"{folder}/reprod", minilm_path(), clip)
    >>> polos = capeval.load("polos", checkpoint=checkpoint, clip_model=clip, device="cpu")
    >>> results = polos.compute(predictions=["two men riding horses in a dirt arena", "a dog runs across the grass"],
    ...                         references=[["two people ride horses in a dirt arena"], ["riders on brown horses in a ring"]],
    ...                         images=[str(sample_image())] * 2)
    >>> [round(s, 4) for s in results["scores"]]
    [0.4428, 0.4436]

    Polos needs the image of every caption:

    >>> polos.compute(predictions=["a horse"], references=[["a horse"]])
    Traceback (most recent call last):
    ...
    ValueError: Polos scores captions against images: pass images=[...] (one per caption)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Polos(CaptionMetric):
    scorer_class = PolosScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://arxiv.org/abs/2402.18091",
            codebase_urls=["https://github.com/keio-smilab24/Polos"],
            reference_urls=["https://arxiv.org/abs/2402.18091", "https://huggingface.co/datasets/yuwd/Polaris"],
        )
