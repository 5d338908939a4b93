"""The LLaVA judges' speed benchmarks (speed/benchmarks/judges.py): `fleur` on the CPU, `fleur_gpu` at LLaVA-1.5-13B's
sizes for a GPU, listed and recorded as skipped, with why, where there is none."""

import json
import subprocess
import sys

import pytest

from fixtures import REPO

sys.path.insert(0, str(REPO / "speed"))
from benchmarks import BENCHMARKS  # noqa: E402
from benchmarks.judges import LLAVA_15_13B  # noqa: E402

RUN = [sys.executable, str(REPO / "speed" / "run.py")]


def test_fleur_is_declared_for_the_cpu_and_fleur_gpu_at_llava_15_13b_sizes_for_cuda():
    listed = subprocess.run([*RUN, "--list"], capture_output=True, text=True, check=True).stdout
    assert {"fleur", "fleur_gpu"} <= {line.split()[0] for line in listed.splitlines()}
    assert (BENCHMARKS["fleur"].device, BENCHMARKS["fleur_gpu"].device) == ("cpu", "cuda")
    text, vision = LLAVA_15_13B
    assert (text["hidden_size"], text["num_hidden_layers"], text["intermediate_size"], text["vocab_size"]) == (5120, 40, 13824, 32064)
    assert (vision["hidden_size"], vision["num_hidden_layers"], vision["image_size"] // vision["patch_size"]) == (1024, 24, 24)


def test_fleur_gpu_is_skipped_without_cuda_and_says_so(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the benchmark would run")
    output = tmp_path / "judges.json"
    subprocess.run([*RUN, "fleur_gpu", "--output", str(output)], capture_output=True, text=True, check=True)
    assert "needs a CUDA GPU" in json.loads(output.read_text())["benchmarks"]["fleur_gpu"]["skipped"]
