"""capeval's evaluate modules, one folder each; installed inside the package as ``capeval.metric_modules``.

Load one with ``evaluate.load("metrics/<name>")`` from a checkout, or ``capeval.load("<name>")`` anywhere.
"""
