"""The Gradio Spaces: one builder for every metric's Space and the suite, driven by the registry and the
scorers' metadata (evaluate's own widget is broken on gradio >= 4).

A metric's ``app.py`` is ``build_metric_space("bleu").launch()``: the builder asks the scorer whether it
needs images (an image upload with an optional region-features file, and the bundled sample image with its
precomputed features as an example) and references, shows one rounded row per candidate and one column per
output, a bar chart when there are several candidates, a table of per-caption details when the scorer
returns them (QACE's questions and answers), and the metric card. Errors are raised as ``gr.Error``, so the
page shows them and API clients get an exception.

Corpus-level metrics (CIDEr-D, BERT-TBR) take their IDF from the Flickr8k references shipped with capeval
(``idf="flickr8k"``) here, since a Space scores a handful of captions; where the paper's model cannot be
loaded (no network), the registry's offline stand-in is used and labelled.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..models import ModelUnavailableError
from ..declaration import OfflineRun, OptionSpec, declared_options
from ..registry import MetricEntry, entry, idf_note, module_path, offline_runs
from ..samples import SAMPLE_IMAGE_CANDIDATES, SAMPLE_IMAGE_REFERENCES, sample_captions, sample_image, sample_region_features
from ..scoring.protocol import CaptionScorer, Scores, build_checked, score_checked
from ..text.reference_corpus import REFERENCE_CORPORA
from ..vision.extractors import ExtractorUnavailableError

#: Decimal places shown in the Spaces' tables.
DIGITS = 4
#: The shipped reference corpus that corpus-level metrics take their IDF from in a Space.
SPACE_IDF = next(iter(REFERENCE_CORPORA))
NO_EXTRACTOR = ("This Space cannot compute region features from a new image (no object detector is installed here). "
                "Pick the example image, or upload the image's bottom-up-attention features (.npz) beside it.")


def parse_lines(text: str | None) -> list[str]:
    """One entry per non-blank line (candidates, references).

    >>> parse_lines("a dog runs\\n\\n  two dogs play \\n")
    ['a dog runs', 'two dogs play']
    """
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


#: How the environment spells true and false.
ENVIRONMENT_BOOLS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def environment_value(spec: OptionSpec, text: str, variable: str) -> Any:
    """The value of option ``spec`` that the environment variable ``variable`` spells as ``text``, read by the
    option's declared type (a path or a model id stays text: ``1e5`` is no number for a ``str`` option); a
    ``ValueError`` naming the variable when ``text`` is none of what the option takes.

    >>> specs = {spec.name: spec for spec in declared_options(entry("bertscore").scorer_class())}
    >>> environment_value(specs["layer"], "8", "X"), environment_value(specs["idf"], "true", "X"), environment_value(specs["baseline_path"], "1e5", "X")
    (8, True, '1e5')
    """
    if spec.choices is not None:
        for choice in spec.choices:
            if str(choice).lower() == text.strip().lower():
                return choice
        raise ValueError(f"{variable}={text!r}: {spec.name} takes one of {', '.join(map(str, spec.choices))}")
    for kind in spec.type.split(" | "):
        if kind in ("str", "os.PathLike", "torch.device"):
            return text
        if kind == "bool" and text.strip().lower() in ENVIRONMENT_BOOLS:
            return ENVIRONMENT_BOOLS[text.strip().lower()]
        if kind == "int" and re.fullmatch(r"\s*[+-]?\d+\s*", text):
            return int(text)
        if kind == "float":
            try:
                return float(text)
            except ValueError:
                continue
        if kind.startswith(("Sequence[str]", "list[str]")):
            try:
                items = json.loads(text) if text.lstrip().startswith("[") else [item.strip() for item in text.split(",")]
            except json.JSONDecodeError:
                continue
            if isinstance(items, list) and all(isinstance(item, str) for item in items):
                return items
    raise ValueError(f"{variable}={text!r}: {spec.name} takes {spec.type} (lists: comma-separated or a JSON list)")


def registry_entry(metric: str | MetricEntry) -> MetricEntry:
    """The registry entry of ``metric`` (a name), or ``metric`` itself when it is one already: the Space builder
    looks its metric up once and hands the entry on."""
    return metric if isinstance(metric, MetricEntry) else entry(metric)


def options_from_environment(metric: str | MetricEntry, environ: Mapping[str, str] = os.environ) -> dict:
    """Metric ``metric``'s constructor options from ``CAPEVAL_<NAME>_<OPTION>`` variables, so a Space can point at other
    checkpoints: values are read by each option's declared type (:func:`environment_value`), unset or empty variables
    are skipped, and one that names no option of the metric (a typo) is a ``ValueError`` when the Space starts.

    >>> options_from_environment("bert_tbr", {"CAPEVAL_BERT_TBR_LAYER": "6", "CAPEVAL_BERT_TBR_MODEL_NAME": "/models/1e5"})
    {'model_name': '/models/1e5', 'layer': 6}
    >>> options_from_environment("bert_tbr", {"CAPEVAL_BERT_TBR_LAYERS": "6"})
    Traceback (most recent call last):
    ValueError: CAPEVAL_BERT_TBR_LAYERS names no option of bert_tbr (did you mean CAPEVAL_BERT_TBR_LAYER?); ...
    """
    import difflib

    from ..registry import METRICS

    metric = registry_entry(metric)
    name = metric.name
    specs = declared_options(metric.scorer_class())
    variables = {f"CAPEVAL_{name.upper()}_{spec.name.upper()}": spec for spec in specs}
    prefix = f"CAPEVAL_{name.upper()}_"
    # A longer metric name sharing the prefix (say smurf and smurf_x) owns the variables that start with its own.
    others = [f"CAPEVAL_{other.upper()}_" for other in METRICS if other != name and f"CAPEVAL_{other.upper()}_".startswith(prefix)]
    for variable in sorted(environ):
        if (variable.startswith(prefix) and variable not in variables and environ[variable]
                and not any(variable.startswith(other) for other in others)):
            close = difflib.get_close_matches(variable, list(variables))
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"{variable} names no option of {name}{hint}; its variables: {', '.join(variables)}")
    return {spec.name: environment_value(spec, environ[variable], variable)
            for variable, spec in variables.items() if environ.get(variable)}


def metric_card(metric: str | MetricEntry) -> tuple[dict, str]:
    """Metric ``metric``'s card (its module's README.md): the Hub's YAML header and the markdown body.

    >>> header, body = metric_card("bleu")
    >>> header["title"], body.startswith("# ")
    ('BLEU', True)
    """
    import yaml

    metric = registry_entry(metric)
    text = Path(metric.folder or module_path(metric.name), "README.md").read_text(encoding="utf-8")
    match = re.match(r"\A---\n(.*?)\n---\n", text, flags=re.S)
    return (yaml.safe_load(match.group(1)), text[match.end():].strip()) if match else ({}, text.strip())


@dataclass
class SpaceMetric:
    """One scorer as a Space shows it: its label and what the visitor should know (stand-in models, IDF)."""

    label: str
    scorer: CaptionScorer
    note: str = ""


def space_scorer(metric: str | MetricEntry, options: Mapping[str, Any]) -> CaptionScorer:
    """Metric ``metric``'s scorer with ``options``, plus ``idf=SPACE_IDF`` when its ``idf`` option takes a shipped
    reference corpus (CIDEr-D, BERT-TBR) and none was given."""
    metric = registry_entry(metric)
    scorer_class = metric.scorer_class()
    options = dict(options)
    takes_corpus = any(spec.name == "idf" and SPACE_IDF in (spec.choices or ()) for spec in declared_options(scorer_class))
    if takes_corpus and "idf" not in options and "idf_sentences" not in options:
        options["idf"] = SPACE_IDF
    return build_checked(scorer_class, options, metric.name)


def offline_space_metric(run: OfflineRun, options: dict) -> SpaceMetric:
    """An offline configuration of the registry, labelled with its note and where its IDF comes from."""
    scorer = space_scorer(run.metric, options)
    return SpaceMetric(run.label, scorer, "; ".join(part for part in (run.note, idf_note(scorer)) if part))


def loads(scorer: CaptionScorer) -> bool:
    """Whether a text scorer's models are available here (scores one caption; loads them into the cache)."""
    try:
        scorer.score(["a dog"], [["a dog"]] if scorer.needs_references else None)
    except ModelUnavailableError:
        return False
    return True


def space_metric(metric: str | MetricEntry, options: Mapping[str, Any] | None = None) -> SpaceMetric:
    """Metric ``metric`` for its Space: with ``options`` when given (e.g. from the environment), else the paper's
    configuration when its models load here, else the registry's first offline stand-in, labelled."""
    metric = registry_entry(metric)
    scorer = space_scorer(metric, options or {})
    if options or metric.offline or metric.needs_images or loads(scorer):
        return SpaceMetric(metric.title, scorer, idf_note(scorer))
    for run in metric.offline_runs:
        resolved = run.resolved_options()
        if resolved is not None:
            stand_in = offline_space_metric(run, resolved)
            stand_in.note = f"Offline stand-in (the paper's model is not available here): {stand_in.note}"
            return stand_in
    return SpaceMetric(metric.title, scorer, idf_note(scorer))


def suite_metrics(extra: Sequence[SpaceMetric] = ()) -> list[SpaceMetric]:
    """Every offline configuration of every registered metric available here, then ``extra``."""
    return [offline_space_metric(run, options) for run in offline_runs()
            if (options := run.resolved_options()) is not None] + list(extra)


def image_inputs(image: str | None, features: str | None, count: int) -> dict:
    """``region_features`` (a features file wins) or ``images`` for ``count`` candidates of one image."""
    if features:
        return {"region_features": [features] * count}
    if image:
        return {"images": [image] * count}
    raise ValueError("Upload an image (or pick the example) to score captions against it.")


def score_captions(scorer: CaptionScorer, candidates: list[str], references: list[str], image: str | None = None,
                   features: str | None = None) -> Scores:
    """Score every candidate against one image and one reference set; ``ValueError`` with a visitor's message."""
    if not candidates:
        raise ValueError("Type at least one candidate caption (one per line).")
    if scorer.needs_references and not references:
        raise ValueError("Type at least one reference caption (one per line).")
    inputs = image_inputs(image, features, len(candidates)) if scorer.needs_images else {}
    try:
        return score_checked(scorer, candidates, [references] * len(candidates), **inputs, show_progress=False)
    except ExtractorUnavailableError as error:
        raise ValueError(NO_EXTRACTOR) from error
    except ModelUnavailableError as error:
        raise ValueError(f"The model of this metric is not available on this Space: {error}") from error
    except (TypeError, OSError, RuntimeError) as error:
        raise ValueError(str(error)) from error


def candidate_labels(candidates: Sequence[str]) -> list[str]:
    """Short distinct labels for charts: ``#1 a dog runs…``.

    >>> candidate_labels(["a dog runs across the grass in the park", "a cat"])
    ['#1 a dog runs across the gra…', '#2 a cat']
    """
    return [f"#{i + 1} {text if len(text) <= 26 else text[:25] + '…'}" for i, text in enumerate(candidates)]


def shown(value: float | None) -> str:
    """A score as the Spaces show it: fixed ``DIGITS`` decimals, so ``0`` and ``0.3433`` line up; blank for none.

    >>> shown(0.0), shown(0.343291), shown(5.30832), shown(None)
    ('0.0000', '0.3433', '5.3083', '')
    """
    return "" if value is None else f"{value:.{DIGITS}f}"


def scores_table(candidates: Sequence[str], columns: Mapping[str, Sequence[float]], corpus: Mapping[str, float] | None = None):
    """One row per candidate and one column per output, then (with ``corpus``) a ``corpus`` row holding the corpus
    values, with the corpus-only values (BLEU-1..4) as columns of their own."""
    import pandas as pd

    rows = [{"candidate": candidate, **{name: shown(values[i]) for name, values in columns.items()}}
            for i, candidate in enumerate(candidates)]
    if corpus is not None:
        rows.append({"candidate": "corpus", **{name: shown(value) for name, value in corpus.items()}})
    headers = ["candidate", *columns, *(name for name in corpus or {} if name not in columns)]
    return pd.DataFrame(rows, columns=headers).fillna("")


def metric_panels(labels: Sequence[str], by_metric: Mapping[str, Sequence[float]]):
    """One small bar panel per metric (each on its own scale: CIDEr-D's 0–10 does not flatten the others), the
    candidates side by side in each, one colour per candidate; a ``matplotlib`` figure for ``gr.Plot``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = max(len(by_metric), 1)
    columns = min(count, 4)
    rows = -(-count // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.6 * rows), squeeze=False)
    palette = plt.get_cmap("tab10")
    colours = [palette(i) for i in range(10)]
    for axis, (metric, values) in zip(axes.flat, by_metric.items()):
        axis.bar(range(len(values)), values, color=[colours[i % len(colours)] for i in range(len(values))])
        axis.set_title(metric, fontsize=9)
        axis.set_xticks(range(len(values)), [f"#{i + 1}" for i in range(len(values))], fontsize=8)
        axis.tick_params(axis="y", labelsize=8)
    for axis in list(axes.flat)[len(by_metric):]:
        axis.set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[i % len(colours)]) for i in range(len(labels))]
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0.08 + 0.04 * ((len(labels) - 1) // 3), 1, 1))
    plt.close(figure)
    return figure


def details_table(candidates: Sequence[str], scores: Scores, metric: str | None = None):
    """Per-caption details (e.g. QACE's questions) as long rows: candidate, [metric,] detail, then each
    item's fields (numbers rounded); an empty frame when the scorer returns none."""
    import pandas as pd

    rows = []
    for detail, per_caption in scores.details.items():
        for candidate, items in zip(candidates, per_caption):
            for item in items if isinstance(items, list) else [items]:
                fields = item if isinstance(item, Mapping) else {"value": item}
                rows.append({"candidate": candidate, **({"metric": metric} if metric else {}), "detail": detail,
                             **{k: round(v, DIGITS) if isinstance(v, float) else v for k, v in fields.items()}})
    return pd.DataFrame(rows)


def visitor_message(text: str) -> str:
    """An error as a visitor should read it: no server paths (a file's name at most), no environment variables.

    >>> visitor_message("no /root/.cache/capeval/umic.pt (from https://archive.org/x/umic.pt); set CAPEVAL_OFFLINE=0")
    "no umic.pt (from https://archive.org/x/umic.pt); set the server's settings"
    """
    text = re.sub(r"(?<![\w:/.])~?/(?:[^\s'\"/()]+/)*([^\s'\"/()]+)", r"\1", text)
    return re.sub(r"\b(?:CAPEVAL|HF|TRANSFORMERS|HF_HUB)_[A-Z_]+(?:=\S*)?", "the server's settings", text)


def _error(gr, error: ValueError):
    return gr.Error(visitor_message(str(error)), print_exception=False)


def image_widgets(gr):
    """An image upload and an optional region-features file."""
    image = gr.Image(type="filepath", label="Image")
    features = gr.File(label="Region features (.npz, optional: used instead of extracting them)", file_types=[".npz"], type="filepath")
    return image, features


def text_examples(with_references: bool) -> list[list[str]]:
    """Two bundled Flickr8k-Expert rows: one candidate, then two candidates, against their references."""
    rows = sample_captions()
    low, high = rows[0], rows[-1]
    pairs = [([high["candidate"]], high["references"]), ([high["candidate"], low["candidate"]], high["references"])]
    return [["\n".join(cands), *(["\n".join(refs)] if with_references else [])] for cands, refs in pairs]


def image_example(with_references: bool) -> list:
    """The bundled sample image, its BUTD features, two candidates (and references)."""
    return [str(sample_image()), str(sample_region_features()), "\n".join(SAMPLE_IMAGE_CANDIDATES),
            *(["\n".join(SAMPLE_IMAGE_REFERENCES)] if with_references else [])]


def metric_space(module_file: str, *, launch: bool = False):
    """The Space of the metric whose module folder holds ``module_file`` (an ``app.py``: the folder's name is the
    metric's), with options from ``CAPEVAL_<NAME>_<OPTION>`` variables (:func:`options_from_environment`: other
    checkpoints), launched when ``launch`` (``python app.py``). Every metric's ``app.py`` is these two lines::

        from capeval.integrations.gradio_app import metric_space
        demo = metric_space(__file__, launch=__name__ == "__main__")
    """
    metric = entry(Path(module_file).resolve().parent.name)
    demo = build_metric_space(metric, options=options_from_environment(metric) or None)
    if launch:
        demo.launch()
    return demo


def build_metric_space(name: str | MetricEntry, *, options: Mapping[str, Any] | None = None,
                       metric: SpaceMetric | None = None, description: str | None = None):
    """The ``gr.Blocks`` Space of metric ``name`` (or its registry entry; API name ``/score``: inputs in page order,
    outputs the scores table, the bar chart and the details table).

    ``options``: constructor options (default: the paper's, or the offline stand-in, see :func:`space_metric`);
    ``metric``: an already built :class:`SpaceMetric` instead; ``description``: text under the title
    (default: the card's ``description``).
    """
    import gradio as gr

    registered = registry_entry(name)
    shown = metric or space_metric(registered, options)
    scorer = shown.scorer
    takes_references = scorer.needs_references or scorer.references_optional
    header, card = metric_card(registered)
    description = description or header.get("description", "")
    with gr.Blocks(title=f"capeval: {shown.label}") as demo:
        gr.Markdown(f"# {shown.label}\n\n{description or ''}" + (f"\n\n**Note:** {shown.note}" if shown.note else ""))
        with gr.Row():
            inputs = list(image_widgets(gr)) if scorer.needs_images else []
            with gr.Column():
                inputs.append(gr.Textbox(label="Candidate captions (one per line)", lines=3))
                if takes_references:
                    label = "References (one per line)" + ("" if scorer.needs_references else ", optional")
                    inputs.append(gr.Textbox(label=label, lines=5))
                button = gr.Button("Score", variant="primary")
        import pandas as pd

        headers = ["candidate", *scorer.columns()]
        table = gr.Dataframe(value=pd.DataFrame(columns=headers), label="Scores (one row per candidate, then the corpus values)",
                             interactive=False, elem_id="scores")
        chart = gr.BarPlot(x="candidate", y="score", label="Score per candidate", x_title="candidate",
                           y_title=scorer.primary, visible=False)
        details = gr.Dataframe(label="Details", interactive=False, visible=False)
        examples = [image_example(takes_references)] if scorer.needs_images else text_examples(takes_references)
        gr.Examples(examples, inputs=inputs)
        with gr.Accordion("Metric card", open=False):
            gr.Markdown(card)

        def score(*values):
            image, features = (values[0], values[1]) if scorer.needs_images else (None, None)
            texts = values[2:] if scorer.needs_images else values
            candidates = parse_lines(texts[0])
            try:
                scores = score_captions(scorer, candidates, parse_lines(texts[1]) if takes_references else [], image, features)
            except ValueError as error:
                raise _error(gr, error) from error
            column = scorer.primary
            bars = pd.DataFrame({"candidate": candidate_labels(candidates), "score": scores[column]})
            found = details_table(candidates, scores)
            return (scores_table(candidates, scores, scores.corpus), gr.BarPlot(value=bars, visible=len(candidates) > 1),
                    gr.Dataframe(value=found, visible=not found.empty))

        button.click(score, inputs=inputs, outputs=[table, chart, details], api_name="score")
    return demo


def suite_scores(metrics: Sequence[SpaceMetric], candidates: list[str], references: list[str], image: str | None = None,
                 features: str | None = None) -> tuple[dict[str, Scores], list[str]]:
    """Each metric's scores of the candidates, and a note per metric that did not run (no image, an error)."""
    if not candidates:
        raise ValueError("Type at least one candidate caption (one per line).")
    results, notes = {}, []
    for metric in metrics:
        if metric.scorer.needs_images and not (image or features):
            notes.append(f"{metric.label}: needs an image")
            continue
        if metric.scorer.needs_references and not references:
            notes.append(f"{metric.label}: needs references")
            continue
        try:
            results[metric.label] = score_captions(metric.scorer, candidates, references, image, features)
        except ValueError as error:
            notes.append(f"{metric.label}: {error}")
    return results, notes


def build_suite_space(metrics: Sequence[SpaceMetric] | None = None):
    """The suite: one image, several candidates, references → every metric side by side (API ``/score``:
    image, features, candidates, references → scores, bar chart, per-output breakdown, details, notes)."""
    import gradio as gr
    import pandas as pd

    metrics = suite_metrics() if metrics is None else list(metrics)
    notes = "\n".join(f"- **{m.label}**: {m.note}" for m in metrics if m.note)
    image_metrics = [m.label for m in metrics if m.scorer.needs_images]
    with gr.Blocks(title="capeval suite") as demo:
        gr.Markdown("# capeval: every caption metric at once\n\nOne image (for the image metrics), several candidates "
                    "and their references, scored by every metric that runs here.\n\n" + notes)
        if not image_metrics:
            gr.Markdown("No image metric runs on this Space (their checkpoints are not here), so it asks for no image.",
                        elem_id="no-image-metric")
        with gr.Row():
            with gr.Column(visible=bool(image_metrics)):
                image, features = image_widgets(gr)
            with gr.Column():
                candidates_box = gr.Textbox(label="Candidate captions (one per line)", lines=3, elem_id="candidates")
                references_box = gr.Textbox(label="References (one per line)", lines=5, elem_id="references")
                button = gr.Button("Score", variant="primary", elem_id="score")
        table = gr.Dataframe(value=pd.DataFrame(columns=["candidate", *(m.label for m in metrics)]), elem_id="scores",
                             label="Scores (one row per candidate, one column per metric)", interactive=False)
        chart = gr.Plot(label="Scores by metric: one panel each, candidates side by side", elem_id="chart")
        breakdown = gr.Dataframe(value=pd.DataFrame(columns=["candidate", "metric", "output", "value"]), elem_id="breakdown",
                                 label="Every output of every metric (SMURF's parts, BLEU-1..4, ...), corpus values last",
                                 interactive=False)
        details = gr.Dataframe(label="Details (e.g. QACE's questions and answers)", interactive=False, visible=False)
        skipped = gr.Markdown()
        gr.Examples([image_example(True)], inputs=[image, features, candidates_box, references_box])

        def score(image_path, features_path, candidates_text, references_text):
            candidates = parse_lines(candidates_text)
            try:
                results, problems = suite_scores(metrics, candidates, parse_lines(references_text), image_path, features_path)
            except ValueError as error:
                raise _error(gr, error) from error
            by_metric = {m.label: results[m.label][m.scorer.primary] for m in metrics if m.label in results}
            labels = candidate_labels(candidates)
            parts = pd.DataFrame([{"candidate": labels[i], "metric": name, "output": column, "value": shown(value)}
                                  for name, scores in results.items() for column, values in scores.items()
                                  for i, value in enumerate(values)]
                                 + [{"candidate": "corpus", "metric": name, "output": key, "value": shown(value)}
                                    for name, scores in results.items() for key, value in scores.corpus.items()],
                                 columns=["candidate", "metric", "output", "value"])
            found = pd.concat([details_table(candidates, scores, name) for name, scores in results.items()] or [pd.DataFrame()])
            return (scores_table(candidates, by_metric), metric_panels(labels, by_metric), parts,
                    gr.Dataframe(value=found, visible=not found.empty),
                    "\n".join(f"- not scored: {problem}" for problem in problems))

        button.click(score, inputs=[image, features, candidates_box, references_box],
                     outputs=[table, chart, breakdown, details, skipped], api_name="score")
    return demo
