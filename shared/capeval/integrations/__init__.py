"""Adapters around the metrics: the Gradio app builder shared by the Spaces."""
