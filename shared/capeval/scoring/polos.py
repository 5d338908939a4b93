"""Polos (Wada et al., CVPR 2024): a supervised caption score from SimCSE and CLIP features, as the released
code (keio-smilab24/Polos) computes it.

Per reference ``j``, a feed-forward head reads ``[r_j, m, |m−r_j|, m⊙r_j, I, T, |I−T|, I⊙T, |R_j−T|, R_j⊙T]``:
``m``/``r_j`` the first-token (``<s>``) vectors of the candidate and reference after a ScalarMix with layer
norm over every hidden state of the SimCSE RoBERTa, ``I`` the CLIP image embedding and ``T``/``R_j`` the CLIP
embeddings of ``"A photo depicts " + candidate`` / ``+ reference`` (unnormalised). The score is
``max_j sigmoid(head(x_j))``.

The ScalarMix normalises with one mean and variance over every non-pad position of the texts encoded
together, so in the released ``predict`` a caption's score depends on its batch, and a batch uses only the
first ``min #refs`` references of each item. ``mode="item"`` (default) scores each caption alone with all of
its references (``predict`` with batch size 1); ``mode="code"`` reproduces ``predict``'s batches of
``predict_batch_size`` consecutive items.

The CLIP side cuts texts to CLIP's 77-token context, as the released ``clip.tokenize(truncate=True)`` does; the
details' ``truncated_texts`` counts the cut texts of each caption and a warning names them
(:func:`~capeval.scoring.clip.report_truncation`).

Each distinct text is encoded once per call (its hidden statistics are kept, so any grouping is exact), and each
distinct image once.

``dtype="bfloat16"`` or ``"float16"`` runs the RoBERTa and the head under ``torch.autocast``; the hidden states
are brought back to float64 for the ScalarMix statistics and the head's output to float32. The CLIP features stay
float32 (the CLIP towers run in float32 whatever ``dtype`` says).
"""

from __future__ import annotations

from typing import Annotated, Any, Iterator, Sequence

import torch

from ..backbones.common import length_batches, pad_ids
from ..backbones.polos import CLIP_PROMPT, RELEASED_CHECKPOINT, PolosModel, load_polos, polos_features
from ..backbones.precision import autocast_forward, reduced_precision
from ..declaration import Opt
from ..needs import HubModel, UrlFile
from ..finite import require_finite
from ..inputs import path_option
from ..models import cached, model_id, resolve_device
from ..progress import progress
from .clip import report_truncation
from .options import Device, Dtype
from .protocol import CaptionScorer, Scores

DEFAULT_CLIP = "openai/clip-vit-base-patch32"
MODES = ("item", "code")
#: Texts or images per forward pass (results do not depend on it beyond float rounding).
ENCODE_BATCH_SIZE = 64
#: (candidate, reference) pairs per pass through the head.
HEAD_BATCH_SIZE = 4096
#: With mode="code", items whose texts are encoded together (rounded to whole predict() batches): the per-layer
#: first-token vectors a chunk keeps are ~40 KB per text for RoBERTa-base.
CODE_CHUNK_ITEMS = 256


class TextStatistics:
    """Per text: the first-token vector of every hidden state (``first``: N × K × H) and, for the ScalarMix, the
    number of non-pad elements (``count``: N) and their per-layer sums and sums of squares (N × K), float64."""

    def __init__(self, first: torch.Tensor, count: torch.Tensor, total: torch.Tensor, squares: torch.Tensor):
        self.first, self.count, self.total, self.squares = first, count, total, squares

    def sums(self, rows: torch.Tensor, group: Sequence[int] | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The ScalarMix sums for ``rows``: each text's own (``group=None``: encoded alone), or those of the texts
        of ``group`` encoded in one batch (a text listed twice counts twice, as in the released batch)."""
        if group is None:
            return self.count[rows], self.total[rows], self.squares[rows]
        index = torch.as_tensor(list(group))
        return (self.count[index].sum().expand(len(rows)), self.total[index].sum(0).expand(len(rows), -1),
                self.squares[index].sum(0).expand(len(rows), -1))


def position_limit(config: Any) -> int:
    """How many tokens the text encoder's position table holds (RoBERTa's positions start after its pad id)."""
    offset = config.pad_token_id + 1 if config.model_type in ("roberta", "xlm-roberta", "camembert") else 0
    return config.max_position_embeddings - offset


class PolosScorer(CaptionScorer):
    """Polos with the released checkpoint's RoBERTa, ScalarMix and head, and CLIP from ``clip_model``.

    Example (a random head over all-MiniLM-L6-v2 and a tiny random CLIP; ``metrics/polos`` has the module):
        >>> import tempfile
        >>> from capeval.backbones.clip import save_random_clip
        >>> from capeval.backbones.polos import save_random_polos
        >>> from capeval.declaration import minilm_path
        >>> from capeval.samples import sample_image
        >>> folder = tempfile.mkdtemp()
        >>> clip = save_random_clip(f"{folder}/clip")
        >>> scorer = PolosScorer(save_random_polos(f"{folder}/reprod", minilm_path(), clip), clip_model=clip, device="cpu")
        >>> out = scorer.score(["a dog runs"], [["a dog running", "two men riding horses"]], images=[str(sample_image())])
        >>> round(out["polos"][0], 4)
        0.4453
    """

    metric, title = "polos", "Polos"
    default_models = "the released Polos checkpoint (SimCSE RoBERTa + CLIP ViT-B/32)"
    faithful_to = 'keio-smilab24/Polos `predict()` (one caption at a time; `mode="code"`: its batches), to 1e-5'
    extras = ("models",)
    needs = (UrlFile(RELEASED_CHECKPOINT, what="Polos checkpoint archive", kind="weights"), HubModel(DEFAULT_CLIP),
             HubModel("princeton-nlp/sup-simcse-roberta-base"))
    name = primary = "polos"
    needs_images = True
    value_range = (0.0, 1.0)

    def __init__(self, checkpoint: Annotated[str, Opt("the released Lightning checkpoint: a .ckpt with hparams.yaml "
                                                      "beside it, their folder, or reprod.zip (path or URL)", check=path_option)] = RELEASED_CHECKPOINT,
                 *, text_model: Annotated[str | None, Opt("hub id or folder giving the RoBERTa's config and tokenizer "
                                                          "(default: the checkpoint's pretrained_model); weights come from the checkpoint",
                                                          check=path_option)] = None,
                 clip_model: Annotated[str, Opt("hub id or folder of a transformers CLIPModel (OpenAI ViT-B/32 in the release): its config "
                                                "and tokenizer; weights come from the checkpoint's clip.* tensors", check=path_option)] = DEFAULT_CLIP,
                 mode: Annotated[str, Opt("`item`: each caption alone with all its references (the definition); `code`: the released "
                                          "predict()'s batches (shared ScalarMix statistics, references cut to the batch minimum)",
                                          choices=MODES)] = "item",
                 predict_batch_size: Annotated[int | None, Opt("with mode=code: predict()'s batch_size (default: the "
                                                               "checkpoint's training batch size, as predict)", within="[1, inf)")] = None,
                 device: Device = None,
                 dtype: Dtype = "float32"):
        self.checkpoint, self.text_model, self.clip_model = checkpoint, text_model, clip_model
        self.mode = mode
        self.predict_batch_size = predict_batch_size
        if self.predict_batch_size is not None and mode != "code":
            raise ValueError("predict_batch_size applies only with mode='code' (mode='item' scores each caption alone)")
        self.device = resolve_device(device)
        self.dtype = dtype

    @property
    def model(self) -> PolosModel:
        """The checkpoint's RoBERTa, tokenizer, head and CLIP (cached process-wide)."""
        return cached(("polos", self.checkpoint, self.text_model, self.clip_model, str(self.device)),
                      lambda: load_polos(self.checkpoint, self.text_model, self.clip_model, self.device))

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"checkpoint": model_id(self.checkpoint), "clip_model": model_id(self.clip_model), "mode": self.mode}
        if self.text_model is not None:
            options["text_model"] = model_id(self.text_model)
        if self.mode == "code":
            options["predict_batch_size"] = self.predict_batch_size or "checkpoint"
        return {**options, **reduced_precision(self.dtype)}

    def encoded_batches(self, texts: list[str], batch_size: int, show_progress: bool | None) -> Iterator[tuple[list[int], TextStatistics]]:
        """``texts`` through the RoBERTa in length-sorted batches: per batch, its text indices and their statistics."""
        model = self.model
        ids = model.tokenizer(texts, truncation=False)["input_ids"]
        limit = position_limit(model.encoder.config)
        for text, seq in zip(texts, ids):
            if len(seq) > limit:
                raise ValueError(f"a text has {len(seq)} tokens; the text encoder's position table holds {limit}: {text[:80]!r}")
        for batch in progress(length_batches(range(len(texts)), batch_size, lambda i: len(ids[i])), desc="Polos text", show=show_progress):
            input_ids, mask = pad_ids([ids[i] for i in batch], pad_id=model.tokenizer.pad_token_id)
            with torch.inference_mode():
                with autocast_forward(self.device, self.dtype):
                    out = model.encoder(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device),
                                        output_hidden_states=True)
                # B × K × L × H, reduced where it was computed: only the B × K × H first-token vectors and the B × K
                # sums come back (moving every hidden state to the CPU in float64 had cost most of a GPU call).
                hidden = torch.stack(out.hidden_states, dim=1).double()
                masked = hidden * mask.to(hidden.device).double()[:, None, :, None]
                statistics = TextStatistics(hidden[:, :, 0, :].float().cpu(), mask.sum(1).double() * hidden.shape[3],
                                            masked.sum(dim=(2, 3)).cpu(), (masked * hidden).sum(dim=(2, 3)).cpu())
            yield batch, statistics

    def text_statistics(self, texts: list[str], batch_size: int, show_progress: bool | None) -> TextStatistics:
        """The statistics of every text, in the order of ``texts``."""
        rows, parts = zip(*self.encoded_batches(texts, batch_size, show_progress))
        order = torch.as_tensor([i for batch in rows for i in batch]).argsort()
        return TextStatistics(*(torch.cat([getattr(part, name) for part in parts])[order] for name in ("first", "count", "total", "squares")))

    def sentence_vectors(self, statistics: TextStatistics, rows: Sequence[int], group: Sequence[int] | None = None) -> torch.Tensor:
        """The head's RoBERTa vectors of the texts ``rows``, each encoded alone (``group=None``) or all in one
        batch with ``group``."""
        index = torch.as_tensor(list(rows))
        return self.model.head.scalar_mix.mix_first_tokens(statistics.first[index], *statistics.sums(index, group))

    def pair_vectors(self, predictions: list[str], references: list[list[str]], texts: list[str], batch_size: int,
                     show_progress: bool | None) -> tuple[list[tuple[int, str]], torch.Tensor, torch.Tensor]:
        """The scored (prediction index, reference) pairs and the RoBERTa vectors of both sides of each, grouped as
        the mode says (module docstring). Each text of ``texts`` is encoded once (in ``mode="code"``, once per
        chunk of batches, so that only a chunk's per-layer vectors are held)."""
        row = {text: i for i, text in enumerate(texts)}
        if self.mode == "item":
            pairs = [(i, ref) for i, refs in enumerate(references) for ref in refs]
            width: int = self.model.encoder.config.hidden_size  # type: ignore[union-attr, assignment]  # a RobertaModel's config
            vectors = torch.empty((len(texts), width))
            for batch, statistics in self.encoded_batches(texts, batch_size, show_progress):
                vectors[batch] = self.sentence_vectors(statistics, range(len(batch)))
            return pairs, vectors[[row[predictions[i]] for i, _ in pairs]], vectors[[row[ref] for _, ref in pairs]]
        size = self.predict_batch_size or self.model.hparams.batch_size
        chunk = max(1, CODE_CHUNK_ITEMS // size) * size
        pairs, candidate_parts, reference_parts = [], [], []
        for chunk_start in range(0, len(predictions), chunk):
            chunk_items = range(chunk_start, min(chunk_start + chunk, len(predictions)))
            chunk_texts = list(dict.fromkeys([*(predictions[i] for i in chunk_items), *(r for i in chunk_items for r in references[i])]))
            statistics, local = self.text_statistics(chunk_texts, batch_size, show_progress), {t: n for n, t in enumerate(chunk_texts)}
            for start in range(chunk_items.start, chunk_items.stop, size):
                items = range(start, min(start + size, chunk_items.stop))
                mts = [local[predictions[i]] for i in items]
                m = self.sentence_vectors(statistics, mts, mts)
                for j in range(min(len(references[i]) for i in items)):  # predict() zips the reference lists
                    slot = [local[references[i][j]] for i in items]
                    pairs += [(i, references[i][j]) for i in items]
                    candidate_parts.append(m)
                    reference_parts.append(self.sentence_vectors(statistics, slot, slot))
        return pairs, torch.cat(candidate_parts), torch.cat(reference_parts)

    def clip_features(self, texts: list[str], images: list, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Unnormalised CLIP embeddings of ``"A photo depicts " + text`` per text and of each image (each distinct
        one encoded once, and remembered across calls), with the released preprocessing and tokenization (CLIP-S's ``mode="code"``) of images
        converted to RGB first, as the released ``predict`` receives them. Images are decoded by CLIP-S's default
        DataLoader workers (on CUDA; none on CPU), which leave the features unchanged."""
        clip = self.model.clip
        text_features = clip.text_features([CLIP_PROMPT + text for text in texts], mode="code", batch_size=batch_size)
        image_features = clip.image_features(images, mode="code", batch_size=batch_size, rgb_first=True, num_workers=None)
        return torch.from_numpy(text_features).float(), torch.from_numpy(image_features).float()

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """Polos in [0, 1] per caption, in input order (``batch_size``: texts or images per forward pass)."""
        if images is None:
            raise ValueError("Polos scores captions against images: pass images=[...] (one per caption)")
        batch_size = batch_size or ENCODE_BATCH_SIZE
        texts = list(dict.fromkeys([*predictions, *(r for refs in references for r in refs)]))
        row = {text: i for i, text in enumerate(texts)}
        pairs, candidate_vectors, reference_vectors = self.pair_vectors(predictions, references, texts, batch_size, show_progress)
        text_features, image_features = self.clip_features(texts, images, batch_size)

        best = [float("-inf")] * len(predictions)
        with torch.inference_mode(), autocast_forward(self.device, self.dtype):
            for start in range(0, len(pairs), HEAD_BATCH_SIZE):
                chunk = pairs[start : start + HEAD_BATCH_SIZE]
                features = polos_features(candidate_vectors[start : start + len(chunk)], reference_vectors[start : start + len(chunk)],
                                          image_features[[i for i, _ in chunk]],
                                          text_features[[row[predictions[i]] for i, _ in chunk]],
                                          text_features[[row[ref] for _, ref in chunk]])
                values = self.model.head(features.to(self.device)).float().cpu()
                require_finite(values, items=[predictions[i] for i, _ in chunk], what="Polos head outputs", model=self.checkpoint)
                for (i, _), value in zip(chunk, values.tolist()):
                    best[i] = max(best[i], value)
        clip = self.model.clip
        cut = dict(zip(texts, clip.truncated([CLIP_PROMPT + text for text in texts], mode="code")))
        truncated, note = report_truncation([cut[caption] for caption in predictions], [cut[r] for refs in references for r in refs],
                                            references, context_length=clip.context_length, metric=self.title)
        return Scores({"polos": best}, details={"truncated_texts": truncated}, note=note)
