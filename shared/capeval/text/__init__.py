"""Text side: transformer encoders, tokenization helpers and stop-word lists."""
