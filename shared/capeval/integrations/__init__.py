"""Adapters around the metrics: Gradio apps, the Trainer ``compute_metrics`` hook."""
