"""Benchmark protocols: which captions a metric scores and which human judgments they are compared with.

A :class:`Benchmark` holds the *items* (candidate, references, judged image) a metric scores once
(or once per group, where the published protocol scores splits apart), and the *row sets* built on them:
correlation row sets (one human score per row, each row points at an item; Flickr8k-Expert's P2 points three
rows at every item) and, for PASCAL-50S and FOIL, pairs of items with the preferred one. Every row set carries
a ``protocol`` string stating how it was built.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from capeval.benchmarks.hub import load_benchmark


@dataclass
class Items:
    """What a metric scores: one candidate caption per item, its references and the judged image."""

    candidates: list[str]
    references: list[list[str] | None]  # None where a benchmark has no references for the item
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


#: PASCAL-50S pair categories: human-correct, human-incorrect, human-machine, machine-machine.
PASCAL_CATEGORIES = ("HC", "HI", "HM", "MM")


@dataclass
class PairRows:
    """Pairwise preferences: the humans preferred item ``first[i]`` over ``second[i]`` when ``label[i]`` is 1.
    Accuracy is reported per category (in ``categories`` order) and, when ``mean``, as their mean; ``ties``
    fixes how a metric tie counts where the published protocol does (``None``: the run's ``ties``)."""

    name: str
    protocol: str
    first: np.ndarray
    second: np.ndarray
    label: np.ndarray
    category: np.ndarray
    categories: tuple[str, ...] = PASCAL_CATEGORIES
    mean: bool = True
    ties: str | None = None


@dataclass
class Benchmark:
    name: str
    title: str
    items: Items
    correlations: list[CorrelationRows] = field(default_factory=list)
    pairs: PairRows | None = None
    notes: list[str] = field(default_factory=list)
    #: Item index arrays scored by separate metric calls: splits the published tables score on their own, so
    #: corpus statistics (CIDEr-D's IDF) stay within each; empty: one call on all items.
    groups: list[np.ndarray] = field(default_factory=list)
    #: The items a reference-free metric scores (FOIL's copies without references); ``None``: all items.
    reference_free: np.ndarray | None = None
    #: The folder of the benchmark's images when its data folder has one (image metrics use it by default).
    images_dir: str | None = None


def load_columns(name: str, source=None, config: str | None = None) -> dict[str, list]:
    """A benchmark's columns as Python lists (without the optional image column)."""
    dataset = load_benchmark(name, source, config=config) if config else load_benchmark(name, source)
    return (dataset.remove_columns("image") if "image" in dataset.features else dataset).to_dict()


def take(columns: dict[str, list], rows) -> dict[str, list]:
    return {name: [values[i] for i in rows] for name, values in columns.items()}


def flickr8k_expert(source=None, include_self_captions: bool = False, drop_reference: int | None = None) -> Benchmark:
    """Flickr8k-Expert under both protocols.

    P1 (``mean``): one row per caption, human score = mean of the 3 experts (BERT-TBR, ViLBERTScore).
    P2 (``all``): one row per expert rating (SPICE, CLIPScore, PAC-S). Without
    ``include_self_captions`` the 158 self-caption rows are dropped: 5,664 and 16,992 rows.
    The items are in ``ExpertAnnotations.txt`` order, the order of BERT-TBR's ``flickr.json``.
    ``drop_reference=k`` scores against 4 references, the image's k-th (0-4, ``Flickr8k.token.txt``
    order) left out.

    >>> bench = flickr8k_expert()
    >>> len(bench.items), [len(rows.human) for rows in bench.correlations]
    (5664, [5664, 16992])
    >>> flickr8k_expert(drop_reference=0).correlations[0].protocol
    'P1: mean of 3 expert ratings per caption, 5,664 captions (the 158 self-captions excluded), 4 references (the first left out)'
    """
    if drop_reference is not None and drop_reference not in range(5):
        raise ValueError(f"drop_reference must be 0-4 (which of the 5 references to leave out) or None, got {drop_reference!r}")
    data = load_columns("flickr8k_expert", source)
    keep = np.ones(len(data["row_id"]), bool) if include_self_captions else ~np.asarray(data["is_self_caption"])
    data = take(data, np.flatnonzero(keep))
    references = data["references"]
    if drop_reference is not None:
        references = [refs[:drop_reference] + refs[drop_reference + 1:] for refs in references]
    items = Items(data["candidate"], references, data["image_file"])
    n = len(items)
    rows = f"{n:,} captions ({'158 self-captions kept' if include_self_captions else 'the 158 self-captions excluded'})"
    if drop_reference is not None:
        rows += f", 4 references (the {('first', 'second', 'third', 'fourth', 'fifth')[drop_reference]} left out)"
    experts = np.asarray(data["expert_scores"], dtype=float)
    return Benchmark("flickr8k_expert", BENCHMARKS["flickr8k_expert"].title, items, [
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
    data = load_columns("flickr8k_cf", source)
    self_caption = np.asarray(data["is_self_caption"])
    references = data["references"]
    if include_self_captions:
        judged_own: dict[str, set[str]] = {}
        for image, candidate, is_self in zip(data["image_file"], data["candidate"], self_caption):
            if is_self:
                judged_own.setdefault(image, set()).add(candidate)
        references = [[r for r in refs if r not in judged_own.get(image, ())]
                      for image, refs in zip(data["image_file"], references)]
        keep = np.arange(len(self_caption))
        rule = (f"all {len(keep):,} captions; {int(self_caption.sum())} self-captions kept and removed from their "
                f"image's references (CLIPScore's preparation)")
    else:
        keep = np.flatnonzero(~self_caption)
        references = [references[i] for i in keep]
        rule = f"{len(keep):,} captions (the {int(self_caption.sum())} self-captions excluded)"
    data = take(data, keep)
    items = Items(data["candidate"], references, data["image_file"])
    return Benchmark("flickr8k_cf", BENCHMARKS["flickr8k_cf"].title, items, [
        CorrelationRows("fraction yes", f"fraction of yes judgments per caption, {rule}",
                        np.arange(len(items)), np.asarray(data["fraction_yes"], dtype=float)),
    ])


def composite(source=None, candidate_reference: str = "remove") -> Benchmark:
    """Composite: one τ over all 11,985 correctness scores.

    The bundled references cover the Flickr8k subset (2,991 rows) only; ``source`` may be Composite with
    the others attached (:func:`capeval.benchmarks.attach_references`). Reference-based metrics are scored
    on the rows with references and reference-free ones on all rows (the harness picks); ``notes`` names
    the subsets left without references. A candidate that is one of its image's
    references (all 997 human captions) has that reference removed (``candidate_reference="remove"``,
    the default, after Hessel) or kept (``"keep"``).
    """
    if candidate_reference not in ("remove", "keep"):
        raise ValueError(f"candidate_reference must be 'remove' or 'keep', got {candidate_reference!r}")
    data = load_columns("composite", source)
    references = []
    for refs, own in zip(data["references"], data["candidate_reference_index"]):
        if refs is not None and own is not None and candidate_reference == "remove":
            refs = refs[:own] + refs[own + 1:]
        references.append(refs)
    items = Items(data["candidate"], references, data["image_file"])
    rule = ("the candidate's own reference removed" if candidate_reference == "remove"
            else "the candidate's own reference kept")
    return Benchmark("composite", BENCHMARKS["composite"].title, items, [
        CorrelationRows("correctness", f"AMT correctness 1-5, one τ over all rows; Flickr8k references with {rule}",
                        np.arange(len(items)), np.asarray(data["score"], dtype=float)),
    ], notes=[f"no references for the {n:,} {subset} rows (pass its captions file: attach_references)"
              for subset, n in rows_without_references(data).items()])


def rows_without_references(data: dict[str, list]) -> dict[str, int]:
    """Composite subset → number of its rows without references."""
    counts: dict[str, int] = {}
    for subset, refs in zip(data["subset"], data["references"]):
        if refs is None:
            counts[subset] = counts.get(subset, 0) + 1
    return counts


def parse_reference_rule(refs: str) -> tuple[str, int | None]:
    """``first5`` | ``random5:<seed>`` | ``all`` | ``fleur5`` → (rule, seed)."""
    if refs in ("first5", "all", "fleur5"):
        return refs, None
    if refs.startswith("random5:") and refs[len("random5:"):].isdigit():
        return "random5", int(refs[len("random5:"):])
    raise ValueError(f"refs must be 'first5', 'random5:<seed>', 'all' or 'fleur5', got {refs!r}")


def pascal50s(source=None, refs: str = "first5") -> Benchmark:
    """PASCAL-50S pairwise accuracy; every candidate is scored on its own against the image's references.

    ``refs``: ``first5`` (the first 5 of the 50, SMURF's rule; default), ``random5:<seed>`` (5 drawn per
    image with a fixed seed), ``fleur5`` (the 5 of FLEUR's file) or ``all`` (all 50).

    >>> bench = pascal50s()
    >>> len(bench.items), len(bench.pairs.label), bench.pairs.protocol
    (8000, 4000, 'references: the first 5 of the 50 per image')
    """
    rule, seed = parse_reference_rule(refs)
    dataset = load_benchmark("pascal50s", source)
    data = dataset.remove_columns("image").to_dict()
    all_refs = data["references"]
    if rule == "first5":
        chosen, text = [r[:5] for r in all_refs], "the first 5 of the 50 per image"
    elif rule == "all":
        chosen, text = all_refs, "all 50 per image"
    elif rule == "fleur5":
        chosen, text = data["fleur_references"], "the 5 per pair of FLEUR's file"
    else:
        rng = np.random.default_rng(seed)
        draws = {}
        for image, refs_of_image in zip(data["image_file"], all_refs):
            if image not in draws:
                draws[image] = [refs_of_image[k] for k in sorted(rng.choice(50, 5, replace=False))]
        chosen, text = [draws[image] for image in data["image_file"]], f"5 of the 50 per image drawn with seed {seed}"
    n = len(all_refs)
    items = Items(data["caption_a"] + data["caption_b"], chosen + chosen, data["image_file"] * 2)
    categories = np.asarray(dataset.features["category"].int2str(data["category"]))
    label_first = (np.asarray(data["label"]) == 0).astype(int)
    return Benchmark("pascal50s", BENCHMARKS["pascal50s"].title, items, pairs=PairRows(
        "pairs", f"references: {text}", np.arange(n), np.arange(n, 2 * n), label_first, categories))


def capeval1k(source=None, fully_decoded_only: bool = False) -> Benchmark:
    """CapEval1k: τ against the [0, 1] overall human score; no references (reference-free metrics only).
    The 31 captions with unresolved word pieces are kept unless ``fully_decoded_only``."""
    data = load_columns("capeval1k", source)
    if fully_decoded_only:
        data = take(data, np.flatnonzero(data["fully_decoded"]))
    n = len(data["candidate"])
    items = Items(data["candidate"], [None] * n, data["image_file"])
    kept = "the 31 partly decoded captions excluded" if fully_decoded_only else "31 partly decoded captions included"
    return Benchmark("capeval1k", BENCHMARKS["capeval1k"].title, items, [
        CorrelationRows("overall", f"overall human score in [0, 1], {n:,} captions ({kept})",
                        np.arange(n), np.asarray(data["score"], dtype=float)),
    ], notes=["no references: reference-based metrics cannot run"])


def thumb(source=None, include_human: bool = True) -> Benchmark:
    """THumB 1.0 (MSCOCO): τ against the total human score, and against precision and recall alone.
    ``include_human=False`` drops the 500 human captions (the machine systems only)."""
    data = load_columns("thumb", source)
    if not include_human:
        data = take(data, np.flatnonzero(np.asarray(data["system"]) != "Human"))
    items = Items(data["candidate"], data["references"], data["image_file"])
    n = len(items)
    rows = f"{n:,} captions ({'5 systems incl. Human' if include_human else '4 machine systems'}), 4 references each"
    return Benchmark("thumb", BENCHMARKS["thumb"].title, items, [
        CorrelationRows(name, f"{what}, {rows}", np.arange(n), np.asarray(data[column], dtype=float))
        for name, column, what in (("total", "score", "total score (P+R)/2 + penalties"),
                                   ("precision", "precision", "precision 1-5"), ("recall", "recall", "recall 1-5"))
    ])


def released_folder(name: str, source) -> tuple[object, str | None]:
    """(what ``load_benchmark`` reads, the images folder) for a benchmark read from released files: ``source`` is
    its folder (or a loaded Dataset), ``None`` for capeval's data folder."""
    import datasets

    from capeval.benchmarks.released import images_dir

    if isinstance(source, datasets.Dataset):
        return source, None
    return source, images_dir(name, source)


def judged(name: str, source, config: str | None = None) -> tuple[dict[str, list], Items, str | None]:
    """The columns, items and images folder of a released benchmark whose rows are judged captions."""
    source, images = released_folder(name, source)
    data = load_columns(name, source, config)
    return data, Items(data["candidate"], data["references"], data["image_file"]), images


def polaris(source=None) -> Benchmark:
    """Polaris: one τ over the human scores of its test split (``polaris_test.csv``), as the Polos ``validate/``
    script computes it."""
    data, items, images = judged("polaris", source)
    n = len(items)
    return Benchmark("polaris", BENCHMARKS["polaris"].title, items, [
        CorrelationRows("human", f"the released human score of each of the {n:,} test rows (polaris_test.csv), "
                                 f"one τ over all rows", np.arange(n), np.asarray(data["score"], dtype=float)),
    ], images_dir=images)


def nebula(source=None, scores: str = "corrected") -> Benchmark:
    """Nebula: one τ over its test split's human scores, ``corrected`` from Spica where a Spica row has the same
    image and caption (the Pearl paper's correction; default) or as released (``uncorrected``, as in the DENEB
    paper)."""
    if scores not in ("corrected", "uncorrected"):
        raise ValueError(f"scores must be 'corrected' or 'uncorrected', got {scores!r}")
    data, items, images = judged("nebula", source, "default" if scores == "corrected" else "uncorrected")
    n = len(items)
    rule = (f"corrected from Spica where its image and caption match ({sum(data['corrected']):,} of {n:,} rows), "
            f"as released elsewhere" if scores == "corrected" else "as released (no Spica correction)")
    return Benchmark("nebula", BENCHMARKS["nebula"].title, items, [
        CorrelationRows("human", f"human score of each of the {n:,} test rows, {rule}; one τ over all rows",
                        np.arange(n), np.asarray(data["score"], dtype=float)),
    ], images_dir=images)


#: FOIL's reference settings, as the pair categories name them.
FOIL_SETTINGS = ("1-ref", "4-ref", "reference-free")


def foil(source=None) -> Benchmark:
    """FOIL-COCO: per pair, does the metric score the original caption above its foil? Accuracy with 1
    reference, with all the image's other references (4 for most images) and without references; a tie fails,
    as the ``compute_foil`` script of Polos, DENEB and Pearl counts only ``orig > foil``. The three settings are
    separate item groups (scored apart, so CIDEr's IDF comes from each setting's own references); a
    reference-free metric scores the reference-free group only.

    Each pair is two items per setting: the original and the foil caption of one image with the same references.
    """
    source, images = released_folder("foil", source)
    data = load_columns("foil", source)
    n = len(data["pair_id"])
    settings = {"1-ref": [refs[:1] for refs in data["references"]], "4-ref": data["references"], "reference-free": [None] * n}
    candidates: list[str] = []
    references: list[list[str] | None] = []
    image_files: list[str] = []
    groups: list[np.ndarray] = []
    for setting in FOIL_SETTINGS:
        groups.append(np.arange(len(candidates), len(candidates) + 2 * n))
        candidates += data["original"] + data["foil"]
        references += settings[setting] * 2
        image_files += data["image_file"] * 2
    first = np.concatenate([group[:n] for group in groups])
    protocol = (f"{n:,} FOIL test pairs (original caption, one-word foil) per setting; a pair counts when the "
                f"original scores above the foil (a tie fails, as in the Polos/DENEB/Pearl compute_foil script); "
                f"1-ref: the first COCO reference of the image other than the original caption, 4-ref: all the "
                f"image's other COCO references, reference-free: none")
    return Benchmark("foil", BENCHMARKS["foil"].title, Items(candidates, references, image_files), pairs=PairRows(
        "pairs", protocol, first, first + n, np.ones(3 * n, dtype=int), np.repeat(np.asarray(FOIL_SETTINGS), n),
        categories=FOIL_SETTINGS, mean=False, ties="fail"), groups=groups, reference_free=groups[2], images_dir=images)


#: LongCap-Arena's perspectives as VELA's tables name them.
PERSPECTIVES = {"desc": "Descriptiveness", "rel": "Relevance", "flu": "Fluency"}


def longcap_arena(source=None) -> Benchmark:
    """LongCap-Arena: τ per perspective (Descriptiveness, Relevance, Fluency) on TestA (``dci_val``) and TestB
    (``dci_test``), each of the six splits scored on its own, as VELA's tables and CaptionEvalKit report them."""
    data, items, images = judged("longcap_arena", source)
    split = np.asarray(data["hub_split"])
    groups, correlations = [], []
    for hub_split in dict.fromkeys(data["hub_split"]):
        rows = np.flatnonzero(split == hub_split)
        test_set, perspective = data["test_set"][rows[0]], data["perspective"][rows[0]]
        groups.append(rows)
        correlations.append(CorrelationRows(
            f"{test_set} {perspective}", f"{PERSPECTIVES[perspective]} judgments of {test_set} ({hub_split}), "
                                         f"{len(rows):,} captions scored as one split", rows,
            np.asarray(data["score"], dtype=float)[rows]))
    return Benchmark("longcap_arena", BENCHMARKS["longcap_arena"].title, items, correlations, groups=groups,
                     images_dir=images)


@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark of the registry: its display title, the protocol function that prepares it, and its headline
    result (the row set, ``None`` for its first, and the statistic the leaderboard's one column for it shows). A
    benchmark not ``bundled`` is read from its released files (:mod:`capeval.benchmarks.released`)."""

    title: str
    protocol: Callable[..., Benchmark]
    bundled: bool = True
    headline: tuple[str | None, str] = (None, "tau-c")

    def options(self) -> list[str]:
        """The protocol options this benchmark takes (``refs``, ``include_self_captions``, ...).

        >>> BENCHMARKS["pascal50s"].options()
        ['refs']
        """
        return [name for name in inspect.signature(self.protocol).parameters if name != "source"]


#: The one registry of benchmarks: name → title, protocol and headline (the papers' usual statistic: τ-c, τ-b for
#: Flickr8k-CF as CLIPScore and PAC-S report it, accuracy for the pairwise sets).
BENCHMARKS = {
    "flickr8k_expert": BenchmarkSpec("Flickr8k-Expert", flickr8k_expert),
    "flickr8k_cf": BenchmarkSpec("Flickr8k-CF", flickr8k_cf, headline=(None, "tau-b")),
    "composite": BenchmarkSpec("Composite", composite),
    "pascal50s": BenchmarkSpec("PASCAL-50S", pascal50s, headline=("mean", "accuracy")),
    "capeval1k": BenchmarkSpec("CapEval1k", capeval1k),
    "thumb": BenchmarkSpec("THumB 1.0 (MSCOCO)", thumb),
    "polaris": BenchmarkSpec("Polaris", polaris, bundled=False),
    "nebula": BenchmarkSpec("Nebula", nebula, bundled=False),
    "foil": BenchmarkSpec("FOIL-COCO", foil, bundled=False, headline=(None, "accuracy")),
    "longcap_arena": BenchmarkSpec("LongCap-Arena", longcap_arena, bundled=False),
}


def with_data(names=None, data_root=None) -> tuple[list[str], list[str]]:
    """(the benchmarks of ``names``, default all, whose data is here, those whose released files are not); the
    released ones are looked for in ``data_root/<name>``, default capeval's data folder. Nothing is downloaded."""
    from capeval.benchmarks.released import present

    here: list[str] = []
    missing: list[str] = []
    for name in BENCHMARKS if names is None else names:
        folder = None if data_root is None else f"{data_root}/{name}"
        (here if BENCHMARKS[name].bundled or present(name, folder) else missing).append(name)
    return here, missing


def prepare(name: str, source=None, **options) -> Benchmark:
    """The items and row sets of benchmark ``name``; ``options`` go to its protocol function."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(BENCHMARKS)}")
    return BENCHMARKS[name].protocol(source, **options)
