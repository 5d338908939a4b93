"""Space app for SMURF: `python app.py` (capeval installed: the Space ships its wheel beside this file).

The paper's distilroberta-base / distilbert-base-uncased when they load, else SPARCS alone, labelled on the page;
CAPEVAL_SMURF_SPURTS_MODEL, CAPEVAL_SMURF_MIMA_MODEL and CAPEVAL_SMURF_COMPONENTS (e.g. "sparcs") choose others.
"""

from capeval.integrations.gradio_app import build_metric_space
from capeval.integrations.gradio_app import options_from_environment

demo = build_metric_space("smurf", options=options_from_environment({
    "CAPEVAL_SMURF_SPURTS_MODEL": ("spurts_model", str),
    "CAPEVAL_SMURF_MIMA_MODEL": ("mima_model", str),
    "CAPEVAL_SMURF_COMPONENTS": ("components", lambda value: value.split(",")),
}))

if __name__ == "__main__":
    demo.launch()
