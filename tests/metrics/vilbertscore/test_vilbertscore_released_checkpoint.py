"""The real multi-task checkpoint, when it is on this machine: set CAPEVAL_VILBERT_CHECKPOINT to a downloaded
multi_task_model.bin (https://dl.fbaipublicfiles.com/vilbert-multi-task/multi_task_model.bin, about 1 GB); the
bert-base-uncased tokenizer must be in the local HuggingFace cache."""

import os
from pathlib import Path

import pytest
import torch

from capeval.backbones.vilbert import read_vilbert_config
from capeval.models import ModelUnavailableError, load_hf_tokenizer
from capeval.scoring.vilbertscore import VilbertScoreScorer

from fixtures.vilbert import released_layout


@pytest.fixture(scope="module")
def released_checkpoint() -> str:
    path = os.environ.get("CAPEVAL_VILBERT_CHECKPOINT")
    if not path or not Path(path).is_file():
        pytest.skip("set CAPEVAL_VILBERT_CHECKPOINT to a downloaded multi_task_model.bin "
                    "(https://dl.fbaipublicfiles.com/vilbert-multi-task/multi_task_model.bin)")
    try:
        load_hf_tokenizer("bert-base-uncased", model_max_length=512)
    except ModelUnavailableError:
        pytest.skip("the bert-base-uncased tokenizer is not in the local HuggingFace cache")
    return path


def test_released_checkpoint_layout_and_scores(released_checkpoint, sample_vilbert_features):
    state = torch.load(released_checkpoint, map_location="cpu", weights_only=True)
    bert = {k.replace("gamma", "weight").replace("beta", "bias"): tuple(v.shape) for k, v in state.items() if k.startswith("bert.")}
    assert bert == released_layout(read_vilbert_config(), task_token=True)
    del state
    scorer = VilbertScoreScorer(released_checkpoint, device="cpu")
    references = [["two men riding horses in a dirt arena", "cowboys on horseback at a rodeo", "two riders chase a calf",
                   "men on horses in an arena", "a rodeo event with two horses"]] * 3
    scores = scorer.score(["two men riding horses in a dirt arena", "two cowboys on horses", "a plate of food on a table"], references,
                          region_features=[sample_vilbert_features] * 3)
    assert all(-1 <= v <= 1 for column in scores.values() for v in column)
    assert scores["f1"][0] > scores["f1"][1] > scores["f1"][2]
