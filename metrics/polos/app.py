"""Space app for Polos: `python app.py` (capeval installed: the Space ships its wheel beside this file)."""

from capeval.integrations.gradio_app import build_metric_space

demo = build_metric_space("polos")

if __name__ == "__main__":
    demo.launch()
