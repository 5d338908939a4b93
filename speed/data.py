"""The data the benchmarks share, loaded one way: SMURF's Karpathy-test caption sets bundled with capeval (four
captioners' 5,000 captions of the same 5,000 images, ~4 references each), their PTB tokens, and Flickr8k-Expert's
rows (capeval's bundled benchmark)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def golden():
    from importlib import resources

    import pandas as pd

    frame = pd.read_parquet(resources.files("capeval").joinpath("resources", "smurf_golden.parquet"))
    return frame.sort_values("system", kind="stable")


def karpathy_rows(rows: int) -> list[dict]:
    """The first ``rows`` captions of SMURF's Karpathy-test sets (system 0 first), raw text with references."""
    frame = golden()
    return [{"candidate": c, "references": list(r)} for c, r in zip(frame.candidate[:rows], frame.references[:rows])]


def karpathy_inputs(rows: int, *, tokens: bool = False) -> tuple[dict, dict]:
    """``(inputs, about)`` of ``rows`` Karpathy-test captions: the candidates and references, and where ``tokens`` their
    PTB tokens (capeval's port equals the CoreNLP jar's)."""
    chosen = karpathy_rows(rows)
    inputs = {"candidates": [row["candidate"] for row in chosen], "references": [row["references"] for row in chosen]}
    if tokens:
        from capeval.text.ptb import tokenize_corpus

        inputs["tokens"] = dict(zip(("candidates", "references"), tokenize_corpus(inputs["candidates"], inputs["references"], "ptb")))
    references = sum(map(len, inputs["references"]))
    return inputs, {"description": f"SMURF's Karpathy-test captions ({'system 0' if rows <= 5000 else 'all four systems'}), "
                                   f"raw text{', PTB-tokenized' if tokens else ''}",
                    "items": len(chosen), "references": references}


def systems(rows: int) -> list[list[dict]]:
    """The four captioners' first ``rows`` captions, image by image (the same references)."""
    everything = karpathy_rows(4 * 5000)
    return [everything[start:start + rows] for start in range(0, 4 * 5000, 5000)]


def flickr8k_expert(limit: int | None = None, *, self_captions: bool = True) -> list[dict]:
    """Flickr8k-Expert's rows (candidate, references, image_file, mean_score, ...), the first ``limit``."""
    from capeval.benchmarks import load_benchmark

    rows = [row for row in load_benchmark("flickr8k_expert") if self_captions or not row["is_self_caption"]]
    return rows[:limit]
