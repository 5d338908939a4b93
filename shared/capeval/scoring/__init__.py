"""Scoring math: pure functions over lists and tensors, plus the small stateful scorers that hold a model."""
