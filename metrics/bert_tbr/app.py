"""Space app for BERT-TBR: `python app.py` (capeval installed: the Space ships its wheel beside this file).

The paper's bert-base-uncased (layer 8, β = 0.4) when it loads, else all-MiniLM-L6-v2, labelled on the page;
CAPEVAL_BERT_TBR_MODEL (plus _LAYER/_BETA) point at another checkpoint. IDF comes from the Flickr8k references
shipped with capeval, so a single caption gets meaningful weights.
"""

from capeval.integrations.gradio_app import build_metric_space
from capeval.integrations.gradio_app import options_from_environment

demo = build_metric_space("bert_tbr", options=options_from_environment({
    "CAPEVAL_BERT_TBR_MODEL": ("model_name", str),
    "CAPEVAL_BERT_TBR_LAYER": ("layer", int),
    "CAPEVAL_BERT_TBR_BETA": ("beta", float),
}))

if __name__ == "__main__":
    demo.launch()
