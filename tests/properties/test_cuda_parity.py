"""Every model metric scores the same on CUDA as on CPU (tiny random models through capeval.evaluate; skipped
without a GPU: speed/gpu_suite.sh runs it on one)."""

import json
import os
import sys
from pathlib import Path

import pytest
import torch

from fixtures import REPO

sys.path.insert(0, str(REPO / "speed"))
import bench_karpathy  # noqa: E402

import capeval  # noqa: E402

MODEL_METRICS = [name for name in bench_karpathy.METRICS if name not in ("bleu", "rouge", "cider", "meteor")]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", MODEL_METRICS)
def test_cuda_scores_equal_cpu_scores(name, tmp_path):
    captions, references = bench_karpathy.karpathy_rows(12)
    spans = None
    if name.startswith("qace"):
        try:
            import spacy  # noqa: F401
        except ImportError:
            # A GPU machine without spaCy: the spans spaCy found for these captions (bench_karpathy.py --write-spans).
            if not os.environ.get("CAPEVAL_BENCH_SPANS"):
                pytest.skip("QACE's answer spans need spaCy, or CAPEVAL_BENCH_SPANS naming spans written beforehand")
            spans = json.loads(Path(os.environ["CAPEVAL_BENCH_SPANS"]).read_text())
    columns = {}
    for device in ("cpu", "cuda"):
        spec, inputs = bench_karpathy.build_runs(name, tmp_path / device, captions, references, bench_karpathy.QUICK, device, spans)
        columns[device] = capeval.evaluate(captions, metrics=[spec], show_progress=False, **inputs).columns
    assert columns["cpu"].keys() == columns["cuda"].keys()
    for column, values in columns["cpu"].items():
        assert values == pytest.approx(columns["cuda"][column], abs=2e-4), column
