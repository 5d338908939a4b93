"""Suite Space: one caption, its references, and every capeval metric that runs without downloads, side by side.

Run from a capeval checkout: `python spaces/suite/app.py`. The metric modules load from the checkout's
metrics/ folder (`capeval.cli.metrics_dir()`), so it works offline.
"""

import evaluate
import gradio as gr

from capeval.cli import metrics_dir
from capeval.cli import offline_runs
from capeval.integrations.gradio_app import parse_references


def load_metrics():
    """(label, loaded module, result key, note) for every offline metric, loaded once."""
    folder = metrics_dir()
    return [(run.label, evaluate.load(str(folder / run.module), **run.options), run.key, run.note) for run in offline_runs()]


def make_handler(metrics):
    def score(caption: str, references_text: str) -> list[list]:
        references = parse_references(references_text)
        rows = []
        for label, metric, key, note in metrics:
            try:
                value = f"{metric.compute(predictions=[caption], references=[references])[key][0]:.4f}"
            except (ValueError, OSError, RuntimeError) as error:
                value = f"error: {error}"
            rows.append([label, value, note])
        return rows

    return score


def build_demo(metrics=None):
    handler = make_handler(load_metrics() if metrics is None else metrics)
    with gr.Blocks(title="capeval suite") as demo:
        gr.Markdown("# capeval: every offline caption metric at once\n\nCorpus-level metrics (CIDEr-D's IDF, "
                    "BERT-TBR's IDF) see a one-caption corpus here; use the library for real evaluations.")
        caption = gr.Textbox(label="Candidate caption", value="a dog runs across the grass")
        references = gr.Textbox(label="References (one per line)", lines=5, value="a brown dog running on grass\na dog plays outside")
        button = gr.Button("Score")
        table = gr.Dataframe(headers=["metric", "score", "note"], label="Scores")
        button.click(handler, inputs=[caption, references], outputs=table, api_name="score")
    return demo


if __name__ == "__main__":
    build_demo().launch()
