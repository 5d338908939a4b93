"""Image metrics from the command line: region features by each row's image file."""

import json

import numpy as np
import pytest

from fixtures.commands import ROWS, capeval, one_line, write


@pytest.mark.slow
def test_image_metrics_take_a_features_folder(tmp_path, tiny_umic):
    """UMIC from the command line: each row's image file, its features as <stem>.npz in --features."""
    from capeval.samples import sample_region_features

    features = tmp_path / "features"
    features.mkdir()
    (features / "dog.npz").write_bytes(sample_region_features().read_bytes())
    rows = write(tmp_path / "rows.jsonl", "\n".join(json.dumps({**ROWS[0], "candidate": c}) for c in ("a dog runs", "two men")))
    spec = "umic:" + ",".join(f"{k}={v}" for k, v in tiny_umic.items())
    target = tmp_path / "scores.json"
    code, out, err = capeval("score", "--input", rows, "--metric", spec, "--features", features, "--output", target)
    assert code == 0, err
    written = json.loads(target.read_text())["scores"]["umic"]
    from capeval.scoring.umic import UmicScorer

    expected = UmicScorer(**tiny_umic).score(["a dog runs", "two men"], region_features=[str(features / "dog.npz")] * 2)["umic"]
    np.testing.assert_allclose(written, expected, atol=1e-6)
    one_line(*capeval("score", "--input", rows, "--metric", spec, "--features", tmp_path / "none"), "no features in")
