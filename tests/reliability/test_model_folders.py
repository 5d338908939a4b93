"""A model folder whose config.json is not JSON: one clear ModelUnavailableError at construction or load, whichever
metric reads it (BERT-TBR checks its layer against the config eagerly; SMURF reads it when it loads), and the CLI
says it in one line."""

import os
import shutil
import subprocess

import pytest

from capeval.models import ModelUnavailableError
from capeval.scoring.bert_tbr import BertTbrScorer
from capeval.scoring.smurf import SmurfScorer

from fixtures import PYTHON


@pytest.fixture(params=["{not json", "[1, 2]"], ids=["not-json", "not-an-object"])
def broken_folder(tiny_bert_path, tmp_path, request):
    folder = shutil.copytree(tiny_bert_path, tmp_path / "broken-bert")
    (folder / "config.json").write_text(request.param)
    detail = ("is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
              if request.param.startswith("{") else "holds a list, not a JSON object")
    return str(folder), f"The checkpoint folder {str(folder)!r} has a config.json that {detail}."


def test_bert_tbr_and_smurf_give_the_same_error(broken_folder):
    folder, message = broken_folder
    with pytest.raises(ModelUnavailableError) as eager:
        BertTbrScorer(model_name=folder, layer=2, beta=0.4)
    with pytest.raises(ModelUnavailableError) as at_load:
        SmurfScorer(["mima"], mima_model=folder, device="cpu").score(["a dog runs"])
    assert str(eager.value) == str(at_load.value) == message


def test_the_cli_says_it_in_one_line(broken_folder):
    folder, message = broken_folder
    done = subprocess.run([PYTHON, "-m", "capeval.cli", "score", "--metric", f"bert_tbr:model_name={folder},layer=2,beta=0.4"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert (done.returncode, done.stderr) == (2, f"capeval score: {message}\n")
