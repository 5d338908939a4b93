"""The seed papers' correlation tables as data, cell by cell, and what each table row needs to be re-run.

The tables (BERT-TBR, ViLBERTScore, UMIC, QACE, SMURF, PAC-S's correlation script, CLIPScore, the 2024-2026
papers' Polaris, Nebula and LongCap-Arena tables: Pearl, Polos, DENEB, PAC-S++, VELA, and the language-model judges'
own rows: FLEUR, EXPERT, CLAIR) are
transcribed in the package resource ``published_tables.json``: per table the paper, its citation, the
table's name, the paper's own words about its protocol, where the numbers were read (``source``, when not
from the paper itself), the columns (benchmark, measure, the factor turning a printed value into capeval's
units: Kendall τ in [-1, 1], PASCAL-50S and FOIL accuracy in %, and the row set where a benchmark has several)
and the rows (a row key naming the metric and variant, and the printed values: ``None`` for "–"; a cell that
could not be transcribed is left out).

>>> cells = published_cells("bert_tbr")
>>> cell = next(c for c in cells if c.row == "Ours (Unigram)" and c.benchmark == "flickr8k_expert")
>>> cell.table, cell.column, cell.published, ROW_METRICS[cell.metric].spec
('Table 3', 'Flickr 8K', 0.471, ('bert_tbr', {'mode': 'unigram'}, 'scores'))
>>> sorted({c.paper for c in published_cells()})  # doctest: +NORMALIZE_WHITESPACE
['bert_tbr', 'captionevalkit', 'clair', 'clipscore', 'deneb', 'expert', 'fleur', 'pacs', 'pacs_pp', 'pearl', 'polos',
 'qace', 'smurf', 'umic', 'vela', 'vilbertscore']
"""

from __future__ import annotations

from typing import Callable

import functools
import json
from dataclasses import dataclass
from importlib import resources

#: The papers of the tables, as ``capeval reproduce PAPER`` names them.
PAPERS = ("bert_tbr", "vilbertscore", "umic", "qace", "smurf", "pacs", "clipscore", "pearl", "polos", "deneb", "pacs_pp",
          "fleur", "expert", "clair", "vela", "captionevalkit")


@dataclass(frozen=True)
class PublishedCell:
    """One printed number of a paper's table; ``published`` is it in capeval's units."""

    paper: str
    citation: str
    table: str
    row: str
    metric: str
    column: str
    benchmark: str
    measure: str
    printed: float | None
    published: float | None
    protocol_words: str
    note: str = ""
    #: The benchmark row set the column correlates ('' : the table protocol's).
    row_set: str = ""
    #: Where the number was read, when not from the paper itself.
    source: str = ""


@functools.cache
def published_tables() -> tuple[dict, ...]:
    """The transcribed tables, as stored in the package resource."""
    text = resources.files("capeval.resources").joinpath("published_tables.json").read_text(encoding="utf-8")
    return tuple(json.loads(text)["tables"])


def table_source(paper: str, table: str) -> str:
    """Where a table's cells come from: the paper, and where its numbers were read when not from the paper itself.

    >>> print(table_source("clair", "Table 3"))  # doctest: +ELLIPSIS
    Chan, Petryk, ... CLAIR: Evaluating Image Captions with Large Language Models; read from the paper's PDF in DavidMChan/clair (commit 429fa8b) ...
    """
    found = next(t for t in published_tables() if (t["paper"], t["table"]) == (paper, table))
    return found["citation"] + (f"; read from {found['source']}" if found.get("source") else "")


def published_cells(paper: str = "all") -> list[PublishedCell]:
    """Every cell of ``paper``'s tables (or of all papers), row by row."""
    if paper != "all" and paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose from {', '.join(PAPERS)} or 'all'")
    cells = []
    for table in published_tables():
        if paper not in ("all", table["paper"]):
            continue
        for row in table["rows"]:
            # ``values``: every column (None where the paper prints "–"); ``cells``: only the transcribed columns.
            printed_by_column = (dict(zip((c["name"] for c in table["columns"]), row["values"])) if "values" in row
                                 else row["cells"])
            for column in table["columns"]:
                if column["name"] not in printed_by_column:
                    continue
                printed = printed_by_column[column["name"]]
                cells.append(PublishedCell(
                    table["paper"], table["citation"], table["table"], row["row"], row["metric"], column["name"],
                    column["benchmark"], column["measure"], printed,
                    None if printed is None else round(printed * column["factor"], 6), table["protocol_words"],
                    row.get("note", ""), column.get("row_set", ""), table.get("source", "")))
    return cells


@dataclass(frozen=True)
class RowMetric:
    """What a table row needs: a capeval metric computed offline (``spec``), checkpoints that ``--weights``
    may provide (``checkpoints`` and ``with_weights``), or a reason it cannot be computed (``needs``)."""

    #: (capeval metric name, options, result column) when computable offline.
    spec: tuple[str, dict, str] | None = None
    #: Whether the table's toolkit options (tokenizer, BLEU smoothing) apply: the COCO metrics.
    toolkit: bool = False
    #: Checkpoint folder names under ``--weights`` and the spec built from their paths.
    checkpoints: tuple[str, ...] = ()
    with_weights: Callable[..., tuple[str, dict, str]] | None = None
    needs: str = ""
    #: Whether what ``spec`` runs on is installed here (``None``: nothing beyond capeval); else the row ``needs``.
    available: Callable[[], bool] | None = None

    def resolve(self, weights_dir=None) -> tuple[tuple[str, dict, str] | None, str]:
        """(spec, '') when the row can be computed here, else (None, what it needs)."""
        from pathlib import Path

        if self.spec is not None:
            return (self.spec, "") if self.available is None or self.available() else (None, self.needs)
        if self.checkpoints and self.with_weights is not None and weights_dir is not None:
            paths = [Path(weights_dir) / name for name in self.checkpoints]
            if all(path.is_dir() for path in paths):
                return self.with_weights(*map(str, paths)), ""
        return None, self.needs


def coco(name: str, **options) -> RowMetric:
    return RowMetric((name, options, "scores"), toolkit=True)


def spice_installed() -> bool:
    """Whether SPICE's jar can run here (Java, and CoreNLP installed by ``capeval download spice``)."""
    from capeval.scoring.spice import spice_ready

    return spice_ready()


def bertscore_weights(layer: int):
    return lambda path: ("bertscore", {"model_name": path, "layer": layer}, "f1")


NEEDS_IMAGES = "and the benchmark's images or region features"
#: What a LLaVA judge's row needs, and the command that computes it.
LLAVA_NEEDS = "needs {judge} and the benchmark's images: `capeval benchmark --metric {spec} --images DIR` computes it"
#: What a server judge's row needs, and the command that computes it.
SERVER_NEEDS = ("needs an OpenAI-compatible server serving {judge}: `capeval benchmark --metric "
                "'clair:base_url=URL,model={models}'` computes it")

#: Row keys of the published tables → how capeval computes them.
ROW_METRICS: dict[str, RowMetric] = {
    "bleu-1": coco("bleu", order=1),
    "bleu-2": coco("bleu", order=2),
    "bleu-4": coco("bleu", order=4),
    "rouge-l": coco("rouge"),
    "cider": coco("cider"),
    "meteor": coco("meteor"),
    "spice": RowMetric(("spice", {}, "spice"), toolkit=True, available=spice_installed,
                       needs="needs SPICE's Java runtime and Stanford CoreNLP 3.6.0 (`capeval download spice`)"),
    "bert_tbr-unigram": RowMetric(("bert_tbr", {"mode": "unigram"}, "scores")),
    "bert_tbr-bert-base-uncased": RowMetric(
        checkpoints=("bert-base-uncased",), needs="needs bert-base-uncased",
        with_weights=lambda path: ("bert_tbr", {"model_name": path, "layer": 8, "beta": 0.4}, "scores")),
    "bert_tbr-roberta-large": RowMetric(needs="needs roberta-large and BERT-TBR's RoBERTa layer (not published; "
                                              "the released code has no RoBERTa path)"),
    "bertscore-roberta-large": RowMetric(checkpoints=("roberta-large",), with_weights=bertscore_weights(17),
                                         needs="needs roberta-large (bert_score's English default, layer 17)"),
    "bertscore-bert-base-uncased": RowMetric(checkpoints=("bert-base-uncased",), with_weights=bertscore_weights(9),
                                             needs="needs bert-base-uncased (bert_score's layer 9)"),
    "sparcs": RowMetric(("smurf", {"components": ["sparcs"]}, "sparcs")),
    "spurts": RowMetric(checkpoints=("distilroberta-base",), needs="needs distilroberta-base",
                        with_weights=lambda path: ("smurf", {"components": ["spurts"], "spurts_model": path}, "spurts")),
    "smurf": RowMetric(checkpoints=("distilroberta-base", "distilbert-base-uncased"),
                       needs="needs distilroberta-base and distilbert-base-uncased",
                       with_weights=lambda spurts, mima: ("smurf", {"spurts_model": spurts, "mima_model": mima}, "smurf")),
    "leic": RowMetric(needs="needs LEIC (Cui et al. 2018; the number is cited, no released model)"),
    "inter-human": RowMetric(needs="needs a second set of human judgments (the number is cited, not a metric)"),
    "vifidel": RowMetric(needs="needs VIFIDEL's object detector " + NEEDS_IMAGES),
    "perplexity": RowMetric(needs="needs the language model behind QACE's −Perplexity row (not named)"),
    "clip-s": RowMetric(needs="needs CLIP ViT-B/32 " + NEEDS_IMAGES),
    "refclip-s": RowMetric(needs="needs CLIP ViT-B/32 " + NEEDS_IMAGES),
    "pac-s": RowMetric(needs="needs the PAC-S checkpoint " + NEEDS_IMAGES),
    "refpac-s": RowMetric(needs="needs the PAC-S checkpoint " + NEEDS_IMAGES),
    "polos": RowMetric(needs="needs the Polos checkpoint (reprod.zip of the Polos release) and the benchmark's images"),
    "vela": RowMetric(needs="needs VELA, not in capeval: its model code (Ka2ukiMatsuda/VELA: the prompt per mode, how "
                            "the LongCLIP-L features enter Qwen2.5-3B-Instruct, the regression head's layout) could not be "
                            "read; then its regressor checkpoint, Qwen2.5-3B-Instruct, LongCLIP-L and the benchmark's images"),
    # The judges: capeval has them, but reproduce runs neither a 13B model on images nor a paid API; each row says
    # what computes it (the benchmark command, with the judge's weights, the images or a server).
    "fleur": RowMetric(needs=LLAVA_NEEDS.format(judge="LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf)", spec="fleur")),
    "reffleur": RowMetric(needs=LLAVA_NEEDS.format(judge="LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf)",
                                                   spec="fleur:reference_based=true")),
    "expert": RowMetric(needs=LLAVA_NEEDS.format(judge="LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf) with the EXPERT LoRA "
                                                       "(hjkim811/EXPERT-llava-13b-lora)", spec="expert")),
    "clair-gpt3.5": RowMetric(needs=SERVER_NEEDS.format(judge="the paper's GPT-3.5 judge (the released code's "
                                                              "gpt-3.5-turbo)", models="gpt-3.5-turbo")),
    "clair-claude": RowMetric(needs=SERVER_NEEDS.format(judge="the paper's Claude judge (its version is not stated)",
                                                        models="NAME")),
    "clair-palm": RowMetric(needs=SERVER_NEEDS.format(judge="the paper's PaLM judge (its version is not stated)",
                                                      models="NAME")),
    "clair-ensemble": RowMetric(needs=SERVER_NEEDS.format(judge="the paper's three judges (GPT-3.5, Claude, PaLM; "
                                                                "CLAIR_E is the mean of their scores)", models="A;B;C")),
    "umic": RowMetric(needs="needs the UMIC checkpoint " + NEEDS_IMAGES),
    "umic-no-contrastive": RowMetric(needs="needs UNITER-base " + NEEDS_IMAGES),
    **{f"vilbertscore-{part}": RowMetric(needs="needs the ViLBERT pretrained checkpoint " + NEEDS_IMAGES)
       for part in ("p", "r", "f")},
    **{f"vilbertscore12in1-{part}": RowMetric(needs="needs the 12-in-1 ViLBERT checkpoint " + NEEDS_IMAGES)
       for part in ("p", "r", "f")},
    **{f"qace-ref{part}": RowMetric(needs="needs QACE's question generator and VQA/QA checkpoints")
       for part in ("", "-f1", "-bertscore", "-answerability")},
    **{f"qace-img{part}": RowMetric(needs="needs QACE's question generator and VQA checkpoints " + NEEDS_IMAGES)
       for part in ("", "-f1", "-bertscore", "-answerability")},
}
