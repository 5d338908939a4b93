"""capeval.integrations.torchmetrics in one process, and a Metric logging from a Lightning validation_step (two gloo
processes: tests/reliability/test_torchmetrics_ranks.py)."""

import pytest

pytest.importorskip("torchmetrics")

import torch  # noqa: E402

import capeval  # noqa: E402
from capeval.integrations.torchmetrics import CaptionScoreMetric, metric_class  # noqa: E402
from capeval.samples import sample_captions  # noqa: E402

ROWS = sample_captions()
PREDICTIONS = [row["candidate"] for row in ROWS]
REFERENCES = [row["references"] for row in ROWS]


def test_one_process_equals_evaluate_and_all_columns():
    bleu = CaptionScoreMetric("bleu", column="all", order=3)
    for start in range(0, len(PREDICTIONS), 5):
        bleu.update(PREDICTIONS[start : start + 5], REFERENCES[start : start + 5])
    result = capeval.load("bleu", order=3).compute(predictions=PREDICTIONS, references=REFERENCES)
    assert {name: float(value) for name, value in bleu.compute().items()} == pytest.approx(
        {name: result[name] for name in ("bleu", "bleu_1", "bleu_2", "bleu_3", "bleu_4")}, abs=1e-12)
    bleu.reset()
    bleu.update(PREDICTIONS[:1], REFERENCES[:1])
    assert float(bleu.compute()["bleu_1"]) == pytest.approx(
        capeval.load("bleu").compute(predictions=PREDICTIONS[:1], references=REFERENCES[:1])["bleu_1"], abs=1e-12)


def test_column_option_picks_the_value():
    sparcs = CaptionScoreMetric("smurf", components=["sparcs"])
    standardized = CaptionScoreMetric("smurf", components=["sparcs"], column="sparcs_standardized")
    for metric in (sparcs, standardized):
        metric.update(PREDICTIONS, REFERENCES)
    result = capeval.load("smurf", components=["sparcs"]).compute(predictions=PREDICTIONS, references=REFERENCES)
    assert float(sparcs.compute()) == pytest.approx(result["sparcs"], abs=1e-12)
    assert float(standardized.compute()) == pytest.approx(result["means"]["sparcs_standardized"], abs=1e-12)


@pytest.mark.filterwarnings("ignore:The ``compute`` method")
def test_clear_errors():
    with pytest.raises(TypeError, match=r"cider: unknown option\(s\) \['max_order'\]"):
        CaptionScoreMetric("cider", max_order=2)
    with pytest.raises(ValueError, match="rouge has no column 'f1'"):
        CaptionScoreMetric("rouge", column="f1")
    with pytest.raises(ValueError, match="compute\\(\\) before any update"):
        CaptionScoreMetric("cider").compute()
    with pytest.raises(ValueError, match="references"):
        CaptionScoreMetric("bleu").update(["a dog"], None)


def test_one_class_per_registry_metric():
    classes = {name: metric_class(name) for name in capeval.METRICS}
    assert all(issubclass(cls, CaptionScoreMetric) for cls in classes.values()) and metric_class("cider") is classes["cider"]
    assert classes["vilbertscore"].__name__ == "VilbertscoreMetric"
    cider = classes["cider"](idf="flickr8k")
    cider.update(PREDICTIONS[:2], REFERENCES[:2])
    assert float(cider.compute()) == pytest.approx(capeval.load("cider", idf="flickr8k").compute(
        predictions=PREDICTIONS[:2], references=REFERENCES[:2])["cider"], abs=1e-12)


@pytest.mark.models
def test_lightning_validation_step_logs_the_corpus_values():
    lightning = pytest.importorskip("lightning")

    class Captioner(lightning.LightningModule):
        """Stands in for a captioning model: its 'generated' captions are the sample's candidates."""

        def __init__(self):
            super().__init__()
            self.cider = CaptionScoreMetric("cider")
            self.rouge = CaptionScoreMetric("rouge")

        def validation_step(self, batch, batch_index):
            predictions, references = [row[0] for row in batch], [row[1] for row in batch]
            self.cider.update(predictions, references)
            self.rouge.update(predictions, references)
            self.log("val_cider", self.cider, batch_size=len(batch))
            self.log("val_rouge_l", self.rouge, batch_size=len(batch))

    loader = torch.utils.data.DataLoader(list(zip(PREDICTIONS, REFERENCES)), batch_size=4, collate_fn=list)
    trainer = lightning.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                                enable_progress_bar=False, enable_model_summary=False)
    (logged,) = trainer.validate(Captioner(), dataloaders=loader, verbose=False)
    assert logged["val_cider"] == pytest.approx(capeval.load("cider").compute(
        predictions=PREDICTIONS, references=REFERENCES)["cider"], rel=1e-6)
    assert logged["val_rouge_l"] == pytest.approx(capeval.load("rouge").compute(
        predictions=PREDICTIONS, references=REFERENCES)["rouge_l"], rel=1e-6)
