"""evaluate's own module test (its ``tests/test_metric_common.py``, unchanged: ``evaluate_harness/README.md``) passes for
every module in ``metrics/``, run as evaluate's CI runs it."""

import os
import shutil
import subprocess
import sys

import pytest

from fixtures import METRICS

HARNESS = METRICS.parent / "tests" / "properties" / "evaluate_harness"
MODULES = sorted(p.name for p in METRICS.iterdir() if (p / f"{p.name}.py").exists())


def test_the_vendored_files_are_evaluates_unchanged():
    import hashlib

    digests = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()[:16] for path in (HARNESS / "tests").glob("*.py")}
    assert digests == {"__init__.py": "e3b0c44298fc1c14", "test_metric_common.py": "f9d762cf0febc9eb", "utils.py": "ac119b68ff99e6e9"}


@pytest.mark.slow
def test_evaluates_module_test_passes_for_every_module(tmp_path):
    pytest.importorskip("absl.testing.parameterized", reason="absl-py (the test extra) runs evaluate's test")
    shutil.copytree(HARNESS / "tests", tmp_path / "tests")
    # The module folders only: evaluate's test takes every folder under metrics/ for a module, and an import of
    # capeval.metric_modules (metrics/__init__.py) leaves a __pycache__ folder there.
    (tmp_path / "metrics").mkdir()
    for name in MODULES:
        (tmp_path / "metrics" / name).symlink_to(METRICS / name, target_is_directory=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not capeval's settings: evaluate's test as its CI runs it
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1", "CAPEVAL_PROGRESS": "0",
                   "HF_MODULES_CACHE": str(tmp_path / "modules"), "RUN_SLOW": "0"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "-k", "LocalModuleTest",
                           "tests/test_metric_common.py"], cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = {line.split("test_load_metric_")[1].split()[0] for line in done.stdout.splitlines()
              if line.startswith("PASSED") and "::test_load_metric_" in line}
    assert passed == set(MODULES), sorted(set(MODULES) ^ passed)
