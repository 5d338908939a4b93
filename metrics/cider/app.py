"""Space app for CIDEr-D: `python app.py` (the metric loads from this folder, so it works offline too)."""

from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo

metric = evaluate.load(str(Path(__file__).parent))
demo = build_text_demo(
    metric,
    title="CIDEr-D",
    description="CIDEr-D as the COCO caption toolkit computes it (pycocoevalcap parity), pure Python. IDF comes from the scored corpus, so a single caption scores 0 here: use the library for real evaluations.",
)

if __name__ == "__main__":
    demo.launch()
