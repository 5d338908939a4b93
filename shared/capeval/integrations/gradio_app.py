"""The Gradio app builders of the metric Spaces (evaluate's own widget is broken on gradio >= 4)."""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping


def parse_references(text: str) -> list[str]:
    """One reference per non-blank line.

    >>> parse_references("a dog runs\\n\\n  two dogs play \\n")
    ['a dog runs', 'two dogs play']
    """
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def options_from_environment(variables: Mapping[str, tuple[str, Callable[[str], Any]]], environ: Mapping[str, str] = os.environ) -> dict:
    """Metric constructor options from environment variables, so a Space can point at other checkpoints.

    ``variables`` maps a variable name to (option name, converter); unset or empty variables are skipped.

    >>> options_from_environment({"X_LAYER": ("layer", int), "X_MODEL": ("model_name", str)}, {"X_LAYER": "6"})
    {'layer': 6}
    """
    return {option: convert(environ[name]) for name, (option, convert) in variables.items() if environ.get(name)}


def make_text_handler(metric: Any) -> Callable[[str, str], dict]:
    """A handler scoring one caption against newline-separated references with ``metric``.

    Errors (bad input, a checkpoint that cannot be loaded) come back as ``{"error": message}``
    so the Space shows them instead of crashing.
    """

    def score(caption: str, references_text: str) -> dict:
        references = parse_references(references_text)
        try:
            result = metric.compute(predictions=[caption], references=[references])
        except (ValueError, OSError, TypeError) as error:
            return {"error": str(error)}
        return {key: (value[0] if isinstance(value, list) and len(value) == 1 else value) for key, value in result.items()}

    return score


def build_text_demo(metric: Any, *, title: str, description: str):
    """A ``gr.Blocks`` app: caption + references in, the metric's result as JSON out (API name ``/score``)."""
    import gradio as gr

    handler = make_text_handler(metric)
    with gr.Blocks(title=title) as demo:
        gr.Markdown(f"# {title}\n\n{description}")
        caption = gr.Textbox(label="Candidate caption", value="a dog runs across the grass")
        references = gr.Textbox(label="References (one per line)", lines=5, value="a brown dog running on grass\na dog plays outside")
        button = gr.Button("Score")
        output = gr.JSON(label="Result")
        button.click(handler, inputs=[caption, references], outputs=output, api_name="score")
    return demo


def make_image_handler(metric: Any, *, with_references: bool = False) -> Callable[..., dict]:
    """A handler scoring one caption against an image (a file path) or its region-features file, and
    newline-separated references when the metric takes them; errors come back as ``{"error": message}``."""

    def score(image, caption: str, features_file=None, references_text: str = "") -> dict:
        if features_file:
            inputs = {"region_features": [features_file]}
        elif image is not None:
            inputs = {"images": [image]}
        else:
            return {"error": "upload an image or its region features (.npz)"}
        if with_references:
            inputs["references"] = [parse_references(references_text)]
        try:
            result = metric.compute(predictions=[caption], **inputs)
        except (ValueError, OSError, TypeError) as error:
            return {"error": str(error)}
        return {key: (value[0] if isinstance(value, list) and len(value) == 1 else value) for key, value in result.items()}

    return score


def build_image_demo(metric: Any, *, title: str, description: str, with_references: bool = False,
                     caption: str = "two men riding horses in a dirt arena"):
    """A ``gr.Blocks`` app: image or region features, caption (and references) in, JSON out (API ``/score``)."""
    import gradio as gr

    handler = make_image_handler(metric, with_references=with_references)
    with gr.Blocks(title=title) as demo:
        gr.Markdown(f"# {title}\n\n{description}")
        with gr.Row():
            image = gr.Image(type="filepath", label="Image")
            with gr.Column():
                text = gr.Textbox(label="Candidate caption", value=caption)
                features = gr.File(label="Region features (.npz, optional)", file_types=[".npz"], type="filepath")
                inputs = [image, text, features]
                if with_references:
                    inputs.append(gr.Textbox(label="References (one per line)", lines=5,
                                             value="two people ride horses\nriders on brown horses in a ring"))
                button = gr.Button("Score")
        output = gr.JSON(label="Result")
        button.click(handler, inputs=inputs, outputs=output, api_name="score")
    return demo
