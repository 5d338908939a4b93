"""capeval inside lmms-eval: caption task configs whose scores come from capeval.

lmms-eval (``pip install lmms-eval``, 0.7.x) finds task configs in the folders given with ``--include_path``; this
package ships one (:func:`tasks_path`, printed by ``python -m capeval.integrations.lmms_eval --path``) with a
``capeval_<task>`` for each of lmms-eval's caption tasks::

    lmms-eval --include_path "$(python -m capeval.integrations.lmms_eval --path)" \\
        --tasks capeval_coco2017_cap_val --model ... --log_samples --output_path runs/

Each task has the documents, prompt and generation settings of lmms-eval's own task (the same dataset, split,
``doc_to_text``, ``doc_to_visual`` and ``generation_kwargs``; :mod:`tests.integrations.lmms_eval` checks them field
by field against the installed lmms-eval), so a model generates the same captions; the scores are capeval's, under
lmms-eval's metric names. The functions the configs name are in :mod:`capeval.integrations.lmms_eval.caption_tasks`
(which never imports lmms-eval).
"""

from __future__ import annotations

from pathlib import Path

#: The folder of task configs (shipped as package data).
TASKS_FOLDER = Path(__file__).resolve().parent / "task_configs"


def tasks_path() -> Path:
    """The folder to give lmms-eval's ``--include_path``: every ``capeval_*.yaml`` task config is in it."""
    return TASKS_FOLDER


def task_names() -> list[str]:
    """The tasks the folder defines (``capeval_coco2017_cap_val``, ...), from the configs' ``task:`` lines."""
    names = []
    for path in sorted(TASKS_FOLDER.glob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("task:"):
                names.append(line.split(":", 1)[1].strip().strip("\"'"))
    return names
