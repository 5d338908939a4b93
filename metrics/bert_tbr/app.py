"""Space app for BERT-TBR: `python app.py` (the metric loads from this folder, so it works offline too)."""

from pathlib import Path

import evaluate

from capeval.integrations.gradio_app import build_text_demo
from capeval.integrations.gradio_app import options_from_environment

# The paper's model by default; CAPEVAL_BERT_TBR_MODEL (plus _LAYER/_BETA) point at another checkpoint.
OPTIONS = {"model_name": "bert-base-uncased", **options_from_environment({
    "CAPEVAL_BERT_TBR_MODEL": ("model_name", str),
    "CAPEVAL_BERT_TBR_LAYER": ("layer", int),
    "CAPEVAL_BERT_TBR_BETA": ("beta", float),
})}

metric = evaluate.load(str(Path(__file__).parent), **OPTIONS)
demo = build_text_demo(
    metric,
    title="BERT-TBR",
    description="BERTScore recall over combined references with stop-word removal (Yi et al., ACL 2020). "
    "IDF comes from the evaluated set, so a single caption scores against a tiny corpus: use the library for real evaluations.",
)

if __name__ == "__main__":
    demo.launch()
