"""Space app for ViLBERTScore: `python app.py` (the metric loads from this folder, so it works offline too)."""

import os
from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_image_demo
from capeval.integrations.gradio_app import options_from_environment

DESCRIPTION = (
    "ViLBERTScore (Lee et al., Eval4NLP 2020): BERTScore on ViLBERT's image-conditioned token states. Upload the "
    "image's ViLBERT region features (`.npz` with `features`, `bbox`, `image_width`, `image_height`) for faithful "
    "scores; an image alone needs a region-feature extractor installed on the Space."
)


def metric_options(environ=os.environ) -> dict:
    """Constructor options from CAPEVAL_VILBERT_CHECKPOINT (path or URL of the .bin) and CAPEVAL_VILBERT_TOKENIZER."""
    return options_from_environment({
        "CAPEVAL_VILBERT_CHECKPOINT": ("checkpoint", str),
        "CAPEVAL_VILBERT_TOKENIZER": ("tokenizer", str),
    }, environ)


def build_demo(metric=None):
    """The gr.Blocks app around ``metric`` (default: this folder's module with :func:`metric_options`); API name ``/score``."""
    if metric is None:
        metric = evaluate.load(str(Path(__file__).parent), **metric_options())
    return build_image_demo(metric, title="ViLBERTScore", description=DESCRIPTION, with_references=True)


if __name__ == "__main__":
    build_demo().launch()
