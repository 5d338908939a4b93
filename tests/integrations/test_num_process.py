"""evaluate's own distributed mode (``num_process=2``, two processes by ``process_id``) gives the
numbers of one process for every text module (UMIC: tests/integrations/test_distributed_images.py)."""

import shutil

import pytest

import capeval
from capeval.samples import sample_captions as load_sample

MODULES = [
    pytest.param("bleu", {}, id="bleu"),
    pytest.param("rouge", {}, id="rouge"),
    pytest.param("cider", {}, id="cider"),
    pytest.param("meteor", {}, id="meteor"),
    pytest.param("meteor", {"engine": "jar"}, id="meteor-jar",
                 marks=pytest.mark.skipif(shutil.which("java") is None, reason="METEOR's jar needs a Java runtime")),
    pytest.param("bert_tbr", {"model_name": "fixture:tiny_bert_path", "layer": 8, "beta": 0.4}, id="bert_tbr"),
    pytest.param("smurf", {"spurts_model": "fixture:tiny_roberta_path", "mima_model": "fixture:tiny_distilbert_path"}, id="smurf"),
]


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("name, options", MODULES)
def test_two_processes_give_the_single_process_result(two_process_compute, with_fixtures, name, options):
    options = with_fixtures(options)
    rows = load_sample()
    predictions, references = [row["candidate"] for row in rows], [row["references"] for row in rows]
    single = capeval.load(name, **options).compute(predictions=predictions, references=references)
    assert two_process_compute(name, options, predictions, references) == single
