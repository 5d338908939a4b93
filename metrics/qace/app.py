"""Space app for QACE: `python app.py` (capeval installed: the Space ships its wheel beside this file).

The paper's models (downloaded once): CAPEVAL_QACE_VARIANT ("ref" or "img"), CAPEVAL_QACE_QG_MODEL,
CAPEVAL_QACE_QA_MODEL and CAPEVAL_QACE_VISUAL_T5 choose others. The questions and answers show as a table.
"""

from capeval.integrations.gradio_app import build_metric_space
from capeval.integrations.gradio_app import options_from_environment

demo = build_metric_space("qace", options=options_from_environment({
    "CAPEVAL_QACE_VARIANT": ("variant", str),
    "CAPEVAL_QACE_QG_MODEL": ("qg_model", str),
    "CAPEVAL_QACE_QA_MODEL": ("qa_model", str),
    "CAPEVAL_QACE_VISUAL_T5": ("visual_t5", str),
}))

if __name__ == "__main__":
    demo.launch()
