"""The leaderboard Space starts on any results file: one that is not JSON, holds no runs or only skipped runs
gives an empty board with a note saying why, not a JSONDecodeError or KeyError."""

import json

import pytest

from capeval.integrations.leaderboard import COLUMNS, board_note, build_leaderboard_space, results_table

gr = pytest.importorskip("gradio")

SKIPPED = [{"metric": "umic", "benchmark": "flickr8k_expert", "title": "Flickr8k-Expert", "rows": [],
            "skipped": "umic needs images; the benchmark has none here"}]


@pytest.mark.parametrize("content, note", [
    ("<html>not found</html>", "**No results to show**: {path} is not JSON (Expecting value: line 1 column 1 (char 0)): "
                               "expected a results.json written by capeval benchmark --out."),
    ("[]", "**No results to show**: results.json holds no runs."),
    (json.dumps(SKIPPED), "**No results to show**: results.json holds only skipped runs."),
    ('{"metric": "cider"}', "**No results to show**: {path} is not a results.json written by capeval benchmark --out."),
], ids=["not-json", "empty", "only-skipped", "not-a-list"])
def test_a_board_without_results_starts_empty_and_says_why(tmp_path, content, note):
    path = tmp_path / "results.json"
    path.write_text(content)
    demo = build_leaderboard_space(path)
    notes = [block.value for block in demo.blocks.values() if isinstance(block, gr.Markdown)]
    assert note.format(path=path) in notes
    tables = [block.value for block in demo.blocks.values() if isinstance(block, gr.Dataframe)]
    assert [(table["headers"], table["data"]) for table in tables] == [(["metric"], []), (COLUMNS, []), (["metric", "x", "y"], [])]


def test_a_missing_file_is_a_note_too(tmp_path):
    assert board_note(tmp_path / "results.json") == ([], f"**No results to show**: {tmp_path / 'results.json'} cannot be read "
                                                         "(No such file or directory).")
    assert list(results_table([]).columns) == COLUMNS


def test_the_empty_board_answers_its_api(tmp_path, serve):
    path = tmp_path / "results.json"
    path.write_text("[]")
    client = serve(build_leaderboard_space(path))
    wide, long, message = client.predict([], [], "cider", api_name="/filter")
    assert wide["data"] == long["data"] == [] and "No result matches these filters" in message
    points, _ = client.predict(None, None, [], [], "", api_name="/scatter")
    assert points["data"] == []
