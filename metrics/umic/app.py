"""Space app for UMIC: `python app.py` (the metric loads from this folder, so it works offline too)."""

import os
from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_image_demo
from capeval.integrations.gradio_app import make_image_handler
from capeval.integrations.gradio_app import options_from_environment

DESCRIPTION = (
    "UMIC (Lee et al., ACL 2021): a reference-free caption score in (0, 1) from a contrastively fine-tuned UNITER. "
    "Upload the image's bottom-up-attention features (a BUTD `.npz` with `features`, `norm_bb`, `conf`, as in the "
    "released img_dbs) for faithful scores; an image alone needs a region-feature extractor installed on the Space."
)


def metric_options(environ=os.environ) -> dict:
    """Constructor options from the environment: CAPEVAL_UMIC_CHECKPOINT (path or URL of umic.pt),
    CAPEVAL_UMIC_TOKENIZER and CAPEVAL_UMIC_FEATURE_CACHE."""
    return options_from_environment({
        "CAPEVAL_UMIC_CHECKPOINT": ("checkpoint", str),
        "CAPEVAL_UMIC_TOKENIZER": ("tokenizer", str),
        "CAPEVAL_UMIC_FEATURE_CACHE": ("feature_cache_dir", str),
    }, environ)


def make_handler(metric):
    """Score one caption against an image (a file path) or its features file; errors come back as ``{"error": ...}``."""
    return make_image_handler(metric)


def build_demo(metric=None):
    """The gr.Blocks app around ``metric`` (default: this folder's module with :func:`metric_options`); API name ``/score``."""
    if metric is None:
        metric = evaluate.load(str(Path(__file__).parent), **metric_options())
    return build_image_demo(metric, title="UMIC", description=DESCRIPTION)


if __name__ == "__main__":
    build_demo().launch()
