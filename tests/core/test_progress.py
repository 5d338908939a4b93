"""CAPEVAL_PROGRESS=0 hides every bar, transformers' "Loading weights" and datasets' included; bars name models
as hashcodes do."""

import capeval
import capeval.progress
from capeval.models import clear_cache, model_id

PAIRS = dict(predictions=["a dog runs on the grass", "two men ride horses", "a child eats cake"],
             references=[["a dog running on grass"], ["two people ride horses"], ["a kid eating a cake"]])


def score_with_tiny_bert(tiny_bert_path):
    clear_cache()  # the model loads again, so its loading bar could show
    return capeval.load("bert_tbr", model_name=tiny_bert_path, layer=2, beta=0.4).compute(**PAIRS, batch_size=1)


def test_progress_off_hides_every_bar(tiny_bert_path, capfd, monkeypatch):
    monkeypatch.setenv("CAPEVAL_PROGRESS", "0")
    monkeypatch.setattr(capeval.progress, "SHOW_AFTER_SECONDS", 0)
    capfd.readouterr()
    score_with_tiny_bert(tiny_bert_path)
    assert "it/s]" not in capfd.readouterr().err


def test_progress_on_shows_loading_and_scoring_bars_named_by_model_id(tiny_bert_path, capfd, monkeypatch):
    monkeypatch.setenv("CAPEVAL_PROGRESS", "1")
    monkeypatch.setattr(capeval.progress, "SHOW_AFTER_SECONDS", 0)
    capfd.readouterr()
    score_with_tiny_bert(tiny_bert_path)
    err = capfd.readouterr().err
    assert "Loading weights" in err
    assert f"encoding with {model_id(tiny_bert_path)}:" in err and model_id(tiny_bert_path).startswith("tiny-bert")
    assert "BERT-TBR:" in err
    assert tiny_bert_path not in err


def test_datasets_bars_follow_the_setting(capfd, monkeypatch, tmp_path):
    import datasets

    from capeval.benchmarks import load_benchmark

    for setting, shown in (("0", False), ("1", True)):
        monkeypatch.setenv("CAPEVAL_PROGRESS", setting)
        monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / setting))  # the split is generated anew
        capfd.readouterr()
        assert load_benchmark("pascal50s").num_rows == 4000
        assert ("Generating test split" in capfd.readouterr().err) is shown


def test_library_bars_come_back_after_nested_quiet_blocks(monkeypatch):
    import datasets
    from transformers.utils import logging

    monkeypatch.setenv("CAPEVAL_PROGRESS", "0")
    assert logging.is_progress_bar_enabled() and datasets.is_progress_bar_enabled()
    with capeval.progress.library_bars():
        with capeval.progress.library_bars():
            assert not logging.is_progress_bar_enabled() and not datasets.is_progress_bar_enabled()
        assert not logging.is_progress_bar_enabled()
    assert logging.is_progress_bar_enabled() and datasets.is_progress_bar_enabled()
