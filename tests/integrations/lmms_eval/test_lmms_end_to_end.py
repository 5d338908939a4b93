"""An lmms-eval run, offline, from its command line to capeval's aggregation: lmms-eval's ``dummy`` model (it answers
every document with the caption it is given) over a local dataset folder (a parquet file with images, written here),
through a task config that includes ``capeval_coco2017_cap_val`` and points it at that folder. The run's results and
logged samples are checked against :func:`capeval.evaluate` on the same captions."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capeval.integrations.lmms_eval import tasks_path

from fixtures.lmms_eval import read_logged_samples, require_lmms_eval

pytestmark = pytest.mark.slow
CAPTION = "a dog on a couch"
REFERENCES = [["a dog on a couch", "a brown dog lying on a sofa"], ["a man rides a horse", "a person on a horse"],
              ["two cats sleep", "cats sleeping on a bed"]]


def local_dataset(folder: Path) -> Path:
    import datasets
    from PIL import Image

    rows = {"question_id": [f"COCO_val2014_{i:012d}.jpg" for i in (42, 73, 74)], "id": [1, 2, 3], "answer": REFERENCES,
            "image": [Image.new("RGB", (32, 32), color) for color in ("red", "green", "blue")]}
    path = folder / "val.parquet"
    datasets.Dataset.from_dict(rows).cast_column("image", datasets.Image()).to_parquet(str(path))
    return path


def test_an_offline_lmms_eval_run_reaches_capevals_aggregation(tmp_path):
    require_lmms_eval()
    executable = shutil.which("lmms-eval", path=str(Path(sys.executable).parent)) or shutil.which("lmms-eval")
    if executable is None:
        pytest.skip("lmms-eval's command is not on PATH")
    data = local_dataset(tmp_path)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "local_coco.yaml").write_text(
        f"include: {tasks_path() / 'capeval_coco2017_cap_val.yaml'}\ntask: capeval_local_coco\ndataset_path: parquet\n"
        f"dataset_kwargs:\n  data_files:\n    val: {data}\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    run = subprocess.run([executable, "--model", "dummy", "--model_args", f"response={CAPTION}", "--include_path", str(tasks),
                          "--tasks", "capeval_local_coco", "--log_samples", "--output_path", str(tmp_path / "out"),
                          "--verbosity", "WARNING"], capture_output=True, text=True, env=env, timeout=540, cwd=tmp_path)
    results = sorted((tmp_path / "out").rglob("*_results.json"))
    assert results, f"lmms-eval wrote no results (exit {run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    values = json.loads(results[-1].read_text())["results"]["capeval_local_coco"]

    import capeval

    expected = capeval.evaluate([CAPTION] * 3, REFERENCES, metrics=["bleu", "meteor", "rouge", "cider"]).corpus
    for name, key in (("Bleu_4", "bleu_4"), ("Bleu_1", "bleu_1"), ("METEOR", "meteor"), ("ROUGE_L", "rouge_l"), ("CIDEr", "cider")):
        assert values[f"coco_{name},none"] == pytest.approx(expected[key], rel=1e-12)
    samples = read_logged_samples(next((tmp_path / "out").rglob("*_samples_capeval_local_coco.jsonl")))
    assert [s["filtered_resps"] for s in samples] == [CAPTION] * 3
    assert [s["coco_CIDEr"]["answer"] for s in sorted(samples, key=lambda s: s["doc_id"])] == REFERENCES
