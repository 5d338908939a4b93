"""A CIDEr-D of 0 for a paragraph-long caption is the length penalty, and capeval says so where it happens: in the
scores' note, capeval.evaluate's notes and the command line's summary line; never for captions of reference length."""

import json

import pytest

import capeval
from capeval.scoring.coco import CiderScorer, length_penalties, length_penalty_note

PARAGRAPH = " ".join(["a brown dog runs across the green grass of a park while a man watches it from a bench"] * 7)
REFERENCES = [["a dog runs on the grass", "a brown dog running in a park"], ["a man rides a bike", "a man on a bicycle"]]
NOTE = ("CIDEr-D: 1 of 2 captions differ in length from each of their references by 23 or more words: the length "
        "penalty exp(-δ²/2σ²), σ = 6, keeps their scores under 0.01 (see the card)")


def test_a_paragraph_scores_0_and_the_note_says_why():
    scores = CiderScorer().score([PARAGRAPH, "a man rides a bicycle"], REFERENCES)
    assert scores["cider"][0] == pytest.approx(0.0, abs=1e-12) and scores["cider"][1] > 1
    assert scores.note == NOTE
    assert CiderScorer().score(["a dog runs on grass", "a man rides a bicycle"], REFERENCES).note == ""
    # σ widens the penalty: at σ = 60 the paragraph scores and no note is given.
    wide = CiderScorer(sigma=60.0).score([PARAGRAPH, "a man rides a bicycle"], REFERENCES)
    assert wide["cider"][0] > 0.01 and wide.note == ""


def test_the_threshold_is_the_one_the_note_states():
    """22 bigrams apart: penalty exp(-484/72) > 0.001, no note; 23 apart: below it, the note."""
    near, far = length_penalties([" ".join(["dog"] * 23), " ".join(["dog"] * 24)], [["dog"], ["dog"]], 6.0)
    assert near > 1e-3 > far
    assert length_penalty_note([near], 6.0) == "" and length_penalty_note([far], 6.0).startswith("CIDEr-D: 1 of 1 captions")
    # The best reference counts (one of reference length: penalty 1); an empty caption has 0 bigrams, not -1.
    assert length_penalties([" ".join(["dog"] * 24)], [["dog", " ".join(["dog"] * 24)]], 6.0) == [1.0]
    assert length_penalties([""], [[" ".join(["dog"] * 23)]], 6.0) == [near]


def test_evaluate_and_the_command_line_carry_the_note(tmp_path, capsys):
    from capeval.cli import main

    result = capeval.evaluate([PARAGRAPH, "a man rides a bicycle"], REFERENCES, metrics=["cider", "bleu"])
    assert list(result.notes) == ["cider"] and result.notes["cider"].endswith(f"; {NOTE}")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"candidate": c, "references": r}) for c, r in zip([PARAGRAPH, "a man rides a bicycle"], REFERENCES)))
    assert main(["score", "--input", str(rows), "--metric", "cider"]) == 0
    summary = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("- cider:"))
    assert summary.endswith(f"; {NOTE}]")
