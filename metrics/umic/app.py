"""Space app for UMIC: `python app.py` (capeval installed: the Space ships its wheel beside this file).

The released umic.pt (downloaded once); CAPEVAL_UMIC_CHECKPOINT (path or URL), CAPEVAL_UMIC_TOKENIZER and
CAPEVAL_UMIC_FEATURE_CACHE choose others. The example image comes with its bottom-up-attention features.
"""

from capeval.integrations.gradio_app import build_metric_space
from capeval.integrations.gradio_app import options_from_environment

demo = build_metric_space("umic", options=options_from_environment({
    "CAPEVAL_UMIC_CHECKPOINT": ("checkpoint", str),
    "CAPEVAL_UMIC_TOKENIZER": ("tokenizer", str),
    "CAPEVAL_UMIC_FEATURE_CACHE": ("feature_cache_dir", str),
}))

if __name__ == "__main__":
    demo.launch()
