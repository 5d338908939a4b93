"""EXPERT (the llava_v0 conversation, its digit search from the second generated id, its explanation turn) scores the
same with the shared prompt prefix as with whole prompts, at every batch size and order."""

import pytest

from capeval.scoring.expert import ExpertScorer

from fixtures.llava import assert_sharing_changes_no_score

pytestmark = [pytest.mark.models, pytest.mark.usefixtures("llava_answer_cache")]


@pytest.mark.slow
@pytest.mark.parametrize("explain", [False, True], ids=["rating", "explanation turn"])
def test_expert_scores_with_shared_prefixes_equal_whole_prompts(scripted_llava, judge_images, monkeypatch, explain):
    scorer = ExpertScorer(scripted_llava, adapter=None, explain=explain, device="cpu", cache=False)
    assert_sharing_changes_no_score(scorer, judge_images, monkeypatch)
