"""The image side shared by the vision-language metrics.

:mod:`.images` turns any image input into an RGB PIL image with clear errors,
:mod:`.regions` holds region features and the location encodings each backbone
wants, and :mod:`.extractors` computes region features from images (optional
backends) with an on-disk cache.
"""
