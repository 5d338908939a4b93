"""ViLBERTScore (Lee et al., Eval4NLP 2020): BERTScore on ViLBERT's image-conditioned text states.

Candidate and reference are each encoded together with the candidate's image; their text-stream outputs
after one co-attention block are matched greedily by cosine (P over candidate tokens, R over reference
tokens, F = 2PR/(P+R)), and P, R and F are each averaged over the references.

``mode="code"`` (default) reproduces the released scorer (hwanheelee1993/ViLBERTScore
``compute_vilbertscore.py``, ``utils.bert_score``, ``dataset.py``):

* text: lower-cased, ``[CLS] pieces [SEP]`` in a fixed window of 37 ids, so captions of more than 35 word
  pieces are cut and lose [SEP]; the multi-task model inserts task token 7 ("RetrievalCOCO") after [CLS];
* scored tokens: the 37-long input mask is applied to the 38 outputs shifted by one, so the scored rows are
  the task-token output and the word pieces ([CLS] and [SEP] are not scored);
* masked similarity entries are 0, not −∞, and take part in the maxima (a max is never below 0 when the
  other caption leaves part of its window empty);
* no IDF, no baseline rescaling; F is the mean of the per-reference F values, not recomputed from the means.

With ``pretrained_model.bin`` (no task token) the released scorer crashes; capeval then scores the word
pieces inside the same window (rows 1..35 of the 37 outputs) and keeps everything else — an assumption, as
nobody could run it.

``mode="clean"`` is plain BERTScore on the same states: word pieces only (no [CLS], task token or [SEP]),
masked pairs excluded (−∞), no fixed window (captions up to the 512 positions). Its numbers are **not
comparable** with the paper's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

from ..backbones.common import device_batch_size, length_batches, pad_ids, pad_rows, prefetched, token_budget_batches
from ..backbones.graphs import CapturedGraphs
from ..backbones.precision import autocast_forward, reduced_precision
from ..backbones.vilbert import DEFAULT_CONFIG_NAME, VilbertModel, load_vilbert, read_vilbert_config
from ..declaration import Opt
from ..finite import require_finite, unit_rows
from ..needs import HubModel, UrlFile
from ..inputs import path_option
from ..models import load_hf_tokenizer, model_id, resolve_device
from ..progress import progress
from ..vision.extractors import check_extractor, regions_for
from ..vision.regions import RegionFeatures
from .matching import match_one_candidate
from .options import Device, Dtype, Extractor, FeatureCacheDir, TokenBudget
from .protocol import CaptionScorer, Scores

#: The released checkpoints: the 12-in-1 multi-task model (the scorer's default, "ViLBERTScore*" in the paper)
#: and the Conceptual Captions pre-trained model ("ViLBERTScore").
#: For neither file do the host nor the authors publish a SHA-256, and none is pinned here (the files could not be fetched to
#: compute one): a download is checked only for completeness and for an HTML page in its place.
MULTI_TASK_CHECKPOINT = "https://dl.fbaipublicfiles.com/vilbert-multi-task/multi_task_model.bin"
PRETRAINED_CHECKPOINT = "https://dl.fbaipublicfiles.com/vilbert-multi-task/pretrained_model.bin"
DEFAULT_TOKENIZER = "bert-base-uncased"
#: The released text window: [CLS] + up to 35 word pieces + [SEP].
MAX_LEN = 37
#: Task token of vilbert-multi-task's "RetrievalCOCO" task, which the released scorer uses.
RETRIEVAL_COCO_TASK = 7
MODES = ("code", "clean")
#: (caption, image) pairs per forward pass: 256 on GPU, where a batch of an image's pairs copies and embeds that image's
#: regions once, so that larger batches cost no more host work per pair; 16 on CPU, where throughput hardly depends on
#: it (measured with a random ViLBERT at the real sizes). Scores do not depend on it beyond ~1e-7.
GPU_BATCH_SIZE, CPU_BATCH_SIZE = 256, 16
#: Fixed-shape batches (``cuda_graphs``, ``torch_compile``) pad the text to a multiple of this many positions, so that the
#: 37-position window of code mode takes five shapes.
TEXT_BUCKET = 8


def released_text_input(pieces: Sequence[int], *, cls_id: int = 101, sep_id: int = 102, max_len: int = MAX_LEN) -> tuple[list[int], list[int]]:
    """The released data code's ids and input mask: ``[CLS] pieces [SEP]`` right-padded with 0 to ``max_len``,
    or cut to the first ``max_len`` ids (losing [SEP] beyond 35 pieces).

    >>> ids, mask = released_text_input([1037, 3899, 3216, 1012])     # "a dog runs ."
    >>> ids[:7], sum(mask), len(ids)
    ([101, 1037, 3899, 3216, 1012, 102, 0], 6, 37)
    """
    ids = [cls_id, *pieces, sep_id][:max_len]
    padding = [0] * (max_len - len(ids))
    return ids + padding, [1] * len(ids) + padding


@dataclass(frozen=True)
class ScoredRows:
    """Which output rows of one encoded caption are scored: ``start..stop−1``, inside a similarity window of
    ``window`` rows (code mode; ``None``: no window, masked pairs excluded).

    >>> ScoredRows(1, 7, 36).floor, ScoredRows(1, 37, 36).floor, ScoredRows(2, 7, None).floor
    (0.0, -inf, -inf)
    """

    start: int
    stop: int
    window: int | None

    @property
    def count(self) -> int:
        return self.stop - self.start

    @property
    def floor(self) -> float:
        """The least value a max over this caption's window can take: 0 where the window has masked (zeroed)
        entries, −∞ where every entry is a real similarity."""
        return 0.0 if self.window is not None and self.count < self.window else -math.inf


def scored_rows(num_pieces: int, *, task_token: bool, mode: str = "code", max_len: int = MAX_LEN) -> ScoredRows:
    """The scored output rows of a caption with ``num_pieces`` word pieces.

    Code mode, task token: ``sim[1:-1, 1:-1]`` keeps rows 1..36 of the 38 outputs, and ``input_mask[1:]`` has
    min(n+1, 36) ones, which land on rows 1..k: the task token and the word pieces. Code mode, no task token
    (assumed): the word pieces among rows 1..35 of the 37 outputs. Clean mode: exactly the word pieces.

    >>> scored_rows(5, task_token=True), scored_rows(40, task_token=True).count
    (ScoredRows(start=1, stop=7, window=36), 36)
    >>> scored_rows(5, task_token=False), scored_rows(40, task_token=False).count
    (ScoredRows(start=1, stop=6, window=35), 35)
    >>> scored_rows(5, task_token=True, mode="clean")
    ScoredRows(start=2, stop=7, window=None)
    """
    if mode == "clean":
        first = 2 if task_token else 1  # after [CLS] and the task token
        return ScoredRows(first, first + num_pieces, None)
    if task_token:
        window = max_len - 1
        return ScoredRows(1, 1 + min(num_pieces + 1, window), window)
    window = max_len - 2
    return ScoredRows(1, 1 + min(num_pieces, window), window)


def match_references(candidate: np.ndarray, candidate_rows: ScoredRows, references: Sequence[np.ndarray],
                     reference_rows: Sequence[ScoredRows]) -> tuple[float, float, float]:
    """P, R, F of one candidate, each the mean over its references of the greedy cosine match.

    ``candidate`` and each reference hold their scored rows only, L2-normalised. A max over a window with
    masked entries is at least 0 (:attr:`ScoredRows.floor`); a caption with no scored rows scores 0.

    >>> e = np.eye(3, dtype=np.float32)          # candidate rows e0, e1; references (e0, e1) and (−e1)
    >>> match_references(e[:2], ScoredRows(1, 3, 36), [e[:2], -e[1:2]], [ScoredRows(1, 3, 36), ScoredRows(1, 2, 36)])
    (0.5, 0.5, 0.5)
    >>> match_references(e[:2], ScoredRows(2, 4, None), [e[:2], -e[1:2]], [ScoredRows(2, 4, None), ScoredRows(2, 3, None)])
    (0.25, 0.5, 0.5)
    """
    if candidate_rows.count == 0:
        return 0.0, 0.0, 0.0
    p, r, f = match_one_candidate(
        candidate, np.ones(len(candidate), dtype=np.float32),
        np.concatenate(references), np.ones(sum(len(ref) for ref in references), dtype=np.float32),
        [len(ref) for ref in references],
        precision_floors=np.array([rows.floor for rows in reference_rows]),
        recall_floors=np.full(len(references), candidate_rows.floor))
    return average_over_references(p, r, f)


def average_over_references(precision: Sequence[float] | np.ndarray, recall: Sequence[float] | np.ndarray,
                            f1: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
    """The mean P, R and F over references; F is averaged, not recomputed from the mean P and R.

    >>> [round(v, 4) for v in average_over_references([0.9, 0.5], [0.7, 0.9], [0.7875, 0.6429])]
    [0.7, 0.8, 0.7152]
    """
    return float(np.mean(precision)), float(np.mean(recall)), float(np.mean(f1))


def first_equal_images(regions: Sequence[RegionFeatures]) -> list[int]:
    """Per item, the index of the first item with the same model input (features and locations), so an image given
    twice is encoded once. The same object is recognised by identity; different objects are compared in full only
    when their shapes, locations and first feature row agree (a cheap signature), so distinct images cost no hashing.

    >>> a = RegionFeatures.from_pixel_boxes(np.ones((2, 4)), [[0, 0, 5, 5]] * 2, 10, 10)
    >>> b = RegionFeatures.from_pixel_boxes(np.ones((2, 4)), [[0, 0, 5, 5]] * 2, 10, 10)
    >>> c = RegionFeatures.from_pixel_boxes(np.ones((2, 4)) * [1, 1, 1, 2], [[0, 0, 5, 5]] * 2, 10, 10)
    >>> first_equal_images([a, b, c, a, c])
    [0, 0, 2, 0, 2]
    """
    by_object: dict[int, int] = {}
    by_signature: dict[tuple, list[int]] = {}
    firsts = []
    for index, item in enumerate(regions):
        if id(item) not in by_object:
            locations = item.vilbert_loc5()
            # The stored dtype is part of the input: code mode rounds the mean of fp16 features to fp16.
            signature = (item.features.shape, item.features.dtype.str, item.features[0].tobytes(), locations.tobytes())
            candidates = by_signature.setdefault(signature, [])
            match = next((j for j in candidates if np.array_equal(regions[j].features, item.features)), None)
            if match is None:
                candidates.append(index)
            by_object[id(item)] = index if match is None else match
        firsts.append(by_object[id(item)])
    return firsts


def grouped_by_image(pairs: Sequence[tuple[str, int]], text_length: Callable[[tuple[str, int]], int],
                     image_length: Callable[[tuple[str, int]], int]) -> Callable[[tuple[str, int]], tuple[int, int, int, int]]:
    """A sort key that keeps each image's pairs together, so that a batch copies and embeds an image's regions once:
    images by region count, then by the longest text among their pairs (little text padding per batch), pairs of one
    image by text length.

    >>> pairs = [("a dog", 0), ("a cat on a mat", 1), ("a dog runs", 1), ("dogs", 0)]
    >>> sorted(pairs, key=grouped_by_image(pairs, lambda p: len(p[0].split()), lambda p: 10))
    [('dogs', 0), ('a dog', 0), ('a dog runs', 1), ('a cat on a mat', 1)]
    """
    longest: dict[int, int] = {}
    for pair in pairs:
        longest[pair[1]] = max(longest.get(pair[1], 0), text_length(pair))
    return lambda pair: (image_length(pair), longest[pair[1]], pair[1], text_length(pair))


def _grown(tensor: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    """``tensor`` zero-padded at the end of each dimension to ``shape``."""
    if tuple(tensor.shape) == tuple(shape):
        return tensor
    grown = tensor.new_zeros(tuple(shape))
    grown[tuple(slice(0, n) for n in tensor.shape)] = tensor
    return grown


def pair_batch_inputs(batch: Sequence[tuple[str, int]], ids: Mapping[str, Sequence[int]],
                      image_inputs: Mapping[int, tuple[np.ndarray, np.ndarray]], *, share_images: bool = True,
                      rows: int | None = None, text_bucket: int = TEXT_BUCKET) -> tuple[torch.Tensor | None, ...]:
    """The model inputs of a batch of (caption, image index) pairs, as :meth:`VilbertModel.forward` takes them:
    input ids and text mask (pairs × L), region features, locations and mask (image rows × R; the mask ``None`` when no
    region is padding) and each pair's image row.

    ``share_images``: one image row per distinct image of the batch, and the pairs' rows (``None`` without: one image
    row per pair). ``rows``: a fixed-shape batch, for CUDA graphs and compiled code: pairs and image rows padded to
    ``rows`` (the extra pairs read image row 0 and attend to nothing), the text to a multiple of ``text_bucket``.

    >>> regions = {0: (np.ones((3, 2), np.float32), np.ones((3, 5), np.float32)), 1: (np.ones((2, 2), np.float32), np.ones((2, 5), np.float32))}
    >>> ids, mask, features, locations, image_mask, index = pair_batch_inputs([("a", 0), ("b", 0)], {"a": [7, 8], "b": [9]}, regions)
    >>> ids.tolist(), tuple(features.shape), image_mask, index.tolist()
    ([[7, 8], [9, 0]], (1, 3, 2), None, [0, 0])
    >>> ids, mask, features, locations, image_mask, index = pair_batch_inputs([("a", 0), ("b", 1)], {"a": [7, 8], "b": [9]}, regions,
    ...                                                                    rows=3, text_bucket=4)
    >>> ids.tolist(), mask.tolist(), tuple(features.shape), image_mask.tolist(), index.tolist()
    ([[7, 8, 0, 0], [9, 0, 0, 0], [0, 0, 0, 0]], [[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]], (3, 3, 2), [[1, 1, 1], [1, 1, 0], [0, 0, 0]], [0, 1, 0])
    """
    images = list(dict.fromkeys(image for _, image in batch)) if share_images else [image for _, image in batch]
    input_ids, text_mask = pad_ids([ids[caption] for caption, _ in batch])
    features, image_mask = pad_rows([image_inputs[image][0] for image in images])
    locations, _ = pad_rows([image_inputs[image][1] for image in images])
    padded_regions = not bool(image_mask.all())
    index = None
    if share_images:
        row_of = {image: row for row, image in enumerate(images)}
        index = torch.tensor([row_of[image] for _, image in batch])
    if rows is not None:
        if len(batch) > rows:
            raise ValueError(f"a fixed-shape batch holds {rows} pairs, got {len(batch)}")
        length = -(-input_ids.shape[1] // text_bucket) * text_bucket
        input_ids, text_mask = _grown(input_ids, (rows, length)), _grown(text_mask, (rows, length))
        features, locations = _grown(features, (rows, *features.shape[1:])), _grown(locations, (rows, *locations.shape[1:]))
        image_mask = _grown(image_mask, (rows, image_mask.shape[1]))
        index = _grown(torch.arange(len(batch)) if index is None else index, (rows,))
    return input_ids, text_mask, features, locations, image_mask if padded_regions else None, index


class VilbertScoreScorer(CaptionScorer):
    """ViLBERTScore P, R and F per caption (see the module docstring).

    Options: ``checkpoint`` (path or URL of a vilbert-multi-task ``.bin``; default the multi-task model,
    downloaded once into the capeval cache), ``config`` (its architecture JSON; default
    ``bert_base_6layer_6conect``), ``tokenizer`` (hub id or folder of an uncased WordPiece vocabulary),
    ``layer`` (the co-attention block whose text output is matched, 1..6; default the last, as released),
    ``mode`` (``"code"`` or ``"clean"``), ``extractor`` and ``feature_cache_dir`` (for ``images`` without
    region features; an approximation), ``device``, ``dtype`` (the forward pass's precision under ``torch.autocast``)
    and ``token_budget`` (batches packed to a padded size instead of a count). Three options change the speed alone:
    ``group_by_image`` (default on: each batch holds whole images' pairs and embeds each image's regions once),
    ``cuda_graphs`` (fixed-shape batches replayed from captured CUDA graphs on CUDA) and ``torch_compile`` (fixed-shape
    batches through ``torch.compile``). Models load on the first :meth:`score`.

    Region features: one per caption, any number N ≥ 1 of boxes with 2048-d features and boxes (ViLBERT's
    ``bbox`` in pixels with ``image_width``/``image_height``, or BUTD's ``norm_bb``). ViLBERT has no fixed box
    count, so other counts are scored as given, but the published numbers used 100 boxes of vqa-maskrcnn-
    benchmark's ResNeXt-152 (the box counts go into the hashcode). References: any number ≥ 1 per caption
    (the paper used 5); every reference is encoded with its candidate's image.

    ``metrics/vilbertscore``'s docstring scores an example end to end with a random ViLBERT.

    >>> VilbertScoreScorer(layer=7)
    Traceback (most recent call last):
    ...
    ValueError: layer must be a co-attention block in 1..6 (this config has 6 blocks), got 7
    """

    metric, title = "vilbertscore", "ViLBERTScore"
    default_models = "12-in-1 multi-task ViLBERT (`multi_task_model.bin`), `bert-base-uncased` tokenizer"
    faithful_to = ('the released `compute_vilbertscore.py`, quirks kept (`mode="code"`); the ViLBERT port to 1.4e-7 of '
                   "an independent transcription")
    inputs_note = "the image as ViLBERT or BUTD region features"
    extras = ("models",)
    needs = (UrlFile(MULTI_TASK_CHECKPOINT, what="ViLBERT checkpoint", kind="weights"), HubModel(DEFAULT_TOKENIZER))
    name = "vilbertscore"
    primary = "f1"
    column_names = ("precision", "recall", "f1")
    needs_images = True
    reads_region_features = True
    value_range = (-1.0, 1.0)
    # The released scorer gives an empty caption a score from its task-token row alone (0.56 with the multi-task
    # model): a number about no words, so every surface refuses such a caption instead (see the card).
    blank_predictions_allowed = False
    blank_references_allowed = False

    def __init__(self, checkpoint: Annotated[str, Opt("local path or URL of a vilbert-multi-task `.bin` (downloaded once into "
                                                      "the capeval cache)", check=path_option)] = MULTI_TASK_CHECKPOINT, *,
                 config: Annotated[str | None, Opt("architecture JSON of the checkpoint; None: bert_base_6layer_6conect")] = None,
                 tokenizer: Annotated[str, Opt("hub id or folder of an uncased WordPiece vocabulary", check=path_option)] = DEFAULT_TOKENIZER,
                 layer: Annotated[int | None, Opt("the co-attention block whose text output is matched; None: the last, as "
                                                  "released")] = None,
                 mode: Annotated[str, Opt("`code` (the released scorer) or `clean` (plain BERTScore on the same states, not "
                                          "comparable with the paper)", choices=MODES)] = "code",
                 extractor: Extractor = None, feature_cache_dir: FeatureCacheDir = None, device: Device = None,
                 dtype: Dtype = "float32", token_budget: TokenBudget = None,
                 group_by_image: Annotated[bool, Opt("batch each image's pairs together and embed its regions once per batch; "
                                                     "False: pairs batched by length alone, each embedding its image (the same "
                                                     "scores, slower)")] = True,
                 cuda_graphs: Annotated[bool, Opt("on CUDA, fixed-shape batches replayed from captured CUDA graphs (one launch "
                                                  "per batch); elsewhere the same fixed-shape batches run as usual")] = False,
                 torch_compile: Annotated[bool, Opt("fixed-shape batches through torch.compile (compiled once per shape; "
                                                    "the first batches wait for the compiler)")] = False):
        try:
            architecture = read_vilbert_config(config)
        except ValueError as error:
            raise ValueError(f"config: {error}") from error
        blocks = architecture.num_coattention_blocks
        layer = blocks if layer is None else layer
        if not 1 <= layer <= blocks:  # an int or None, as declared
            raise ValueError(f"layer must be a co-attention block in 1..{blocks} (this config has {blocks} blocks), got {layer!r}")
        self.checkpoint = checkpoint
        self.config = None if config is None else str(config)
        self.architecture = architecture
        self.tokenizer_name = tokenizer
        self.layer = layer
        self.mode = mode
        self.extractor = check_extractor(extractor)
        self.feature_cache_dir = feature_cache_dir
        self.device = resolve_device(device)
        self.dtype = dtype
        self.token_budget = token_budget
        self.group_by_image, self.cuda_graphs, self.torch_compile = group_by_image, cuda_graphs, torch_compile
        self._forward: Callable[..., torch.Tensor] | None = None

    def options(self) -> dict[str, Any]:
        return {"checkpoint": model_id(self.checkpoint), "config": DEFAULT_CONFIG_NAME if self.config is None else model_id(self.config),
                "tokenizer": model_id(self.tokenizer_name), "layer": self.layer, "mode": self.mode, **reduced_precision(self.dtype)}

    @property
    def model(self) -> VilbertModel:
        """The ViLBERT (cached process-wide, loaded on first use)."""
        return load_vilbert(self.checkpoint, config=self.config, device=self.device)

    @property
    def fixed_shapes(self) -> bool:
        """Whether batches are padded to fixed shapes (what CUDA graphs and compiled code are specialised to)."""
        return self.cuda_graphs or self.torch_compile

    def forward(self) -> Callable[..., torch.Tensor]:
        """The text states of the scored block (float32) from :func:`pair_batch_inputs`' tensors on the device: the
        model under autocast, compiled with ``torch_compile`` and replayed from CUDA graphs with ``cuda_graphs`` on CUDA
        (built once per scorer, so captured graphs and compiled code serve every later call)."""
        if self._forward is None:
            model = self.model
            task_id = RETRIEVAL_COCO_TASK if model.task_token else None
            graphs = self.cuda_graphs and self.device.type == "cuda"

            def states(input_ids: torch.Tensor, text_mask: torch.Tensor, features: torch.Tensor, locations: torch.Tensor,
                       image_mask: torch.Tensor | None, image_index: torch.Tensor | None) -> torch.Tensor:
                with autocast_forward(self.device, self.dtype, cache_casts=not graphs):
                    return model(input_ids, text_mask, features, locations, image_mask, task_id=task_id, blocks=self.layer,
                                 image_index=image_index)[-1].float()

            forward: Callable[..., torch.Tensor] = torch.compile(states) if self.torch_compile else states
            self._forward = CapturedGraphs(forward) if graphs else forward
        return self._forward

    @property
    def tokenizer(self) -> Any:
        """The caption tokenizer (cached process-wide), checked against the model's vocabulary."""
        tokenizer = load_hf_tokenizer(self.tokenizer_name, model_max_length=512)
        vocab = self.architecture.vocab_size
        if len(tokenizer) > vocab:
            raise ValueError(f"the tokenizer {self.tokenizer_name!r} has {len(tokenizer)} entries but the model's vocabulary has "
                             f"{vocab}; ViLBERT needs bert-base-uncased")
        return tokenizer

    def word_pieces(self, captions: Sequence[str]) -> list[list[int]]:
        """The word-piece ids of each lower-cased caption (no special tokens)."""
        return self.tokenizer([caption.lower() for caption in captions], add_special_tokens=False)["input_ids"] if captions else []

    def model_input_ids(self, captions: Sequence[str], pieces: Sequence[Sequence[int]]) -> list[list[int]]:
        """Model input ids per caption: its word pieces in ``[CLS] … [SEP]``, cut to the 37-id window in code
        mode; in clean mode a caption longer than the position table raises ``ValueError``."""
        tokenizer = self.tokenizer
        if self.mode == "code":
            windows = [released_text_input(p, cls_id=tokenizer.cls_token_id, sep_id=tokenizer.sep_token_id) for p in pieces]
            return [ids[: sum(mask)] for ids, mask in windows]  # padding is masked, so it need not be fed
        ids = [[tokenizer.cls_token_id, *p, tokenizer.sep_token_id] for p in pieces]
        limit = self.architecture.max_position_embeddings
        for caption, seq in zip(captions, ids):
            if len(seq) > limit:
                raise ValueError(f"the caption {caption[:40]!r}… has {len(seq)} tokens; ViLBERT's position table holds {limit}")
        return ids

    def _regions(self, count: int, images: list | None, region_features: list | None,
                 show_progress: bool | None) -> tuple[list[RegionFeatures], str]:
        """Region features per caption and what they are (:func:`regions_for`); their shape is checked against the model."""
        regions, features = regions_for("ViLBERTScore", "ViLBERT features", count, images=images, region_features=region_features,
                                        extractor=self.extractor, cache_dir=self.feature_cache_dir, show_progress=show_progress)
        width = self.architecture.v_feature_size
        for i, item in enumerate(regions):
            if item.feature_dim != width:
                raise ValueError(f"region_features[{i}] has {item.feature_dim}-d features; this ViLBERT takes {width}-d "
                                 "(vqa-maskrcnn-benchmark ResNeXt-152 fc6)")
        return regions, features

    def encode(self, pairs: Sequence[tuple[str, int]], regions: Sequence[RegionFeatures], *, batch_size: int | None = None,
               show_progress: bool | None = None) -> dict[tuple[str, int], tuple[np.ndarray, ScoredRows]]:
        """The scored rows (L2-normalised, float32) of each distinct (caption, image index) pair, with their
        :class:`ScoredRows`. Pairs go through the model in batches (``batch_size`` pairs, or as many as fit the scorer's
        ``token_budget``) of similar length, each image's pairs together with ``group_by_image``; each batch is built in
        a background thread (in pinned memory on CUDA) while the previous one runs."""
        model = self.model
        batch_size = device_batch_size(batch_size, self.device, gpu=GPU_BATCH_SIZE, cpu=CPU_BATCH_SIZE)
        captions = list(dict.fromkeys(caption for caption, _ in pairs))
        pieces = self.word_pieces(captions)
        ids = dict(zip(captions, self.model_input_ids(captions, pieces)))
        num_pieces = {caption: len(p) for caption, p in zip(captions, pieces)}
        image_inputs = {i: regions[i].vilbert_inputs(mean_in_stored_dtype=self.mode == "code") for i in {i for _, i in pairs}}
        encoded: dict[tuple[str, int], tuple[np.ndarray, ScoredRows]] = {}

        def text_length(pair: tuple[str, int]) -> int:
            return len(ids[pair[0]])

        def image_length(pair: tuple[str, int]) -> int:
            return len(image_inputs[pair[1]][0])

        def lengths(pair: tuple[str, int]) -> tuple[int, int]:
            return text_length(pair), image_length(pair)

        order = grouped_by_image(pairs, text_length, image_length) if self.group_by_image else lengths
        if self.token_budget:
            batches = token_budget_batches(pairs, self.token_budget, lengths, longest_first=False, key=order)
        else:
            batches = length_batches(pairs, batch_size, order, longest_first=False)
        rows = max(map(len, batches), default=0) if self.fixed_shapes else None
        pin = self.device.type == "cuda"

        def model_inputs(batch: list[tuple[str, int]]) -> tuple[torch.Tensor | None, ...]:
            tensors = pair_batch_inputs(batch, ids, image_inputs, share_images=self.group_by_image, rows=rows)
            return tuple(t.pin_memory() if pin and t is not None else t for t in tensors)

        forward = self.forward()
        with torch.inference_mode():
            for batch, tensors in progress(prefetched(batches, model_inputs), total=len(batches), desc="ViLBERTScore", show=show_progress):
                states = forward(*(None if t is None else t.to(self.device, non_blocking=True) for t in tensors))[: len(batch)]
                require_finite(states, items=[caption for caption, _ in batch], what="ViLBERT states", model=self.checkpoint)
                # Every row normalised on the device and copied back once per batch (not once per pair).
                unit = unit_rows(states, items=[caption for caption, _ in batch], what="ViLBERT states", model=self.checkpoint).cpu().numpy()
                for row, (caption, image) in enumerate(batch):
                    scored = scored_rows(num_pieces[caption], task_token=model.task_token, mode=self.mode)
                    encoded[caption, image] = (unit[row, scored.start : scored.stop], scored)
        return encoded

    def score(self, predictions: list[str], references: list[list[str]] | None = None, *, images: list | None = None,
              region_features: list | None = None, batch_size: int | None = None, show_progress: bool | None = None) -> Scores:
        if references is None:
            raise ValueError("ViLBERTScore needs references: pass one list of reference captions per prediction")
        regions, features = self._regions(len(predictions), images, region_features, show_progress)
        # One index per distinct image, so a caption shared by predictions of the same image is encoded once.
        image_of = first_equal_images(regions)
        pairs = list(dict.fromkeys((caption, image_of[i]) for i, refs in enumerate(references) for caption in (predictions[i], *refs)))
        encoded = self.encode(pairs, regions, batch_size=batch_size, show_progress=show_progress)
        columns: dict[str, list[float]] = {"precision": [], "recall": [], "f1": []}
        for i, (prediction, refs) in enumerate(zip(predictions, references)):
            candidate, candidate_rows = encoded[prediction, image_of[i]]
            matched = [encoded[ref, image_of[i]] for ref in refs]
            values = match_references(candidate, candidate_rows, [rows for rows, _ in matched], [scored for _, scored in matched])
            for name, value in zip(columns, values):
                columns[name].append(value)
        return Scores(columns, inputs={"features": features, "boxes": _span(item.num_boxes for item in regions),
                                       "references": _span(len(refs) for refs in references)})


def _span(counts: Iterable[int]) -> str:
    """``"5"`` when every count is 5, else ``"lowest-highest"`` (for the hashcode).

    >>> _span([100, 100]), _span([36, 100, 50])
    ('100', '36-100')
    """
    counts = list(counts)
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"
