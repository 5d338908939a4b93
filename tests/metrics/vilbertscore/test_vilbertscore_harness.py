"""The benchmark harness runs ViLBERTScore on Flickr8k-Expert and Composite when region features are given
(``--features DIR``: one ``<image stem>.npz`` per image); a tiny random ViLBERT stands in for the released one."""

import shutil

import numpy as np
import pytest

from capeval.benchmarks import prepare, run_benchmark
from capeval.cli import build_parser
from capeval.benchmarks.hub import feature_paths
from capeval.samples import sample_region_features


@pytest.fixture(scope="module")
def features_dir(tmp_path_factory):
    """The bundled sample's features under every Flickr8k image name of both benchmarks (content is irrelevant here)."""
    folder = tmp_path_factory.mktemp("features")
    for name in ("flickr8k_expert", "composite"):
        for image_file in set(prepare(name).items.image_files):
            target = folder / f"{image_file.rsplit('.', 1)[0]}.npz"
            if not target.exists():
                shutil.copyfile(sample_region_features(), target)
    return folder


def test_feature_files_are_found_by_image_stem(features_dir, tmp_path):
    files = prepare("composite").items.image_files[:3]
    assert [p.rsplit("/", 1)[-1] for p in feature_paths(files, features_dir)] == [f.rsplit(".", 1)[0] + ".npz" for f in files]
    with pytest.raises(FileNotFoundError, match="have no features"):
        feature_paths(files, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", ["flickr8k_expert", "composite"])
def test_harness_scores_vilbertscore_with_features(benchmark, features_dir, tiny_vilbert):
    scorer = tiny_vilbert()
    skipped = run_benchmark(scorer, benchmark, num_samples=0, verbose=False)
    assert "--features" in skipped.skipped
    result = run_benchmark(scorer, benchmark, features_dir=features_dir, num_samples=0, verbose=False)
    assert result.skipped is None and np.isfinite(result.scores).all()
    assert {row.statistic for row in result.rows} == {"tau-b", "tau-c"}
    assert "features=butd:precomputed" in result.hashcode


def test_cli_takes_a_features_folder():
    argv = ["benchmark", "--metric", "vilbertscore", "--dataset", "composite", "--features", "/f"]
    args = build_parser(argv).parse_args(argv)
    assert args.features == "/f"
