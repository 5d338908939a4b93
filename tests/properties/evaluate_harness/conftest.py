"""evaluate's test files here run only through tests/properties/test_evaluate_harness.py, from a folder laid out as
evaluate's repository (they find the modules under ./metrics and import their helpers relatively)."""

collect_ignore = ["tests"]
