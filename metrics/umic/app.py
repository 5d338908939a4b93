"""Space app for UMIC: `python app.py` (the metric loads from this folder, so it works offline too)."""

import os
from pathlib import Path

import evaluate

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

    def score(image, caption, features_file=None):
        if features_file:
            inputs = {"region_features": [features_file]}
        elif image is not None:
            inputs = {"images": [image]}
        else:
            return {"error": "upload an image or its region features (.npz)"}
        try:
            result = metric.compute(predictions=[caption], **inputs)
        except (ValueError, OSError, TypeError) as error:
            return {"error": str(error)}
        return {"umic": result["umic"], "hashcode": result["hashcode"]}

    return score


def build_demo(metric=None):
    """The gr.Blocks app around ``metric`` (default: this folder's module with :func:`metric_options`); API name ``/score``."""
    import gradio as gr

    if metric is None:
        metric = evaluate.load(str(Path(__file__).parent), **metric_options())
    handler = make_handler(metric)
    with gr.Blocks(title="UMIC") as demo:
        gr.Markdown(f"# UMIC\n\n{DESCRIPTION}")
        with gr.Row():
            image = gr.Image(type="filepath", label="Image")
            with gr.Column():
                caption = gr.Textbox(label="Candidate caption", value="two men riding horses in a dirt arena")
                features = gr.File(label="Region features (.npz, optional)", file_types=[".npz"], type="filepath")
                button = gr.Button("Score")
        output = gr.JSON(label="Result")
        button.click(handler, inputs=[image, caption, features], outputs=output, api_name="score")
    return demo


if __name__ == "__main__":
    build_demo().launch()
