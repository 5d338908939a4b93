"""Space app for SMURF: `python app.py` (the metric loads from this folder, so it works offline too)."""

import os
from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo
from capeval.integrations.gradio_app import options_from_environment

DESCRIPTION = (
    "SMURF (Feinglass & Yang, ACL 2021): SPARCS (semantic, against the references), SPURTS (style) and MIMA "
    "(grammar) from distilroberta-base / distilbert-base-uncased attention, fused in standardized units. "
    "Scores are per caption; see the card for the system-level report."
)


def metric_options(environ=os.environ) -> dict:
    """Constructor options from the environment: CAPEVAL_SMURF_SPURTS_MODEL, CAPEVAL_SMURF_MIMA_MODEL
    (checkpoints other than the paper's) and CAPEVAL_SMURF_COMPONENTS (e.g. "sparcs")."""
    return options_from_environment({
        "CAPEVAL_SMURF_SPURTS_MODEL": ("spurts_model", str),
        "CAPEVAL_SMURF_MIMA_MODEL": ("mima_model", str),
        "CAPEVAL_SMURF_COMPONENTS": ("components", lambda value: value.split(",")),
    }, environ)


def build_demo(metric=None):
    """The gr.Blocks app around ``metric`` (default: this folder's module with :func:`metric_options`)."""
    if metric is None:
        metric = evaluate.load(str(Path(__file__).parent), **metric_options())
    return build_text_demo(metric, title="SMURF", description=DESCRIPTION)


if __name__ == "__main__":
    build_demo().launch()
