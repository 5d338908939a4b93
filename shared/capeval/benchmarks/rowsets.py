"""Benchmark protocols: which captions a metric scores and which human judgments they are compared with.

A :class:`Benchmark` holds the *items* (candidate, references, judged image) a metric scores once,
and the *row sets* built on them: correlation row sets (one human score per row, each row points
at an item; Flickr8k-Expert's P2 points three rows at every item) and, for PASCAL-50S, pairs of
items with the human preference. Every row set carries a ``protocol`` string stating how it was built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from capeval.benchmarks.hub import BENCHMARKS
from capeval.benchmarks.hub import load_benchmark


@dataclass
class Items:
    """What a metric scores: one candidate caption per item, its references and the judged image."""

    candidates: list[str]
    references: list[list[str]]
    image_files: list[str]

    def __len__(self) -> int:
        return len(self.candidates)


@dataclass
class CorrelationRows:
    """Human scores to correlate with the metric: row ``i`` judges item ``item[i]``."""

    name: str
    protocol: str
    item: np.ndarray
    human: np.ndarray


@dataclass
class PairRows:
    """Pairwise preferences: the humans preferred item ``first[i]`` over ``second[i]`` when ``label[i]`` is 1."""

    name: str
    protocol: str
    first: np.ndarray
    second: np.ndarray
    label: np.ndarray
    category: np.ndarray


@dataclass
class Benchmark:
    name: str
    title: str
    items: Items
    correlations: list[CorrelationRows] = field(default_factory=list)
    pairs: PairRows | None = None
    notes: list[str] = field(default_factory=list)


def flickr8k_expert(source=None, include_self_captions: bool = False) -> Benchmark:
    """Flickr8k-Expert under both protocols.

    P1 (``mean``): one row per caption, human score = mean of the 3 experts (BERT-TBR, ViLBERTScore).
    P2 (``all``): one row per expert rating (SPICE, CLIPScore, PAC-S). Without
    ``include_self_captions`` the 158 self-caption rows are dropped: 5,664 and 16,992 rows.
    The items are in ``ExpertAnnotations.txt`` order, the order of BERT-TBR's ``flickr.json``.

    >>> bench = flickr8k_expert()
    >>> len(bench.items), [len(rows.human) for rows in bench.correlations]
    (5664, [5664, 16992])
    """
    data = load_benchmark("flickr8k_expert", source)
    keep = np.ones(data.num_rows, bool) if include_self_captions else ~np.asarray(data["is_self_caption"])
    data = data.select(np.flatnonzero(keep))
    items = Items(data["candidate"], data["references"], data["image_file"])
    n = len(items)
    rows = f"{n:,} captions ({'158 self-captions kept' if include_self_captions else 'the 158 self-captions excluded'})"
    experts = np.asarray(data["expert_scores"], dtype=float)
    return Benchmark("flickr8k_expert", BENCHMARKS["flickr8k_expert"], items, [
        CorrelationRows("P1 mean", f"P1: mean of 3 expert ratings per caption, {rows}", np.arange(n), experts.mean(1)),
        CorrelationRows("P2 all", f"P2: each expert rating a row, {3 * n:,} ratings of {rows}",
                        np.repeat(np.arange(n), 3), experts.reshape(-1)),
    ])


def flickr8k_cf(source=None, include_self_captions: bool = True) -> Benchmark:
    """Flickr8k-CF: human score = fraction of "yes" judgments per caption.

    By default this follows CLIPScore's preparation: all 47,830 rows are kept, and a judged image's own
    caption that appears among its candidates is removed from that image's references (for every
    candidate of the image). ``include_self_captions=False`` drops the 721 self-caption rows instead
    and keeps all 5 references.
    """
    data = load_benchmark("flickr8k_cf", source)
    self_caption = np.asarray(data["is_self_caption"])
    references = data["references"]
    if include_self_captions:
        judged_own = {}
        for image, candidate, is_self in zip(data["image_file"], data["candidate"], self_caption):
            if is_self:
                judged_own.setdefault(image, set()).add(candidate)
        references = [[r for r in refs if r not in judged_own.get(image, ())]
                      for image, refs in zip(data["image_file"], references)]
        keep = np.arange(data.num_rows)
        rule = (f"all {data.num_rows:,} captions; {int(self_caption.sum())} self-captions kept and removed from their "
                f"image's references (CLIPScore's preparation)")
    else:
        keep = np.flatnonzero(~self_caption)
        references = [references[i] for i in keep]
        rule = f"{len(keep):,} captions (the {int(self_caption.sum())} self-captions excluded)"
    data = data.select(keep)
    items = Items(data["candidate"], references, data["image_file"])
    return Benchmark("flickr8k_cf", BENCHMARKS["flickr8k_cf"], items, [
        CorrelationRows("fraction yes", f"fraction of yes judgments per caption, {rule}",
                        np.arange(len(items)), np.asarray(data["fraction_yes"], dtype=float)),
    ])


PROTOCOLS = {
    "flickr8k_expert": flickr8k_expert,
    "flickr8k_cf": flickr8k_cf,
}


def prepare(name: str, source=None, **options) -> Benchmark:
    """The items and row sets of benchmark ``name``; ``options`` go to its protocol function."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(PROTOCOLS)}")
    return PROTOCOLS[name](source, **options)
