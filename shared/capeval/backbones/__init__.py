"""Ports of the vision-language models transformers lacks (UNITER; ViLBERT and Visual-T5 reuse
:mod:`.common` and :mod:`capeval.vision`). Parameter names match the released checkpoints so
they load unchanged."""
