"""Space app for ROUGE-L: `python app.py` (the metric loads from this folder, so it works offline too)."""

from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo

metric = evaluate.load(str(Path(__file__).parent))
demo = build_text_demo(
    metric,
    title="ROUGE-L",
    description="ROUGE-L as the COCO caption toolkit computes it (pycocoevalcap parity), pure Python.",
)

if __name__ == "__main__":
    demo.launch()
