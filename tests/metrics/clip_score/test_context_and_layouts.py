"""Without a model: the cut to the text context, the per-caption truncation counts and their one warning, LongCLIP's
two position tables, and reading a checkpoint that is a bare state dict or holds one under ``state_dict``."""

import warnings

import pytest
import torch

from capeval.backbones.clip import LONGCLIP_KEPT_POSITIONS, cut_to_context, openai_to_transformers, transformers_to_openai
from capeval.checkpoints import read_state_dict
from capeval.models import ModelUnavailableError
from capeval.scoring.clip import TextTruncationWarning, report_truncation

from fixtures.clip import random_openai_state


def test_cut_to_context_keeps_the_first_ids_and_ends_with_the_end_id():
    ids = list(range(1, 11))
    assert cut_to_context(ids, 10) == ids and cut_to_context(ids, 11) == ids
    assert cut_to_context(ids, 9) == [1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert cut_to_context(ids, 2) == [1, 10]
    assert isinstance(cut_to_context(tuple(ids), 20), list)


def test_truncation_counts_per_caption_and_one_warning_naming_each_text():
    references = [["a", "b"], [], ["c"]]
    with pytest.warns(TextTruncationWarning) as caught:
        counts, note = report_truncation([True, False, False], [True, True, False], references, context_length=77, metric="M")
    assert counts == [3, 0, 0] and len(caught) == 1
    assert note == ("M: 3 text(s) of 1 of 3 captions longer than the CLIP text encoder's 77-token context were cut to it, "
                    "as the released code cuts them (per caption: truncated_texts)")
    assert str(caught[0].message) == (
        "M: 3 text(s) longer than the CLIP text encoder's 77-token context were cut to it, as the released code cuts "
        "them ('truncated_texts' in the details counts them per caption; LongCLIP's 248 positions hold longer text): "
        "predictions[0], references[0][0], references[0][1]")
    with pytest.warns(TextTruncationWarning, match=r"M: 1 text\(s\) .* 248-token .*: references\[2\]\[0\]$"):
        assert report_truncation([False, False, False], [False, False, True], references, context_length=248, metric="M")[0] == [0, 0, 1]


def test_nothing_cut_gives_zeros_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert report_truncation([False, False], [], None, context_length=77, metric="M") == ([0, 0], "")
        assert report_truncation([False], [False, False], [["a", "b"]], context_length=77, metric="M") == ([0], "")
    with pytest.warns(TextTruncationWarning, match=r": predictions\[1\]$"):
        assert report_truncation([False, True], [], None, context_length=77, metric="M")[0] == [0, 1]
    with pytest.raises(ValueError):  # one flag per reference
        report_truncation([False], [False], [["a", "b"]], context_length=77, metric="M")


def test_longclip_position_tables_become_one():
    state = random_openai_state(30, width=8, vision_width=8, layers=1, embed=4, positions=248)
    residual = torch.randn(248, 8)
    mapped = openai_to_transformers({**state, "positional_embedding_res": residual, "context_length": torch.tensor(248)})
    table = mapped["text_model.embeddings.position_embedding.weight"]
    kept = LONGCLIP_KEPT_POSITIONS
    assert kept == 20 and table.shape == (248, 8)
    assert torch.equal(table[:kept], state["positional_embedding"][:kept]) and torch.equal(table[kept:], residual[kept:])
    assert not any("positional_embedding" in key or key == "context_length" for key in mapped)
    assert torch.equal(transformers_to_openai(mapped)["positional_embedding"], table)
    plain = openai_to_transformers(state)
    assert torch.equal(plain["text_model.embeddings.position_embedding.weight"], state["positional_embedding"])
    fused = state["transformer.resblocks.0.attn.in_proj_weight"]
    for i, name in enumerate(("q_proj", "k_proj", "v_proj")):
        assert torch.equal(plain[f"text_model.encoder.layers.0.self_attn.{name}.weight"], fused[8 * i: 8 * (i + 1)])


def test_checkpoints_bare_or_under_state_dict(tmp_path):
    state = {"a.weight": torch.ones(2), "b.gamma": torch.zeros(1)}
    torch.save(state, tmp_path / "bare.pt")
    torch.save({"state_dict": state, "epoch": 3}, tmp_path / "wrapped.pth")
    for name in ("bare.pt", "wrapped.pth"):
        read = read_state_dict(tmp_path / name, what="w", entry="state_dict", optional_entry=True)
        assert set(read) == {"a.weight", "b.weight"}
    with pytest.raises(ModelUnavailableError, match="holds no 'state_dict' entry"):
        read_state_dict(tmp_path / "bare.pt", what="w", entry="state_dict")
    torch.save([state], tmp_path / "listed.pt")
    with pytest.raises(ModelUnavailableError, match="holds no 'state_dict' entry"):
        read_state_dict(tmp_path / "listed.pt", what="w", entry="state_dict", optional_entry=True)
    assert set(read_state_dict(tmp_path / "wrapped.pth", what="w", entry="state_dict")) == {"a.weight", "b.weight"}


def test_the_prefix_gets_one_space_unless_empty():
    from capeval.scoring.clip import ClipScoreScorer

    assert [ClipScoreScorer(prefix=prefix).prefix for prefix in ("", "A photo depicts", "a photo of ")] == \
        ["", "A photo depicts ", "a photo of "]
