"""A light install (torch absent) met on every surface: ``capeval.load``, ``capeval.evaluate`` and ``capeval score``
of each model metric give the same one line naming the extras and the pip command (``load`` used to let evaluate
import the module and fail with a bare "No module named 'torch'"). torch is hidden from a fresh interpreter by
refusing its import, which is cheaper than the virtual environment of tests/core/test_light_install.py."""

import json
import subprocess
import sys

import pytest

SURFACES = """
import contextlib, io, json, sys

class HideTorch:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, HideTorch())
import capeval
from capeval.cli import main
from capeval.registry import METRICS, declared_extras

def message(call):
    try:
        call()
    except ImportError as error:
        return str(error)
    return "ran"

def command(metric):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["score", "--metric", metric])
    return [code, out.getvalue(), err.getvalue()]

found = {}
for metric, entry in sorted(METRICS.items()):
    if "models" in declared_extras(*entry.scorer.split(":")):
        found[metric] = {"load": message(lambda: capeval.load(metric)),
                         "evaluate": message(lambda: capeval.evaluate(["a dog"], [["a dog runs"]], metrics=[metric])),
                         "command": command(metric)}
print(json.dumps(found))
"""


def test_every_model_metric_says_which_extra_to_install_on_every_surface():
    done = subprocess.run([sys.executable, "-c", SURFACES], capture_output=True, text=True, timeout=600,
                          env={"HF_HUB_OFFLINE": "1", "CAPEVAL_PROGRESS": "0", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert sorted(found) == ["bert_tbr", "bertscore", "capture", "clip_score", "expert", "fleur", "pac_score", "polos", "qace",
                             "smurf", "umic", "vilbertscore"]
    extras = {"bertscore": "models,bertscore", "capture": "models,capture", "clip_score": "models,clip",
              "pac_score": "models,clip", "qace": "models,qace"}
    for metric, surfaces in found.items():
        wanted = extras.get(metric, "models")
        line = (f"{metric} needs capeval's {' and '.join(wanted.split(','))} extra{'s' if ',' in wanted else ''} "
                f"(torch is not installed): pip install 'capeval[{wanted}]'")
        assert surfaces == {"load": line, "evaluate": line, "command": [2, "", f"capeval score: {line}\n"]}, metric
