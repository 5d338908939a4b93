"""Installing capeval (or a copy of it, or a package beside it) into a fresh folder and running it from outside the
checkout, for the tests that check what an installed copy does."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: What a wheel of the checkout is built from (nothing else in it ships).
PACKAGED = ("pyproject.toml", "setup.py", "setup.cfg", "README.md", "shared", "metrics", "hub")


def copy_checkout(checkout: Path, copy: Path) -> Path:
    """The files of ``checkout`` that a wheel is built from, copied into ``copy`` (without build leftovers)."""
    for name in PACKAGED:
        if (checkout / name).is_dir():
            shutil.copytree(checkout / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        else:
            shutil.copy2(checkout / name, copy / name)
    return copy


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of the capeval checkout (or copy) at ``source``, built into ``out``."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)], check=True)
    (built,) = out.glob("capeval-*.whl")
    return built


def install(target: Path, *sources: Path | str, index: bool = True) -> Path:
    """``sources`` (wheels or project folders) installed into the fresh folder ``target``, their dependencies left to
    this environment; ``index=False`` for wheels, which need no build requirements."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", *([] if index else ["--no-index"]), "-q",
                    "--target", str(target), *map(str, sources)], check=True)
    return target


def run_outside(installed: Path, cwd: Path, *command: str, path: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    """Run ``command`` with ``path`` and then the installed copy first on the import path, offline and quiet, from
    ``cwd`` (a folder that is not the checkout); a failure shows its stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, [*path, installed])), "HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0, done.stderr[-3000:]
    return done
