"""capeval.distributed from a fresh process (it starts or joins Ray itself), and with tasks and blocks
small enough that statistics and totals are merged across many of them and input order must be restored."""

import json
import os
import random
import subprocess

import pytest

from capeval import distributed
from capeval.samples import sample_captions as load_sample
from capeval.distributed import ERROR_COLUMN, make_scorer, merged_document_frequencies, score_dataset, score_on_ray, summarize

from fixtures import PYTHON

pytest.importorskip("ray", reason="the capeval[ray] extra is not installed")

ROWS = 2000


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    environment.update(HF_HUB_OFFLINE="1", CAPEVAL_PROGRESS="0", **(env or {}))
    return subprocess.run([PYTHON, "-m", "capeval.cli", *args], capture_output=True, text=True, env=environment, timeout=300)


@pytest.fixture(scope="module")
def tiny_input(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ray") / "captions.jsonl"
    rows = [{"candidate": "a dog runs on the grass", "references": ["a dog running on grass", "the dog runs"]},
            {"candidate": "a cat", "references": ["a cat sleeps on a sofa"]}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.mark.slow
def test_cli_ray_engine_starts_its_own_local_instance(tiny_input):
    """A fresh process with no Ray running: --engine ray starts one and prints what the default engine prints."""
    local = run_cli("score", "--metric", "bleu", "--input", tiny_input)
    on_ray = run_cli("score", "--engine", "ray", "--metric", "bleu", "--input", tiny_input)
    assert (on_ray.returncode, local.returncode) == (0, 0), on_ray.stderr[-2000:]
    assert on_ray.stdout == local.stdout
    assert "- bleu: mean 0.0001, corpus 0.0000 (Bleu_1 " in local.stdout  # BLEU-1..4 follow


@pytest.mark.slow
def test_cli_ray_engine_joins_the_given_address(ray_session, tiny_input):
    address = ray_session.get_runtime_context().gcs_address
    joined = run_cli("score", "--engine", "ray", "--ray-address", address, "--metric", "rouge", "--input", tiny_input)
    assert joined.returncode == 0, joined.stderr[-2000:]
    assert "- rouge: mean 0.5" in joined.stdout
    # The driver that joined ran its actors on this session's cluster, not on a new instance of its own.
    assert f"Connecting to existing Ray cluster at address: {address}" in joined.stderr


def test_an_empty_caption_set_is_refused_before_ray_starts():
    with pytest.raises(ValueError, match="^the caption set is empty: there are no rows to score$"):
        score_dataset([], "bleu")


@pytest.fixture(scope="module")
def many_rows() -> list[dict]:
    """2,000 rows of 4 systems over the bundled sample's 16 images."""
    rng = random.Random(1)
    images = load_sample()
    return [{"id": i, "system": f"S{i % 4}", "candidate": rng.choice([images[i % 16]["candidate"], *images[(i + 3) % 16]["references"]]),
             "references": rng.sample(images[i % 16]["references"], 3)} for i in range(ROWS)]


@pytest.fixture
def small_tasks(monkeypatch):
    """Statistics and totals counted 256 rows per task, actors fed 64 rows a call."""
    monkeypatch.setattr(distributed, "TASK_BATCH_ROWS", 256)
    monkeypatch.setattr(distributed, "CPU_BATCH_ROWS", 64)


#: Rows whose references are empty: they fail alone, in whatever block they land.
BAD_IDS = [7, 507, 1007, 1507]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [None, 3])
def test_statistics_and_totals_merge_over_many_tasks_in_any_shard_order(ray_session, many_rows, small_tasks, seed):
    rows = [dict(row, references=[]) if row["id"] in BAD_IDS else row for row in many_rows]
    good = [row for row in rows if row["id"] not in BAD_IDS]
    scorer = make_scorer("cider")
    predictions, references = [r["candidate"] for r in good], [r["references"] for r in good]
    dataset = ray_session.data.from_items(rows, override_num_blocks=16)
    if seed is not None:
        dataset = dataset.random_shuffle(seed=seed)
    merged = merged_document_frequencies(dataset, "cider", {}, num_workers=2)
    assert merged.documents == ROWS - len(BAD_IDS)
    assert merged == scorer.count_document_frequencies(predictions, references)
    scored = score_dataset(dataset, "cider", num_workers=2).materialize()
    expected = dict(zip((row["id"] for row in good), scorer.score(predictions, references)["cider"]))
    by_id = {row["id"]: (row["cider"], row[ERROR_COLUMN]) for row in scored.take_all()}
    assert sorted(i for i, (_, error) in by_id.items() if error) == BAD_IDS
    assert {i: value for i, (value, error) in by_id.items() if not error} == pytest.approx(expected, abs=1e-12)
    systems = summarize(scored, "cider", by="system")
    assert {name: (result["rows"], result["failed"]) for name, result in systems.items()} == {
        "S0": (500, 0), "S1": (500, 0), "S2": (500, 0), "S3": (500, 4)}
    for i in range(4):
        assert systems[f"S{i}"]["sums"]["cider"] == pytest.approx(sum(v for k, v in expected.items() if k % 4 == i), abs=1e-9)
    whole = summarize(scored, "cider")
    assert (whole["rows"], whole["failed"]) == (ROWS, len(BAD_IDS))
    assert whole["means"]["cider"] == pytest.approx(sum(expected.values()) / len(expected), abs=1e-12)


@pytest.mark.slow
def test_score_on_ray_restores_input_order_over_many_batches(ray_session, many_rows, small_tasks):
    """BLEU over 32 actor calls: per-row order and the corpus BLEU of the summed n-gram counts."""
    scorer = make_scorer("bleu")
    predictions, references = [r["candidate"] for r in many_rows], [r["references"] for r in many_rows]
    on_ray = score_on_ray(scorer, predictions, references)
    single = scorer.score(predictions, references)
    assert on_ray["bleu"] == pytest.approx(single["bleu"], abs=1e-12)
    assert on_ray.corpus["bleu"] == pytest.approx(single.corpus["bleu"], abs=1e-12)
    assert single.corpus["bleu"] != pytest.approx(sum(single["bleu"]) / ROWS, abs=1e-3)
