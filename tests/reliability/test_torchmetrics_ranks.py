"""torchmetrics over two gloo processes: a process that never calls ``update()`` still computes, for every sync rule
(inputs gathered for a corpus IDF, sufficient statistics for BLEU and METEOR, column sums for the rest), and a shard
per process gives the single-process values; bad arguments fail when the metric is built."""

import json
import shutil
import socket

import pytest

pytest.importorskip("torchmetrics")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import capeval  # noqa: E402
from capeval.integrations.torchmetrics import CaptionScoreMetric  # noqa: E402
from capeval.samples import sample_captions  # noqa: E402
from capeval.scoring.protocol import CaptionScorer, Scores  # noqa: E402
from tiny_models import save_tiny_bert  # noqa: E402

ROWS = sample_captions()
PREDICTIONS = [row["candidate"] for row in ROWS]
REFERENCES = [row["references"] for row in ROWS]


def metric_options(tiny_bert):
    """One metric per sync rule, and the rules beside one another (METEOR where Java is)."""
    options = {"bleu": ("bleu", {"order": 2}), "cider": ("cider", {}), "cider_flickr8k": ("cider", {"idf": "flickr8k"}),
               "rouge": ("rouge", {}), "bert_tbr": ("bert_tbr", {"model_name": tiny_bert, "layer": 1, "beta": 0.4}),
               "bertscore": ("bertscore", {"model_name": tiny_bert, "layer": 1})}
    if shutil.which("java"):
        options["meteor"] = ("meteor", {})
    return options


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_rank(rank, world_size, port, options, out_folder):
    """First rank 0 adds every caption and rank 1 none; then, after a reset, each rank adds every other caption."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    try:
        metrics = {key: CaptionScoreMetric(name, column="all", **kwargs) for key, (name, kwargs) in options.items()}
        values = {}
        for phase, rows in (("empty_rank", range(len(PREDICTIONS)) if rank == 0 else []),
                            ("sharded", range(rank, len(PREDICTIONS), world_size))):
            rows = list(rows)
            for metric in metrics.values():
                metric.reset()
                for start in range(0, len(rows), 5):
                    batch = rows[start : start + 5]
                    metric.update([PREDICTIONS[i] for i in batch], [REFERENCES[i] for i in batch])
            values[phase] = {key: {name: float(v) for name, v in metric.compute().items()} for key, metric in metrics.items()}
        (out_folder / f"rank{rank}.json").write_text(json.dumps(values))
        # Both ranks are done with their collectives before either tears gloo down: a rank that closed its pairs while
        # the other still used them made that process abort ("terminate called without an active exception").
        dist.barrier()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_a_rank_without_captions_and_sharded_ranks_give_the_single_process_values(tmp_path_factory, tmp_path):
    tiny_bert = str(save_tiny_bert(tmp_path_factory.mktemp("bert"), num_layers=2))
    options = metric_options(tiny_bert)
    mp.spawn(run_rank, args=(2, free_port(), options, tmp_path), nprocs=2, join=True)
    assert {CaptionScoreMetric(name, **kwargs).rule for name, kwargs in options.values()} == {"inputs", "statistics", "means"}
    expected = {}
    for key, (name, kwargs) in options.items():
        scores = capeval.registry.build_scorer(name, kwargs).score(PREDICTIONS, REFERENCES)
        expected[key] = scores.corpus
    for rank in (0, 1):
        got = json.loads((tmp_path / f"rank{rank}.json").read_text())
        for phase in ("empty_rank", "sharded"):
            assert set(got[phase]) == set(expected)
            for key, values in expected.items():
                # float32 encoders batch the captions otherwise: 1e-6 (the text metrics agree to 1e-12)
                assert got[phase][key] == pytest.approx(values, rel=1e-6 if key.startswith("bert") else 1e-12, abs=1e-12), (rank, phase, key)


def test_text_is_kept_only_where_the_idf_comes_from_the_whole_corpus():
    kept = {name: "input_bytes" in CaptionScoreMetric(name, **options)._defaults
            for name, options in [("cider", {}), ("bleu", {}), ("rouge", {}), ("smurf", {"components": ["sparcs"]})]}
    assert kept == {"cider": True, "bleu": False, "rouge": False, "smurf": False}
    assert "input_bytes" not in CaptionScoreMetric("cider", idf="flickr8k")._defaults


def test_bleu_keeps_one_row_of_summed_counts_per_update():
    bleu = CaptionScoreMetric("bleu", column="bleu_4")
    for start in range(0, len(PREDICTIONS), 4):
        bleu.update(PREDICTIONS[start : start + 4], REFERENCES[start : start + 4])
    assert int(bleu.statistic_rows) == 4 and len(bleu.statistics) == 5  # the empty seed, then one row per update
    expected = capeval.load("bleu").compute(predictions=PREDICTIONS, references=REFERENCES)["bleu_4"]
    assert float(bleu.compute()) == pytest.approx(expected, abs=1e-12)
    bleu.reset()
    assert int(bleu.statistic_rows) == 0 and [t.numel() for t in bleu.statistics] == [0]


@pytest.mark.parametrize("metric, options, message", [
    ("cider", {"column": "nope"}, "cider has no column 'nope'; choose one of \\['cider'\\] or 'all'"),
    ("bleu", {"column": "bleu_5"}, "bleu has no column 'bleu_5'; choose one of \\['bleu', 'bleu_1', 'bleu_2', 'bleu_3', 'bleu_4'\\]"),
    ("bleu", {"batch_size": -1}, "batch_size must be an integer >= 1"),
    ("rouge", {"batch_size": 0}, "batch_size must be an integer >= 1"),
])
def test_bad_arguments_fail_when_the_metric_is_built(metric, options, message):
    with pytest.raises(ValueError, match=message):
        CaptionScoreMetric(metric, **options)


def test_every_corpus_value_may_be_asked_for():
    bleu = CaptionScoreMetric("bleu", column="bleu_3")
    bleu.update(PREDICTIONS, REFERENCES)
    assert float(bleu.compute()) == pytest.approx(
        capeval.load("bleu").compute(predictions=PREDICTIONS, references=REFERENCES)["bleu_3"], abs=1e-12)


def test_defaults_are_the_metrics_score_without_progress_bars():
    for name, column in (("vilbertscore", "f1"), ("smurf", "smurf"), ("bleu", "bleu"), ("rouge", "rouge_l")):
        metric = CaptionScoreMetric(name)
        assert metric.column == column and metric.show_progress is False and metric.batch_size is None


class CorpusImages(CaptionScorer):
    """A corpus-level image metric (its inputs are gathered): the corpus value is the mean of every image of the
    corpus, each caption's the share of its image in their sum."""

    metric, title, name, primary = "corpus_images", "Corpus images", "corpus_images", "corpus_images"
    needs_references, needs_images, corpus_dependent = False, True, True

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None):
        return Scores({"corpus_images": [image / sum(images) for image in images]}, corpus={"corpus_images": sum(images) / len(images)})

    def options(self):
        return {}


def test_a_corpus_level_image_metric_gathers_the_images_of_every_update(monkeypatch):
    from capeval.integrations import torchmetrics

    monkeypatch.setattr(torchmetrics, "scorer_of", lambda metric, options: CorpusImages())
    metric = CaptionScoreMetric("corpus_images")
    metric.update(["a", "b"], images=[1.0, 2.0])
    metric.update(["c"], images=[6.0])
    assert metric.rule == "inputs" and float(metric.compute()) == 3.0
