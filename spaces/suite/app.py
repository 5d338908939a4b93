"""Suite Space: one caption, its references, and every capeval metric that runs without downloads, side by side.

Run it with capeval installed: `python spaces/suite/app.py`. The metrics come from capeval's registry
(`capeval.registry.offline_runs()`), whose modules ship inside the package, so it works offline.
"""

import gradio as gr

from capeval.integrations.gradio_app import parse_references
from capeval.registry import load
from capeval.registry import offline_runs


def load_metrics():
    """(label, loaded module, result key, note) for every offline configuration available here, loaded once."""
    return [(run.label, load(run.metric, **options), run.key, run.note)
            for run in offline_runs() if (options := run.resolved_options()) is not None]


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
