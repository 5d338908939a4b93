"""UMIC beyond one process with the tiny random UNITER: on Ray Data (capeval.distributed; region
features per row as an .npz path, an error for a row whose features are missing) and in evaluate's
``num_process=2`` mode, both with the numbers of single-process scoring."""

import random

import numpy as np
import pytest

import capeval
from capeval.distributed import ERROR_COLUMN, score_dataset, summarize

from fixtures.vision import CAPTION_WORDS

ROWS = 2000


@pytest.fixture(scope="module")
def feature_files(sample_features, tmp_path_factory) -> list[str]:
    """The sample's BUTD features cut to 10, 20 and 36 boxes, so batches pad to different region counts."""
    stored = np.load(sample_features)
    folder = tmp_path_factory.mktemp("umic-features")
    paths = []
    for boxes in (10, 20, 36):
        path = folder / f"sample-{boxes}.npz"
        np.savez(path, **{key: stored[key][:boxes] for key in ("features", "norm_bb", "conf")})
        paths.append(str(path))
    return paths


@pytest.mark.slow
def test_umic_on_ray_equals_single_process(ray_session, tiny_umic, feature_files, tmp_path):
    rng = random.Random(0)
    rows = [{"id": i, "candidate": " ".join(rng.choices(CAPTION_WORDS, k=rng.randint(1, 8))),
             "region_features": feature_files[i % len(feature_files)]} for i in range(ROWS)]
    bad = [{"id": ROWS, "candidate": "a horse", "region_features": None},
           {"id": ROWS + 1, "candidate": "a horse", "region_features": str(tmp_path / "missing.npz")}]
    data = ray_session.data.from_items(rows[:1000] + bad + rows[1000:], override_num_blocks=8)
    scored = score_dataset(data, "umic", num_workers=1, batch_rows=256, **tiny_umic).materialize()
    by_id = sorted(scored.take_all(), key=lambda row: row["id"])
    expected = capeval.load("umic", **tiny_umic).compute(predictions=[r["candidate"] for r in rows],
                                                         region_features=[r["region_features"] for r in rows])["scores"]
    assert [row[ERROR_COLUMN] for row in by_id[:ROWS]] == [None] * ROWS
    assert max(abs(row["umic"] - value) for row, value in zip(by_id, expected)) <= 1e-6
    assert "unsupported region-feature input of type NoneType" in by_id[ROWS][ERROR_COLUMN]
    assert "does not exist" in by_id[ROWS + 1][ERROR_COLUMN] and by_id[ROWS + 1]["umic"] is None
    summary = summarize(scored, "umic", **tiny_umic)
    assert (summary["rows"], summary["failed"]) == (ROWS + 2, 2)
    assert summary["means"]["umic"] == pytest.approx(sum(expected) / ROWS, abs=1e-6)


def test_umic_in_two_evaluate_processes_equals_one(two_process_compute, tiny_umic, feature_files):
    predictions = ["two men riding horses", "a horse in a field", "a calf", "the arena"] * 3
    regions = [feature_files[i % len(feature_files)] for i in range(len(predictions))]
    single = capeval.load("umic", **tiny_umic).compute(predictions=predictions, region_features=regions)
    assert two_process_compute("umic", tiny_umic, predictions, region_features=regions) == single
