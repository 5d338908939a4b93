"""Space app for METEOR: `python app.py` (the metric loads from this folder, so it works offline too)."""

from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo

metric = evaluate.load(str(Path(__file__).parent))
demo = build_text_demo(
    metric,
    title="METEOR",
    description="METEOR 1.5 through pycocoevalcap's Java jar (needs Java). The first call starts the JVM (about 10-30 s).",
)

if __name__ == "__main__":
    demo.launch()
