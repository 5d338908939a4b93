"""Space app for ViLBERTScore: `python app.py` (capeval installed: the Space ships its wheel beside this file).

The released multi-task ViLBERT (downloaded once); CAPEVAL_VILBERT_CHECKPOINT (path or URL of a vilbert-multi-task
.bin) and CAPEVAL_VILBERT_TOKENIZER choose others. The example image comes with its region features.
"""

from capeval.integrations.gradio_app import build_metric_space
from capeval.integrations.gradio_app import options_from_environment

demo = build_metric_space("vilbertscore", options=options_from_environment({
    "CAPEVAL_VILBERT_CHECKPOINT": ("checkpoint", str),
    "CAPEVAL_VILBERT_TOKENIZER": ("tokenizer", str),
}))

if __name__ == "__main__":
    demo.launch()
