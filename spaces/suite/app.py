"""Suite Space: one image, several candidates, references, and every capeval metric that runs here, side by side.

Run it with capeval installed: `python spaces/suite/app.py`. The metrics come from capeval's registry
(`capeval.registry.offline_runs()`), so it works offline; CIDEr-D and BERT-TBR take their IDF from the
Flickr8k references shipped with capeval.
"""

from capeval.integrations.gradio_app import build_suite_space

demo = build_suite_space()

if __name__ == "__main__":
    demo.launch()
