"""The harness on the released benchmarks' fixtures: the statistic each paper reports, checked against a
hand computation (Kendall τ by counting pairs, FOIL accuracy by comparing each pair), splits scored apart,
bootstrap intervals and protocol statements, and ``--dataset all`` with part of the data here."""

import datasets
import numpy as np
import pytest

from capeval.benchmarks import prepare, run_benchmark, run_benchmarks
from capeval.cli import main

from fixtures.released import (FOIL_ANNOTATIONS, hand_kendall, LONGCAP_CAPTIONS, LONGCAP_SCORES, NEBULA, POLARIS, write_foil,
                                write_longcap_arena, write_nebula, write_polaris)


@pytest.fixture(autouse=True)
def quiet_datasets():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


def words(predictions, references):
    return [len(p.split()) for p in predictions]


def values(result) -> dict:
    return {(row.row_set, row.statistic): row.value for row in result.rows}


def test_polaris_tau_c_and_tau_b_over_the_test_rows(tmp_path):
    folder = write_polaris(tmp_path / "polaris")
    result = run_benchmark(words, "polaris", source=folder, num_samples=0, verbose=False)
    tau_b, tau_c = hand_kendall([len(mt.split()) for mt, *_ in POLARIS], [score for _, _, score, _ in POLARIS])
    assert values(result) == pytest.approx({("human", "tau-b"): tau_b, ("human", "tau-c"): tau_c})
    assert round(tau_c, 6) == 0.277778  # pinned: 5 more concordant than discordant pairs of 15
    assert result.rows[1].n == 6 and result.rows[1].protocol == (
        "the released human score of each of the 6 test rows (polaris_test.csv), one τ over all rows")
    # The same bootstrap as every correlation benchmark: 95% percentile interval over resampled captions.
    bootstrapped = run_benchmark(words, "polaris", source=folder, num_samples=20, verbose=False)
    assert all(row.low <= row.value <= row.high for row in bootstrapped.rows)
    assert bootstrapped.settings["bootstrap_samples"] == 20


def test_nebula_correlates_the_corrected_scores_unless_asked_for_the_released_ones(tmp_path):
    folder = write_nebula(tmp_path / "nebula")
    lengths = [len(mt.split()) for _, _, mt, _ in NEBULA]
    corrected = run_benchmark(words, "nebula", source=folder, num_samples=0, verbose=False)
    released = run_benchmark(words, "nebula", source=folder, num_samples=0, verbose=False, scores="uncorrected")
    assert values(corrected) == pytest.approx(dict(zip([("human", "tau-b"), ("human", "tau-c")],
                                                       hand_kendall(lengths, [0.5, 0.0, 0.25, 0.0, 0.0]))))
    assert values(released) == pytest.approx(dict(zip([("human", "tau-b"), ("human", "tau-c")],
                                                      hand_kendall(lengths, [s for *_, s in NEBULA]))))
    assert "corrected from Spica where its image and caption match (2 of 5 rows)" in corrected.rows[0].protocol
    assert "as released (no Spica correction)" in released.rows[0].protocol
    assert released.settings["protocol_options"] == {"scores": "uncorrected"}
    with pytest.raises(ValueError, match="scores must be 'corrected' or 'uncorrected'"):
        prepare("nebula", folder, scores="fixed")


def overlap(predictions, references):
    """Words of the caption found in the references (a reference-based stand-in metric)."""
    return [len(set(p.split()) & set(" ".join(refs).split())) for p, refs in zip(predictions, references)]


def characters(predictions, references):
    return [len(p) for p in predictions]


characters.needs_references = False


def test_foil_accuracy_with_one_and_four_references_and_without(tmp_path):
    folder = write_foil(tmp_path / "foil")
    bench = prepare("foil", folder)
    pairs = [(orig, foil, refs) for orig, foil, refs in zip(
        bench.items.candidates[:3], bench.items.candidates[3:6], bench.items.references[:3])]
    one_ref = [refs for refs in bench.items.references[:3]]
    assert [len(refs) for refs in one_ref] == [1, 1, 1] and one_ref[0] == ["a person riding a horse"]
    assert [len(refs) for refs in bench.items.references[6:9]] == [4, 4, 4]
    assert bench.items.references[12:] == [None] * 6

    def hand_accuracy(references_of):
        wins = [overlap([o], [references_of(k)])[0] > overlap([f], [references_of(k)])[0]
                for k, (o, f, _) in enumerate(pairs)]
        return 100 * sum(wins) / len(wins)

    four = bench.items.references[6:9]
    result = run_benchmark(overlap, "foil", source=folder, num_samples=0, verbose=False)
    got = {row.row_set: row.value for row in result.rows}
    assert got == pytest.approx({"1-ref": hand_accuracy(lambda k: one_ref[k]), "4-ref": hand_accuracy(lambda k: four[k])})
    # Pinned: the cow and dog foils lose a shared word ("horse", "cats"); the boat foil loses "beach", which no
    # reference has, so it ties its original and fails, with one reference and with four.
    assert got == pytest.approx({"1-ref": 200 / 3, "4-ref": 200 / 3})
    assert result.settings["ties"] == "fail" and result.settings["tie_counts"] == {"1-ref": 1, "4-ref": 1}
    assert [row.n for row in result.rows] == [3, 3]
    assert "a tie fails" in result.rows[0].protocol and result.rows[0].protocol.endswith("a metric tie counts 0")
    # A tie fails whatever the run's tie rule: the compute_foil script counts only orig > foil.
    assert values(run_benchmark(overlap, "foil", source=folder, num_samples=0, verbose=False, ties="half")) == values(result)
    # A reference-free metric is scored on the reference-free items only.
    free = run_benchmark(characters, "foil", source=folder, num_samples=0, verbose=False)
    original_longer = [len(o) > len(f) for o, f, _ in pairs]
    assert {row.row_set: row.value for row in free.rows} == pytest.approx({"reference-free": 100 * np.mean(original_longer)})
    assert len(free.prepared.items) == 6 and all(refs is None for refs in free.prepared.items.references)
    bootstrapped = run_benchmark(overlap, "foil", source=folder, num_samples=20, verbose=False)
    assert all(row.low <= row.value <= row.high for row in bootstrapped.rows)
    # Each setting is one call: the originals then the foils, with that setting's references.
    calls = []

    def recording(predictions, references):
        calls.append(([len(refs) for refs in references], predictions))
        return overlap(predictions, references)

    run_benchmark(recording, "foil", source=folder, num_samples=0, verbose=False)
    assert [lengths for lengths, _ in calls] == [[1] * 6, [4] * 6]
    assert calls[0][1] == [a["caption"] for a in FOIL_ANNOTATIONS if not a["foil"] for _ in range(2 if a["id"] == 1 else 1)] + [
        a["caption"] for a in FOIL_ANNOTATIONS if a["foil"]]


def test_longcap_arena_tau_per_perspective_and_test_set_each_split_scored_alone(tmp_path):
    folder = write_longcap_arena(tmp_path / "arena")
    calls = []

    def rank_in_call(predictions, references):
        """The caption's length rank within the call: it depends on what else the call holds."""
        calls.append(len(predictions))
        order = np.argsort([len(p) for p in predictions], kind="stable")
        ranks = np.empty(len(predictions))
        ranks[order] = np.arange(len(predictions))
        return ranks.tolist()

    result = run_benchmark(rank_in_call, "longcap_arena", source=folder, num_samples=0, verbose=False)
    assert calls == [3] * 6  # one call per Hub split
    ranks = rank_in_call([c for _, c in LONGCAP_CAPTIONS], None)
    expected = {}
    for split, scores in LONGCAP_SCORES.items():
        name = f"{'TestA' if split.startswith('dci_val') else 'TestB'} {split.split('.')[1]}"
        expected[name, "tau-b"], expected[name, "tau-c"] = hand_kendall(ranks, scores)
    assert values(result) == pytest.approx(expected)
    assert list(dict.fromkeys(row.row_set for row in result.rows)) == [
        "TestA desc", "TestA rel", "TestA flu", "TestB desc", "TestB rel", "TestB flu"]
    assert result.rows[0].protocol == "Descriptiveness judgments of TestA (dci_val.desc), 3 captions scored as one split"


def test_image_metrics_use_the_image_folder_of_the_data(tmp_path):
    seen = []

    def with_images(predictions, references, images=None):
        seen.append(images)
        return [len(p) for p in predictions]

    with_images.needs_images = True
    skipped = run_benchmark(with_images, "polaris", source=write_polaris(tmp_path / "bare"), verbose=False)
    assert "needs images" in skipped.skipped
    folder = write_polaris(tmp_path / "polaris", images=True)
    run_benchmark(with_images, "polaris", source=folder, num_samples=0, verbose=False)
    assert seen[0] == [str(folder / "images" / imgid) for *_, imgid in POLARIS]
    # A metric that needs no images gets none, even where the folder has them.
    assert run_benchmark(words, "polaris", source=folder, num_samples=0, verbose=False).rows


def test_all_runs_the_benchmarks_whose_data_is_here_and_names_the_others(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path))
    write_polaris(tmp_path / "polaris")
    from capeval.benchmarks import rowsets

    assert rowsets.with_data() == (["flickr8k_expert", "flickr8k_cf", "composite", "pascal50s", "capeval1k", "thumb",
                                    "polaris"], ["nebula", "foil", "longcap_arena"])
    monkeypatch.setattr(rowsets, "BENCHMARKS", {k: rowsets.BENCHMARKS[k] for k in ("thumb", "polaris", "nebula", "foil")})
    results = run_benchmarks(words, "all", num_samples=0)
    assert [r.benchmark for r in results] == ["thumb", "polaris"]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (f"not run: nebula, foil (no data here: put each one's released files in {tmp_path}/<name> or "
                          f"--data DIR/<name>; `capeval benchmark --dataset <name>` says what to download); amber (it "
                          f"scores a model's responses, not a metric: capeval benchmark --metric amber --dataset amber "
                          f"--results FILE)")


def test_benchmark_command_reads_released_data_and_says_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPEVAL_DATA", str(tmp_path / "empty"))
    write_polaris(tmp_path / "root" / "polaris")
    assert main(["benchmark", "--metric", "bleu:order=1", "--dataset", "polaris", "--data", str(tmp_path / "root"),
                 "--samples", "0"]) == 0
    out = capsys.readouterr().out
    assert "### Polaris" in out and "| bleu(order=1) |" in out and "one τ over all rows" in out
    assert main(["benchmark", "--metric", "bleu", "--dataset", "nebula", "--samples", "0"]) == 2
    error = capsys.readouterr().err
    assert "hf download Ka2ukiMatsuda/Nebula" in error and str(tmp_path / "empty" / "nebula") in error
    (tmp_path / "root" / "polaris" / "polaris_test.csv").write_text("mt,score,imgid\na dog,0.5,p0.jpg\n")
    assert main(["benchmark", "--metric", "bleu", "--dataset", "polaris", "--data", str(tmp_path / "root")]) == 2
    assert "polaris_test.csv: no column refs" in capsys.readouterr().err
    from capeval.benchmarks import rowsets

    monkeypatch.setattr(rowsets, "with_data", lambda names=None, data_root=None: (["thumb"], ["nebula", "foil"]))
    assert main(["benchmark", "--metric", "bleu:order=1", "--dataset", "all", "--samples", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("not run: nebula, foil (no data here:") and lines[0].endswith("--results FILE)") and "### THumB 1.0 (MSCOCO)" in lines


def test_restrict_keeps_pairs_groups_and_reference_free_items_of_the_usable_items():
    from capeval.benchmarks.harness import restrict
    from capeval.benchmarks.rowsets import Benchmark, Items, PairRows

    items = Items(["a", "b", "c", "d"], [["r"], None, ["r"], ["r"]], ["i0", "i1", "i2", "i3"])
    # Pair 0 prefers item 2 over item 0 (a second item may come first); pair 1 uses the dropped item 1.
    pairs = PairRows("pairs", "p", np.array([2, 1]), np.array([0, 3]), np.array([1, 1]), np.array(["x", "y"]),
                     categories=("x", "y"), mean=False, ties="fail")
    bench = Benchmark("b", "B", items, pairs=pairs, groups=[np.array([0, 1]), np.array([2, 3])],
                      reference_free=np.array([1, 3]), images_dir="imgs")
    kept = restrict(bench, np.array([0, 2, 3]))
    assert kept.items.candidates == ["a", "c", "d"] and kept.images_dir == "imgs"
    assert kept.pairs.first.tolist() == [1] and kept.pairs.second.tolist() == [0] and kept.pairs.category.tolist() == ["x"]
    assert (kept.pairs.categories, kept.pairs.mean, kept.pairs.ties) == (("x", "y"), False, "fail")
    assert [g.tolist() for g in kept.groups] == [[0], [1, 2]] and kept.reference_free.tolist() == [2]
    free = restrict(bench, np.array([1, 3]), "without references")
    assert free.reference_free.tolist() == [0, 1] and [g.tolist() for g in free.groups] == [[0], [1]]
    assert (free.pairs.first.tolist(), free.pairs.second.tolist(), free.pairs.category.tolist()) == ([0], [1], ["y"])
    assert restrict(Benchmark("b", "B", items), np.array([0])).reference_free is None


def test_run_benchmark_prints_its_table_unless_told_not_to(tmp_path, capsys):
    run_benchmark(words, "polaris", source=write_polaris(tmp_path / "polaris"), num_samples=0)
    assert "### Polaris" in capsys.readouterr().out


def test_pair_counts_per_category(tmp_path):
    pascal = run_benchmark(words, "pascal50s", num_samples=0, verbose=False)
    assert [(row.row_set, row.n) for row in pascal.rows] == [("HC", 1000), ("HI", 1000), ("HM", 1000), ("MM", 1000),
                                                             ("mean", 4000)]
    free = run_benchmark(characters, "foil", source=write_foil(tmp_path / "foil"), num_samples=0, verbose=False)
    assert [(row.row_set, row.n) for row in free.rows] == [("reference-free", 3)]


def test_foil_items_keep_their_images_and_a_loaded_dataset_is_a_source(tmp_path):
    from capeval.benchmarks import load_benchmark

    folder = write_foil(tmp_path / "foil", images=True)
    seen = []

    def with_images(predictions, references, images=None):
        seen.append([path.rsplit("_", 1)[-1] for path in images])
        return [len(p) for p in predictions]

    with_images.needs_images = True
    run_benchmark(with_images, "foil", source=folder, num_samples=0, verbose=False)
    assert seen == [["000000000010.jpg", "000000000010.jpg", "000000000011.jpg"] * 2] * 2
    bench = prepare("foil", folder)
    assert len(bench.items.image_files) == len(bench.items.candidates) == 18
    loaded = prepare("foil", load_benchmark("foil", data_dir=folder))
    assert loaded.items.candidates == bench.items.candidates and loaded.images_dir is None


def test_all_with_every_benchmark_here_names_only_amber_as_not_run(monkeypatch, capsys):
    from capeval.benchmarks import rowsets

    monkeypatch.setattr(rowsets, "BENCHMARKS", {"thumb": rowsets.BENCHMARKS["thumb"]})
    assert [r.benchmark for r in run_benchmarks(words, "all", num_samples=0)] == ["thumb"]
    assert capsys.readouterr().out.splitlines()[0] == (
        "not run: amber (it scores a model's responses, not a metric: capeval benchmark --metric amber --dataset amber "
        "--results FILE)")
