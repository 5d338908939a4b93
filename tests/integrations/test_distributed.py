"""Scoring on Ray Data (capeval.distributed) gives the numbers of single-process scoring, corpus
statistics included; bad rows get an error each, a dying worker's batch is retried, and the CLI's
Ray engine prints what the default engine prints."""

import os
import random
import shutil
from pathlib import Path

import pytest

import capeval
import tiny_models
from capeval.cli import main
from capeval.samples import sample_captions as load_sample
from capeval.distributed import ERROR_COLUMN, default_gpus, default_workers, make_scorer, score_dataset, summarize
from capeval.registry import offline_runs
from capeval.scoring.coco import RougeScorer

ROWS = 2000


@pytest.fixture(scope="module")
def sample_rows() -> list[dict]:
    """2,000 rows from 4 systems: for each of the bundled sample's 16 images, a caption (one of its
    references, its candidate or any caption) against 3 to 5 of its references."""
    rng = random.Random(0)
    images = load_sample()
    pool = [row["candidate"] for row in images] + [r for row in images for r in row["references"]] + tiny_models.CAPTION_CORPUS
    rows = []
    for i in range(ROWS):
        image = images[i % len(images)]
        candidate = rng.choice([*image["references"], image["candidate"], rng.choice(pool), rng.choice(pool)])
        rows.append({"id": i, "system": f"S{i % 4}", "candidate": candidate,
                     "references": rng.sample(image["references"], rng.randint(3, 5))})
    return rows


def blocks(ray, rows: list[dict]):
    """The rows as a Ray Dataset of 8 blocks, so that statistics are counted per block and merged."""
    return ray.data.from_items(rows, override_num_blocks=8)


def scored_columns(scored, columns) -> dict[str, list[float]]:
    """The score columns of a scored dataset in id order; every row must have scored."""
    rows = sorted(scored.take_all(), key=lambda row: row["id"])
    assert [row[ERROR_COLUMN] for row in rows] == [None] * len(rows)
    return {name: [row[name] for row in rows] for name in columns}


def single_process_columns(metric: str, rows: list[dict], **options) -> dict[str, list[float]]:
    """Every output column of ``metric``'s evaluate module computed in this process."""
    scorer = make_scorer(metric, **options)
    result = capeval.load(metric, **options).compute(predictions=[r["candidate"] for r in rows],
                                                     references=[r["references"] for r in rows])
    return {name: result["scores" if name == scorer.primary else name] for name in scorer.columns()}


def assert_close(actual: dict, expected: dict, tolerance: float) -> None:
    assert list(actual) == list(expected)
    for name in expected:
        worst = max(abs(a - b) for a, b in zip(actual[name], expected[name]))
        assert worst <= tolerance, f"{name}: differs by {worst:.3g} (tolerance {tolerance})"


# Text metrics on two actors; models and the METEOR jar (~20 s to start) on one, which two cores load faster.
RUNS = [
    pytest.param("bleu", {}, 1e-9, 2, id="bleu"),
    pytest.param("rouge", {}, 1e-9, 2, id="rouge"),
    pytest.param("cider", {}, 1e-9, 2, id="cider"),
    pytest.param("smurf", {"components": ["sparcs"]}, 1e-9, 2, id="sparcs"),
    pytest.param("bert_tbr", {"model_name": "fixture:tiny_bert_path", "layer": 8, "beta": 0.4}, 1e-6, 1, id="bert_tbr"),
    pytest.param("smurf", {"spurts_model": "fixture:tiny_roberta_path", "mima_model": "fixture:tiny_distilbert_path"}, 1e-6, 1,
                 id="smurf"),
    pytest.param("meteor", {}, 1e-9, 1, id="meteor"),
    pytest.param("meteor", {"engine": "jar"}, 1e-9, 1, id="meteor-jar",
                 marks=pytest.mark.skipif(shutil.which("java") is None, reason="METEOR's jar needs a Java runtime")),
]


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("metric, options, tolerance, workers", RUNS)
def test_distributed_scores_equal_single_process(ray_session, sample_rows, with_fixtures, metric, options, tolerance, workers):
    """Batches of 256 of 2,000 rows in 8 blocks: corpus statistics must be the merged ones to match."""
    options = with_fixtures(options)
    scored = score_dataset(blocks(ray_session, sample_rows), metric, batch_rows=256, num_workers=workers, **options)
    expected = single_process_columns(metric, sample_rows, **options)
    assert_close(scored_columns(scored, list(expected)), expected, tolerance)
    summary = summarize(scored, metric, **options)
    assert_close({name: [mean] for name, mean in summary["means"].items()},
                 {name: [sum(values) / ROWS] for name, values in expected.items()}, tolerance)
    # The corpus values too: corpus BLEU and METEOR's aggregate from the rows' summed statistics.
    corpus = make_scorer(metric, **options).score([r["candidate"] for r in sample_rows], [r["references"] for r in sample_rows]).corpus
    assert_close({name: [summary["corpus"][name]] for name in expected}, {name: [corpus[name]] for name in expected}, tolerance)


@pytest.mark.parametrize("metric, options", [
    ("cider", {}),
    ("bert_tbr", {"model_name": "fixture:tiny_bert_path", "layer": 8, "beta": 0.4}),
])
def test_corpus_statistics_merge_over_shards_and_per_shard_ones_differ(sample_rows, with_fixtures, metric, options):
    """Why the distributed run needs its first pass: statistics of a shard alone change its scores far
    beyond the tolerances above, while the merged statistics of all shards give the whole corpus's scores exactly."""
    scorer = make_scorer(metric, **with_fixtures(options))
    predictions, references = [r["candidate"] for r in sample_rows], [r["references"] for r in sample_rows]
    whole = scorer.score(predictions, references)[scorer.primary]
    half = ROWS // 2
    per_shard = scorer.score(predictions[:half], references[:half])[scorer.primary]
    assert max(abs(a - b) for a, b in zip(per_shard, whole[:half])) > 1e-4
    merged = scorer.count_document_frequencies(predictions[:half], references[:half]).merge(
        scorer.count_document_frequencies(predictions[half:], references[half:]))
    assert scorer.with_document_frequencies(merged).score(predictions[:half], references[:half])[scorer.primary] == whole[:half]
    assert scorer.corpus_dependent and not scorer.with_document_frequencies(merged).corpus_dependent


@pytest.mark.models
@pytest.mark.parametrize("run", offline_runs(), ids=lambda run: run.label)
def test_columns_name_what_score_returns(run):
    options = run.resolved_options()
    if options is None or run.metric == "meteor":
        pytest.skip("not offline here" if options is None else "the METEOR jar is exercised above")
    scorer = make_scorer(run.metric, **options)
    scores = scorer.score(["a dog runs", "a cat"], [["a dog running", "the dog"], ["a cat sleeps"]])
    assert tuple(scores) == scorer.columns()
    assert scorer.count_document_frequencies(["a dog runs"], [["a dog running"]]) is None or scorer.corpus_dependent


@pytest.mark.slow
def test_bad_rows_get_an_error_and_the_rest_score_as_without_them(ray_session, sample_rows):
    good = sample_rows[:300]
    bad = [{"id": 300, "system": "S0", "candidate": None, "references": ["a dog"]},
           {"id": 301, "system": "S1", "candidate": "a dog", "references": []},
           {"id": 302, "system": "S2", "candidate": "a dog", "references": None}]
    scored = score_dataset(blocks(ray_session, good[:150] + bad + good[150:]), "cider", batch_rows=64).materialize()
    rows = sorted(scored.take_all(), key=lambda row: row["id"])
    assert [row[ERROR_COLUMN] is not None for row in rows] == [False] * 300 + [True] * 3
    assert rows[300][ERROR_COLUMN].startswith("ValueError: predictions[0] is NoneType") and rows[300]["cider"] is None
    assert "is empty" in rows[301][ERROR_COLUMN]
    # The corpus statistics count the rows that score, so the good rows match single-process scoring of them alone.
    assert_close({"cider": [row["cider"] for row in rows[:300]]}, single_process_columns("cider", good), 1e-9)
    summary = summarize(scored, "cider")
    assert (summary["rows"], summary["failed"]) == (303, 3)


@pytest.mark.slow
def test_system_results_per_system_from_the_scored_dataset(ray_session, sample_rows):
    scored = score_dataset(blocks(ray_session, sample_rows), "rouge", num_workers=2).materialize()
    expected = single_process_columns("rouge", sample_rows)["rouge_l"]
    systems = summarize(scored, "rouge", by="system")
    assert sorted(systems) == ["S0", "S1", "S2", "S3"]
    for i in range(4):
        values = expected[i::4]
        assert (systems[f"S{i}"]["rows"], systems[f"S{i}"]["failed"]) == (ROWS // 4, 0)
        assert systems[f"S{i}"]["means"]["rouge_l"] == pytest.approx(sum(values) / len(values), abs=1e-9)
        assert systems[f"S{i}"]["sums"]["rouge_l"] == pytest.approx(sum(values), abs=1e-9)


class CrashOnceRouge(RougeScorer):
    """ROUGE-L whose worker process dies on the first batch it scores (a marker file says it happened)."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker

    def score(self, predictions, references=None, **inputs):
        if not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(1)
        return super().score(predictions, references, **inputs)


@pytest.mark.slow
def test_a_batch_whose_worker_dies_is_retried(ray_session, sample_rows, tmp_path):
    marker = tmp_path / "crashed"
    rows = sample_rows[:200]
    scored = score_dataset(blocks(ray_session, rows), CrashOnceRouge(str(marker)), num_workers=1, batch_rows=50)
    assert_close(scored_columns(scored, ["rouge_l"]), single_process_columns("rouge", rows), 1e-9)
    assert marker.exists()


@pytest.mark.slow
def test_inputs_from_parquet_and_datasets_and_checked_columns(ray_session, sample_rows, tmp_path):
    import datasets
    import pandas

    rows = sample_rows[:100]
    frame = pandas.DataFrame(rows)
    frame.to_parquet(tmp_path / "rows.parquet")
    expected = single_process_columns("rouge", rows)
    for data in (str(tmp_path / "rows.parquet"), datasets.Dataset.from_pandas(frame)):
        scored = score_dataset(data, "rouge", num_workers=1)
        assert_close(scored_columns(scored, ["rouge_l"]), expected, 1e-9)
        assert {"id", "system"} <= set(scored.columns())
    with pytest.raises(ValueError, match="needs the column"):
        score_dataset(frame.drop(columns=["references"]), "rouge")
    with pytest.raises(ValueError, match="already has the output"):
        score_dataset(frame.assign(rouge_l=0.0), "rouge")


@pytest.mark.slow
def test_pool_leaves_a_cpu_for_ray_data_tasks_and_workers_import_this_capeval(ray_session):
    assert (default_gpus(), default_workers(0)) == (0, 3)  # the session's 4 logical CPUs
    assert ray_session.get(ray_session.remote(lambda: capeval.__file__).remote()) == capeval.__file__


@pytest.mark.slow
def test_cli_ray_engine_prints_what_the_default_engine_prints(ray_session, capsys):
    assert main(["score", "--offline", "bleu,cider"]) == 0
    default = capsys.readouterr().out
    assert main(["score", "--engine", "ray", "--offline", "bleu,cider"]) == 0
    on_ray = capsys.readouterr().out
    # Corpus BLEU too (from the rows' summed n-gram counts), not only the per-caption columns.
    assert " corpus, 0." in next(line for line in default.splitlines() if line.startswith("- BLEU-4: "))
    assert on_ray == default
