"""Space app for BERT-TBR: `python app.py` (the metric loads from this folder, so it works offline too)."""

import os
from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo

# The paper's model by default; point CAPEVAL_BERT_TBR_MODEL (plus _LAYER/_BETA) at another checkpoint.
OPTIONS = {"model_name": os.environ.get("CAPEVAL_BERT_TBR_MODEL", "bert-base-uncased")}
if "CAPEVAL_BERT_TBR_LAYER" in os.environ:
    OPTIONS["layer"] = int(os.environ["CAPEVAL_BERT_TBR_LAYER"])
if "CAPEVAL_BERT_TBR_BETA" in os.environ:
    OPTIONS["beta"] = float(os.environ["CAPEVAL_BERT_TBR_BETA"])

metric = evaluate.load(str(Path(__file__).parent), **OPTIONS)
demo = build_text_demo(
    metric,
    title="BERT-TBR",
    description="BERTScore recall over combined references with stop-word removal (Yi et al., ACL 2020). "
    "IDF comes from the evaluated set, so a single caption scores against a tiny corpus: use the library for real evaluations.",
)

if __name__ == "__main__":
    demo.launch()
