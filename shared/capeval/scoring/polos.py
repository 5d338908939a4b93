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

Each distinct text is encoded once per call (its hidden statistics are kept, so any grouping is exact), and each
distinct image once.
"""

from __future__ import annotations

from typing import Annotated, Any, Sequence

import torch

from ..backbones.common import length_batches, pad_ids
from ..backbones.polos import RELEASED_CHECKPOINT, PolosModel, load_clip, load_polos, polos_features
from ..declaration import Opt
from ..inputs import device_option, int_option, path_option
from ..models import cached, model_id, resolve_device
from ..progress import progress
from ..vision.images import image_digest, load_image
from .protocol import CaptionScorer, Scores

DEFAULT_CLIP = "openai/clip-vit-base-patch32"
MODES = ("item", "code")
#: Texts or images per forward pass (results do not depend on it beyond float rounding).
ENCODE_BATCH_SIZE = 64
#: (candidate, reference) pairs per pass through the head.
HEAD_BATCH_SIZE = 4096


class TextStatistics:
    """Per text: the first-token vector of every hidden state (K × H) and the sums a ScalarMix needs."""

    def __init__(self, first: torch.Tensor, count: torch.Tensor, total: torch.Tensor, squares: torch.Tensor):
        self.first, self.count, self.total, self.squares = first, count, total, squares

    def grouped(self, rows: Sequence[int], group: Sequence[int]) -> tuple[torch.Tensor, ...]:
        """The statistics of ``rows`` as if encoded in one batch with all of ``group`` (repeats count again)."""
        index = torch.as_tensor(list(group))
        sums = self.count[index].sum(), self.total[index].sum(0), self.squares[index].sum(0)
        picked = torch.as_tensor(list(rows))
        return (self.first[picked], sums[0].expand(len(picked)), sums[1].expand(len(picked), -1),
                sums[2].expand(len(picked), -1))


def position_limit(config: Any) -> int:
    """How many tokens the text encoder's position table holds (RoBERTa's positions start after its pad id)."""
    offset = config.pad_token_id + 1 if config.model_type in ("roberta", "xlm-roberta", "camembert") else 0
    return config.max_position_embeddings - offset


class PolosScorer(CaptionScorer):
    """Polos with the released checkpoint's RoBERTa, ScalarMix and head, and CLIP from ``clip_model``.

    Example (a random head over all-MiniLM-L6-v2 and a tiny random CLIP; ``metrics/polos`` has the module):
        >>> import tempfile
        >>> from capeval.backbones.polos import save_random_clip, save_random_polos
        >>> from capeval.declaration import minilm_path
        >>> from capeval.samples import sample_image
        >>> folder = tempfile.mkdtemp()
        >>> clip = save_random_clip(f"{folder}/clip")
        >>> scorer = PolosScorer(save_random_polos(f"{folder}/reprod", minilm_path(), clip), clip_model=clip, device="cpu")
        >>> out = scorer.score(["a dog runs"], [["a dog running", "two men riding horses"]], images=[str(sample_image())])
        >>> round(out["polos"][0], 4)
        0.4409
    """

    metric, title = "polos", "Polos"
    name = primary = "polos"
    needs_images = True
    value_range = (0.0, 1.0)

    def __init__(self, checkpoint: Annotated[str, Opt("the released Lightning checkpoint: a .ckpt with hparams.yaml "
                                                      "beside it, their folder, or reprod.zip (path or URL)")] = RELEASED_CHECKPOINT,
                 *, text_model: Annotated[str | None, Opt("hub id or folder giving the RoBERTa's config and tokenizer "
                                                          "(default: the checkpoint's pretrained_model); weights come from the checkpoint")] = None,
                 clip_model: Annotated[str, Opt("hub id or folder of a transformers CLIPModel (OpenAI ViT-B/32 in the release)")] = DEFAULT_CLIP,
                 mode: Annotated[str, Opt("`item`: each caption alone with all its references (the definition); `code`: the released "
                                          "predict()'s batches (shared ScalarMix statistics, references cut to the batch minimum)",
                                          choices=MODES)] = "item",
                 predict_batch_size: Annotated[int | None, Opt("with mode=code: predict()'s batch_size (default: the "
                                                               "checkpoint's training batch size, as predict)")] = None,
                 device: Annotated[str | None, Opt("torch device (default CUDA when available)")] = None):
        self.checkpoint = path_option("checkpoint", checkpoint)
        self.text_model = None if text_model is None else path_option("text_model", text_model)
        self.clip_model = path_option("clip_model", clip_model)
        self.mode = mode
        self.predict_batch_size = int_option("predict_batch_size", predict_batch_size, optional=True)
        if self.predict_batch_size is not None and mode != "code":
            raise ValueError("predict_batch_size applies only with mode='code' (mode='item' scores each caption alone)")
        self.device = resolve_device(device_option("device", device))

    @property
    def model(self) -> PolosModel:
        """The checkpoint's RoBERTa, tokenizer and head (cached process-wide)."""
        return cached(("polos", self.checkpoint, self.text_model, str(self.device)),
                      lambda: load_polos(self.checkpoint, self.text_model, self.device))

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"checkpoint": model_id(self.checkpoint), "clip_model": model_id(self.clip_model), "mode": self.mode}
        if self.text_model is not None:
            options["text_model"] = model_id(self.text_model)
        if self.mode == "code":
            options["predict_batch_size"] = self.predict_batch_size or "checkpoint"
        return options

    def text_statistics(self, texts: list[str], batch_size: int, show_progress: bool | None) -> TextStatistics:
        """Every hidden state's first-token vector and masked sums, per text (encoded in length-sorted batches)."""
        model = self.model
        ids = model.tokenizer(texts, truncation=False)["input_ids"]
        limit = position_limit(model.encoder.config)
        for text, seq in zip(texts, ids):
            if len(seq) > limit:
                raise ValueError(f"a text has {len(seq)} tokens; the text encoder's position table holds {limit}: {text[:80]!r}")
        first = count = total = squares = None
        batches = length_batches(range(len(texts)), batch_size, lambda i: len(ids[i]))
        with torch.inference_mode():
            for batch in progress(batches, desc="Polos text", show=show_progress):
                input_ids, mask = pad_ids([ids[i] for i in batch], pad_id=model.tokenizer.pad_token_id)
                out = model.encoder(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device), output_hidden_states=True)
                hidden = torch.stack(out.hidden_states, dim=1).double().cpu()  # B × K × L × H
                weights = mask.double()[:, None, :, None]
                if first is None or count is None or total is None or squares is None:
                    size = (len(texts), hidden.shape[1])
                    first = torch.zeros((*size, hidden.shape[3]), dtype=torch.float32)
                    total, squares = torch.zeros(size, dtype=torch.float64), torch.zeros(size, dtype=torch.float64)
                    count = torch.zeros(len(texts), dtype=torch.float64)
                rows = torch.as_tensor(batch)
                first[rows] = hidden[:, :, 0, :].float()
                total[rows] = (hidden * weights).sum(dim=(2, 3))
                squares[rows] = (hidden**2 * weights).sum(dim=(2, 3))
                count[rows] = mask.sum(1).double() * hidden.shape[3]
        return TextStatistics(first, count, total, squares)  # type: ignore[arg-type]  # texts is never empty

    def sentence_vectors(self, statistics: TextStatistics, rows: Sequence[int], group: Sequence[int]) -> torch.Tensor:
        """The head's RoBERTa vectors of ``rows`` (text indices), encoded in one batch with ``group``."""
        head = self.model.head
        if head.scalar_mix is None:
            return statistics.first[torch.as_tensor(list(rows)), head.layer]  # type: ignore[index]  # an int without a scalar mix
        return head.scalar_mix.mix_first_tokens(*statistics.grouped(rows, group))

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """Polos in [0, 1] per caption, in input order (``batch_size``: texts or images per forward pass)."""
        if images is None:
            raise ValueError("Polos scores captions against images: pass images=[...] (one per caption)")
        batch_size = batch_size or ENCODE_BATCH_SIZE
        texts = list(dict.fromkeys([*predictions, *(r for refs in references for r in refs)]))
        row = {text: i for i, text in enumerate(texts)}
        statistics = self.text_statistics(texts, batch_size, show_progress)

        # (prediction index, reference) pairs and the RoBERTa vectors of both sides, per the mode's grouping.
        pairs, candidate_vectors, reference_vectors = [], [], []
        if self.mode == "item":
            vectors = torch.cat([self.sentence_vectors(statistics, [i], [i]) for i in range(len(texts))])
            for i, (prediction, refs) in enumerate(zip(predictions, references)):
                pairs += [(i, ref) for ref in refs]
                candidate_vectors += [vectors[row[prediction]]] * len(refs)
                reference_vectors += [vectors[row[ref]] for ref in refs]
        else:
            size = self.predict_batch_size or self.model.hparams.batch_size
            for start in range(0, len(predictions), size):
                items = range(start, min(start + size, len(predictions)))
                mts = [row[predictions[i]] for i in items]
                m = self.sentence_vectors(statistics, mts, mts)
                for j in range(min(len(references[i]) for i in items)):
                    refs = [row[references[i][j]] for i in items]
                    r = self.sentence_vectors(statistics, refs, refs)
                    pairs += [(i, references[i][j]) for i in items]
                    candidate_vectors += list(m)
                    reference_vectors += list(r)

        clip = load_clip(self.clip_model, self.device)
        with torch.inference_mode():
            text_features = clip.text_embeddings(texts, batch_size).float().cpu()
            keys = [image_digest(image, name=f"images[{i}]") for i, image in enumerate(images)]
            distinct = dict.fromkeys(keys)
            first_index = {key: keys.index(key) for key in distinct}
            loaded = [load_image(images[first_index[key]], name=f"images[{first_index[key]}]", max_side=None) for key in distinct]
            image_features = clip.image_embeddings(loaded, batch_size).float().cpu()
        image_row = {key: i for i, key in enumerate(distinct)}

        best = [float("-inf")] * len(predictions)
        head = self.model.head
        with torch.inference_mode():
            for start in range(0, len(pairs), HEAD_BATCH_SIZE):
                chunk = pairs[start : start + HEAD_BATCH_SIZE]
                features = polos_features(
                    torch.stack(candidate_vectors[start : start + HEAD_BATCH_SIZE]),
                    torch.stack(reference_vectors[start : start + HEAD_BATCH_SIZE]),
                    image_features[[image_row[keys[i]] for i, _ in chunk]],
                    text_features[[row[predictions[i]] for i, _ in chunk]],
                    text_features[[row[ref] for _, ref in chunk]],
                )
                for (i, _), value in zip(chunk, head(features.to(self.device)).cpu().tolist()):
                    best[i] = max(best[i], value)
        return Scores({"polos": best})
