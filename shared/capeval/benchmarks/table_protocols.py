"""The protocol of each published table, in the harness's vocabulary, as found by ``scripts/search_protocols.py``.

A protocol is credited to a table only when one setting reproduces the table's baseline rows together
(never cell by cell). Per benchmark it names the protocol options (:mod:`capeval.benchmarks.rowsets`),
the correlation row set and statistic, and PASCAL-50S's tie rule; per table, the COCO toolkit options
of the baseline metrics (``tokenizer``, BLEU ``smoothing``). ``differs`` documents, per benchmark, what the
search tried and the closest Δ when no setting reproduces the printed baselines.

>>> PROTOCOLS["bert_tbr", "Table 3"].settings["flickr8k_expert"].describe()
'flickr8k_expert P1 mean tau-b (include_self_captions=False)'
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BenchmarkSetting:
    """How one benchmark column of a table is computed."""

    options: dict = field(default_factory=dict)
    row_set: str = ""
    statistic: str = "tau-b"
    ties: str = "half"

    def describe(self, benchmark: str = "") -> str:
        what = f"ties count {'0.5' if self.ties == 'half' else '0'}" if not self.row_set else f"{self.row_set} {self.statistic}"
        options = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return " ".join(filter(None, [benchmark, what, f"({options})" if options else ""]))


@dataclass(frozen=True)
class TableProtocol:
    settings: dict[str, BenchmarkSetting]
    #: Options of the COCO baseline metrics (``smoothing`` goes to BLEU only).
    toolkit: dict = field(default_factory=lambda: {"tokenizer": "ptb"})
    #: Per benchmark: why the printed baselines are not reproduced (what was tried, the closest Δ).
    differs: dict[str, str] = field(default_factory=dict)
    #: Per benchmark the table uses but capeval cannot run: the status of its cells.
    unavailable: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        parts = [setting.describe(name) for name, setting in self.settings.items()]
        toolkit = ", ".join(f"{k}={v}" for k, v in self.toolkit.items())
        return "; ".join(parts + [f"baselines: {toolkit}"])


P1 = BenchmarkSetting({"include_self_captions": False}, "P1 mean", "tau-b")
P2 = BenchmarkSetting({"include_self_captions": False}, "P2 all", "tau-c")
CF = BenchmarkSetting({"include_self_captions": True}, "fraction yes", "tau-b")
COMPOSITE = BenchmarkSetting({"candidate_reference": "remove"}, "correctness", "tau-b")
PASCAL = BenchmarkSetting({"refs": "first5"}, ties="half")
CAPEVAL1K = {"capeval1k": "needs the COCO references of CapEval1k's 250 images (its public form has none)"}
FLICKR_SUB = {"flickr8k_tie_free_subset": "needs SMURF's tie-free Flickr8k subset (its construction is not published)"}

PROTOCOLS: dict[tuple[str, str], TableProtocol] = {
    ("bert_tbr", "Table 3"): TableProtocol({"flickr8k_expert": P1, "composite": COMPOSITE}),
    ("bert_tbr", "Table 4"): TableProtocol({"pascal50s": PASCAL}),
    ("vilbertscore", "Table 1"): TableProtocol({"flickr8k_expert": P1, "composite": COMPOSITE}),
    ("vilbertscore", "Table 2"): TableProtocol({"pascal50s": PASCAL}),
    ("umic", "Table 2"): TableProtocol({"flickr8k_expert": P1, "composite": COMPOSITE, "capeval1k": BenchmarkSetting(
        row_set="overall"), "pascal50s": PASCAL}, unavailable=CAPEVAL1K),
    ("qace", "Table 2"): TableProtocol({"flickr8k_expert": P1, "composite": COMPOSITE, "pascal50s": PASCAL}),
    ("smurf", "Table 3"): TableProtocol({"pascal50s": PASCAL}),
    ("smurf", "Table 4"): TableProtocol({"flickr8k_expert": P1, "composite": COMPOSITE}, unavailable=FLICKR_SUB),
    ("pacs", "compute_correlations.py"): TableProtocol({"flickr8k_expert": P2, "flickr8k_cf": CF}),
    ("clipscore", "Tables 1-2"): TableProtocol({"flickr8k_expert": P2, "flickr8k_cf": CF}),
}
