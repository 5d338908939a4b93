"""The Gradio Spaces: one builder for every metric's Space and the suite, driven by the registry and the
scorers' metadata (evaluate's own widget is broken on gradio >= 4).

A metric's ``app.py`` is ``build_metric_space("bleu").launch()``: the builder reads the scorer's declaration for
what it shows: an image upload when it needs images, a region-features file beside it only when it reads them
(UMIC, ViLBERTScore, QACE-Img), a references box when it takes references, and the bundled sample (image,
features) as an example of just those inputs. Before anything is typed, the page says what the metric needs
that is missing here (a checkpoint not in the cache while offline, Java for SPICE). It shows one rounded row
per candidate and one column per output, a bar chart on the metric's declared range when there are several
candidates, a table of per-caption details when the scorer returns them (QACE's questions and answers), and
the metric card. Errors are raised as ``gr.Error``, so the page shows them and API clients get an exception.

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
from ..reports.tables import score_text
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


#: A line of its own that separates captions of several paragraphs in a Space's text box.
CAPTION_SEPARATOR = "---"
#: How the text boxes take captions (:func:`parse_lines`).
LINES_HINT = f"one per line; blank lines between paragraphs keep one caption, {CAPTION_SEPARATOR} lines part such captions"
CANDIDATES_LABEL = f"Candidate captions ({LINES_HINT})"
REFERENCES_LABEL = f"References ({LINES_HINT})"


def parse_lines(text: str | None) -> list[str]:
    """The captions typed in a text box (candidates, references): one per line; a text with a blank line between its
    lines is one caption of several paragraphs (a long description), joined by a space (a newline inside a caption
    would split it again in line-based tools); several such captions are parted by lines of ``---``.

    >>> parse_lines("a dog runs\\n  two dogs play \\n\\n")
    ['a dog runs', 'two dogs play']
    >>> parse_lines("A dog runs.\\n\\nIt is brown. \\n"), parse_lines("A dog.\\n\\nIt runs.\\n---\\nA cat.\\n\\nIt sits.")
    (['A dog runs. It is brown.'], ['A dog. It runs.', 'A cat. It sits.'])
    """
    blocks = re.split(rf"^[ \t]*{CAPTION_SEPARATOR}[ \t]*$", text or "", flags=re.M)
    if len(blocks) == 1 and not re.search(r"\S[ \t]*\n\s*\n\s*\S", blocks[0]):
        return [line.strip() for line in blocks[0].splitlines() if line.strip()]
    return [caption for block in blocks if (caption := " ".join(block.split()))]


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
    """One scorer as a Space shows it: its label, what the visitor should know (stand-in models, IDF) and what it
    needs that is missing here (:func:`missing_here`)."""

    label: str
    scorer: CaptionScorer
    note: str = ""
    missing: str = ""


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


def sample_image_input(scorer: CaptionScorer) -> str:
    """What a Space's example gives ``scorer`` as its image: its example id where it names images by id (AMBER), else
    the bundled sample image."""
    return scorer.image_id_example or str(sample_image())


def sample_inputs(scorer: CaptionScorer) -> dict:
    """The sample image (:func:`sample_image_input`), or its region features for a scorer that reads them, for one
    caption (``{}`` for a scorer that needs no image)."""
    if not scorer.needs_images:
        return {}
    return {"region_features": [str(sample_region_features())]} if scorer.reads_region_features else {"images": [sample_image_input(scorer)]}


def missing_here(scorer: CaptionScorer) -> str:
    """What ``scorer`` needs that this machine lacks (a checkpoint that is neither cached nor downloadable, Java or
    CoreNLP for SPICE, NLTK's data for CAPTURE), as a visitor reads it; ``""`` when it scores here. Found by scoring one caption of the bundled
    sample, which also loads the models into capeval's cache before the first visitor comes."""
    try:
        score_checked(scorer, ["a dog"], [["a dog"]] if scorer.needs_references else None, **sample_inputs(scorer),
                      show_progress=False)
    except (ModelUnavailableError, ImportError, LookupError) as error:  # LookupError: NLTK's or WordNet's data
        return visitor_message(str(error))
    except ValueError:  # the sample is no input of this configuration (CHAIR's id not in its annotations): the call says
        pass
    return ""


def space_metric(metric: str | MetricEntry, options: Mapping[str, Any] | None = None) -> SpaceMetric:
    """Metric ``metric`` (a name or its registry entry) for its Space: with ``options`` when given (e.g. from the
    environment), else the paper's configuration when it runs here, else the registry's first offline stand-in,
    labelled; with what it lacks here when nothing runs."""
    metric = registry_entry(metric)
    scorer = space_scorer(metric, options or {})
    default_run = next((run for run in metric.offline_runs if run.options == {}), None)
    missing = "" if default_run is not None and default_run.available() else missing_here(scorer)
    if missing and not options:
        for run in metric.offline_runs:
            resolved = run.resolved_options()
            if resolved is not None:
                stand_in = offline_space_metric(run, resolved)
                stand_in.note = f"Offline stand-in (the paper's model is not available here): {stand_in.note}"
                return stand_in
    return SpaceMetric(metric.title, scorer, idf_note(scorer), missing)


def suite_metrics(extra: Sequence[SpaceMetric] = ()) -> list[SpaceMetric]:
    """Every offline configuration of every registered metric available here, then ``extra``."""
    return [offline_space_metric(run, options) for run in offline_runs()
            if (options := run.resolved_options()) is not None] + list(extra)


def suite_missing() -> dict[str, str]:
    """What the suite cannot run here, each with what it lacks: an offline configuration that cannot run (what scoring
    one sample caption says is missing, e.g. Java for SPICE; a configuration whose options need a model that is not
    installed says so with its note), and every metric with no offline configuration that runs, with all it lacks and
    the command that provides it (:func:`capeval.readiness.readiness`, the check ``capeval doctor`` makes); a broken
    metric is left out with its one line (:func:`~capeval.registry.left_out`)."""
    from ..readiness import readiness
    from ..registry import METRICS, left_out

    missing = {}
    runs = offline_runs()
    for run in runs:
        if run.resolved_options() is not None:
            continue
        if callable(run.options):
            missing[run.label] = f"its offline model is not installed ({run.note})"
        else:
            missing[run.label] = missing_here(space_scorer(run.metric, run.options)) or "not available here"
    with_runs = {run.metric for run in runs}
    for name, metric in METRICS.items():
        if name not in with_runs and not left_out(metric) and (row := readiness(metric)).lacks:
            missing[name] = f"lacks {', '.join(row.lacks)}: `{row.fix}`"
    return missing


def image_inputs(image: str | None, features: str | None, count: int, id_example: str = "") -> dict:
    """``region_features`` (a features file wins) or ``images`` for ``count`` candidates of one image (an upload, or
    the id typed for a scorer that names images by id, whose example is ``id_example``)."""
    if features:
        return {"region_features": [features] * count}
    if image and image.strip():
        return {"images": [image.strip() if id_example else image] * count}
    if id_example:
        raise ValueError(f"Type the image's id (e.g. {id_example}) to score captions against it.")
    raise ValueError("Upload an image (or pick the example) to score captions against it.")


def score_captions(scorer: CaptionScorer, candidates: list[str], references: list[str], image: str | None = None,
                   features: str | None = None) -> Scores:
    """Score every candidate against one image and one reference set; ``ValueError`` with a visitor's message for
    whatever fails (what a metric lacks here named as what it is, never a bare error)."""
    if not candidates:
        raise ValueError("Type at least one candidate caption (one per line).")
    if scorer.needs_references and not references:
        raise ValueError("Type at least one reference caption (one per line).")
    inputs = image_inputs(image, features, len(candidates), scorer.image_id_example) if scorer.needs_images else {}
    try:
        return score_checked(scorer, candidates, [references] * len(candidates), **inputs, show_progress=False)
    except ExtractorUnavailableError as error:
        raise ValueError(NO_EXTRACTOR) from error
    except ModelUnavailableError as error:  # a checkpoint, or language data (NLTK's, spaCy's, AMBER's files): it says which
        raise ValueError(f"This metric cannot run on this Space: {error}") from error
    except ValueError:
        raise
    except Exception as error:  # gradio shows any other exception as a bare "Error": say what failed
        raise ValueError(f"Scoring failed ({type(error).__name__}): {error}") from error


#: Characters of a caption that a scores table shows: a long description in full would push the values out of sight.
CAPTION_CELL = 60


def shortened(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with ``…``.

    >>> shortened("a dog runs across the grass", 12), shortened("a cat", 5)
    ('a dog runs…', 'a cat')
    """
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def candidate_labels(candidates: Sequence[str]) -> list[str]:
    """Short distinct labels for charts: ``#1 a dog runs…``.

    >>> candidate_labels(["a dog runs across the grass in the park", "a cat"])
    ['#1 a dog runs across the gra…', '#2 a cat']
    """
    return [f"#{i + 1} {shortened(text, 26)}" for i, text in enumerate(candidates)]


def shown(value: float | None) -> str:
    """A score as the Spaces show it (:func:`capeval.reports.tables.score_text` with ``DIGITS`` decimals).

    >>> shown(0.0), shown(0.343291), shown(1.5e-08), shown(None)
    ('0.0000', '0.3433', '1.5e-08', '')
    """
    return score_text(value, DIGITS)


Range = tuple[float | None, float | None]


def value_axis(value_range: Range, values: Sequence[float]) -> tuple[float, float]:
    """The value axis of a metric's bars: its declared range (:attr:`CaptionScorer.value_range`), an open end taken
    from the values, always holding 0 (where the bars start) and every value.

    >>> value_axis((0.0, 1.0), [1.5e-08, 1.6e-08]), value_axis((-1.0, 1.0), [0.9]), value_axis((0.0, None), [0.7, 0.8])
    ((0.0, 1.0), (-1.0, 1.0), (0.0, 0.8))
    >>> value_axis((None, None), [-0.4, 1.2]), value_axis((None, None), [0.0]), value_axis((0.0, 1.0), [1.5])
    ((-0.4, 1.2), (0.0, 1.0), (0.0, 1.5))
    """
    low, high = value_range
    low = min(0.0, *values) if low is None else min(low, *values)
    high = max(0.0, *values) if high is None else max(high, *values)
    return (low, high) if high > low else (low, low + 1.0)


def scores_table(candidates: Sequence[str], columns: Mapping[str, Sequence[float]], corpus: Mapping[str, float] | None = None):
    """One row per candidate and one column per output, then (with ``corpus``) a ``corpus`` row holding the corpus
    values, with the corpus-only values (BLEU-1..4) as columns of their own; the candidate last and shortened
    (:data:`CAPTION_CELL`), so the values stay in sight beside a long description."""
    import pandas as pd

    rows = [{"candidate": shortened(candidate, CAPTION_CELL), **{name: shown(values[i]) for name, values in columns.items()}}
            for i, candidate in enumerate(candidates)]
    if corpus is not None:
        rows.append({"candidate": "corpus", **{name: shown(value) for name, value in corpus.items()}})
    headers = [*columns, *(name for name in corpus or {} if name not in columns), "candidate"]
    return pd.DataFrame(rows, columns=headers).fillna("")


def metric_panels(labels: Sequence[str], by_metric: Mapping[str, Sequence[float]], ranges: Mapping[str, Range] | None = None):
    """One small bar panel per metric (each on its own axis: CIDEr-D's 0–10 does not flatten the others), the
    candidates side by side in each, one colour per candidate, each bar labelled with its value as the tables show it
    (``1.5e-08``, not a ``0.0000`` beside a full bar); a ``matplotlib`` figure for ``gr.Plot``. A metric's axis is
    :func:`value_axis` of its declared range in ``ranges`` (absent: open at both ends)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = max(len(by_metric), 1)
    columns = min(count, 4)
    rows = -(-count // columns)
    legend_columns = min(len(labels), columns, 3) or 1  # as wide as the panels above it
    legend_height = 0.25 * -(-len(labels) // legend_columns)  # inches
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.6 * rows + legend_height), squeeze=False)
    palette = plt.get_cmap("tab10")
    colours = [palette(i) for i in range(10)]
    for axis, (metric, values) in zip(axes.flat, by_metric.items()):
        bars = axis.bar(range(len(values)), values, color=[colours[i % len(colours)] for i in range(len(values))])
        axis.bar_label(bars, labels=[shown(value) for value in values], fontsize=7, padding=2)  # above a full bar too:
        axis.set_title(metric, fontsize=9, pad=14)  # the title leaves them room
        axis.set_ylim(*value_axis((ranges or {}).get(metric, (None, None)), values))
        axis.ticklabel_format(axis="y", useOffset=False)
        axis.set_xticks(range(len(values)), [f"#{i + 1}" for i in range(len(values))], fontsize=8)
        axis.tick_params(axis="y", labelsize=8)
    for axis in list(axes.flat)[len(by_metric):]:
        axis.set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[i % len(colours)]) for i in range(len(labels))]
    figure.legend(handles, labels, loc="lower center", ncol=legend_columns, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, (legend_height + 0.1) / figure.get_figheight(), 1, 1))
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
                rows.append({"candidate": shortened(candidate, CAPTION_CELL), **({"metric": metric} if metric else {}), "detail": detail,
                             **{k: round(v, DIGITS) if isinstance(v, float) else v for k, v in fields.items()}})
    return pd.DataFrame(rows)


def visitor_message(text: str) -> str:
    """An error as a visitor should read it: no server paths (a file's name at most), no environment variables.

    >>> visitor_message("no /root/.cache/capeval/umic.pt (from https://archive.org/x/umic.pt); set CAPEVAL_OFFLINE=0")
    "no umic.pt (from https://archive.org/x/umic.pt); set the server's settings"
    >>> visitor_message("offline mode (HF_HUB_OFFLINE=1 or CAPEVAL_OFFLINE=1) forbids it")
    "offline mode (the server's settings) forbids it"
    """
    text = re.sub(r"(?<![\w:/.])~?/(?:[^\s'\"/()]+/)*([^\s'\"/()]+)", r"\1", text)
    variable = r"\b(?:CAPEVAL|HF|TRANSFORMERS|HF_HUB)_[A-Z_]+(?:=[^\s),;]*)?"
    return re.sub(rf"{variable}(?:(?:\s+or\s+|,\s*){variable})*", "the server's settings", text)


def _error(gr, error: ValueError):
    return gr.Error(visitor_message(str(error)), print_exception=False)


def image_widgets(gr, region_features: bool = True):
    """An image upload and an optional region-features file, shown only for metrics that read ``region_features`` (the
    suite keeps it hidden as an input of ``/score``, so its API stays the same whichever metrics run)."""
    image = gr.Image(type="filepath", label="Image", elem_id="image")
    features = gr.File(label="Region features (.npz, optional: used instead of extracting them)", file_types=[".npz"],
                       type="filepath", elem_id="region-features", visible=region_features)
    return image, features


def image_id_box(gr, example: str):
    """Where a visitor names the image of a scorer that reads ids (AMBER's image id), in place of an upload."""
    return gr.Textbox(label=f"Image id (e.g. {example})", elem_id="image")


def text_examples(with_references: bool) -> list[list[str]]:
    """Two bundled Flickr8k-Expert rows: one candidate, then two candidates, against their references."""
    rows = sample_captions()
    low, high = rows[0], rows[-1]
    pairs = [([high["candidate"]], high["references"]), ([high["candidate"], low["candidate"]], high["references"])]
    return [["\n".join(cands), *(["\n".join(refs)] if with_references else [])] for cands, refs in pairs]


def image_example(with_references: bool, region_features: bool = True, image: str | None = None) -> list:
    """``image`` (default the bundled sample image), its BUTD features (``region_features``), two candidates (and
    references)."""
    return [image or str(sample_image()), *([str(sample_region_features())] if region_features else []),
            "\n".join(SAMPLE_IMAGE_CANDIDATES), *(["\n".join(SAMPLE_IMAGE_REFERENCES)] if with_references else [])]


def missing_markdown(gr, missing: Mapping[str, str]):
    """A warning at the top of a Space: what each metric (label: what it lacks) needs that is missing here; hidden
    when nothing is."""
    lines = [f"- **{label}** cannot run here: {needs}" for label, needs in missing.items()]
    return gr.Markdown("**Missing on this Space**\n\n" + "\n".join(lines), elem_id="missing", visible=bool(lines))


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
    the image and region features only where the scorer reads them; outputs the scores table, the bar chart and the
    details table).

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
        missing_markdown(gr, {shown.label: shown.missing} if shown.missing else {})
        with gr.Row():
            # The features upload only where the scorer reads them (hidden and no input of /score elsewhere); an id box
            # where it names images by id.
            if scorer.needs_images and scorer.image_id_example:
                inputs = [image_id_box(gr, scorer.image_id_example)]
            else:
                widgets = list(image_widgets(gr, scorer.reads_region_features)) if scorer.needs_images else []
                inputs = widgets[:1 + scorer.reads_region_features]
            image_count = len(inputs)
            with gr.Column():
                inputs.append(gr.Textbox(label=CANDIDATES_LABEL, lines=3))
                if takes_references:
                    label = REFERENCES_LABEL + ("" if scorer.needs_references else ", optional")
                    inputs.append(gr.Textbox(label=label, lines=5))
                button = gr.Button("Score", variant="primary")
        import pandas as pd

        headers = [*scorer.columns(), "candidate"]
        table = gr.Dataframe(value=pd.DataFrame(columns=headers), label="Scores (one row per candidate, then the corpus values)",
                             interactive=False, elem_id="scores")
        chart = gr.Plot(label=f"{scorer.primary} per candidate, on its range", visible=False, elem_id="chart")
        details = gr.Dataframe(label="Details", interactive=False, visible=False)
        examples = ([image_example(takes_references, scorer.reads_region_features, sample_image_input(scorer))]
                    if scorer.needs_images else text_examples(takes_references))
        gr.Examples(examples, inputs=inputs)
        with gr.Accordion("Metric card", open=False):
            gr.Markdown(card)

        def score(*values):
            image, features = (list(values[:image_count]) + [None, None])[:2]
            texts = values[image_count:]
            candidates = parse_lines(texts[0])
            try:
                scores = score_captions(scorer, candidates, parse_lines(texts[1]) if takes_references else [], image, features)
            except ValueError as error:
                raise _error(gr, error) from error
            bars = metric_panels(candidate_labels(candidates), {scorer.primary: scores[scorer.primary]},
                                 {scorer.primary: scorer.value_range})
            found = details_table(candidates, scores)
            return (scores_table(candidates, scores, scores.corpus), gr.Plot(value=bars, visible=len(candidates) > 1),
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
    image_metrics = [m for m in metrics if m.scorer.needs_images]
    reads_features = any(m.scorer.reads_region_features for m in image_metrics)
    with gr.Blocks(title="capeval suite") as demo:
        gr.Markdown("# capeval: every caption metric at once\n\nOne image (for the image metrics), several candidates "
                    "and their references, scored by every metric that runs here.\n\n" + notes)
        missing_markdown(gr, suite_missing())
        if not image_metrics:
            gr.Markdown("No image metric runs on this Space (their checkpoints are not here), so it asks for no image.",
                        elem_id="no-image-metric")
        with gr.Row():
            with gr.Column(visible=bool(image_metrics)):
                image, features = image_widgets(gr, reads_features)
            with gr.Column():
                candidates_box = gr.Textbox(label=CANDIDATES_LABEL, lines=3, elem_id="candidates")
                references_box = gr.Textbox(label=REFERENCES_LABEL, lines=5, elem_id="references")
                button = gr.Button("Score", variant="primary", elem_id="score")
        table = gr.Dataframe(value=pd.DataFrame(columns=[*(m.label for m in metrics), "candidate"]), elem_id="scores",
                             label="Scores (one row per candidate, one column per metric)", interactive=False)
        chart = gr.Plot(label="Scores by metric: one panel each, candidates side by side", elem_id="chart")
        breakdown = gr.Dataframe(value=pd.DataFrame(columns=["candidate", "metric", "output", "value"]), elem_id="breakdown",
                                 label="Every output of every metric (SMURF's parts, BLEU-1..4, ...), corpus values last",
                                 interactive=False)
        details = gr.Dataframe(label="Details (e.g. QACE's questions and answers)", interactive=False, visible=False)
        skipped = gr.Markdown()
        if image_metrics:  # an example of the inputs shown only
            gr.Examples([image_example(True, reads_features)],
                        inputs=[image, *([features] if reads_features else []), candidates_box, references_box])
        else:
            gr.Examples([image_example(True)[-2:]], inputs=[candidates_box, references_box])

        def score(image_path, features_path, candidates_text, references_text):
            candidates = parse_lines(candidates_text)
            try:
                results, problems = suite_scores(metrics, candidates, parse_lines(references_text), image_path, features_path)
            except ValueError as error:
                raise _error(gr, error) from error
            by_metric = {m.label: results[m.label][m.scorer.primary] for m in metrics if m.label in results}
            ranges = {m.label: m.scorer.value_range for m in metrics}
            labels = candidate_labels(candidates)
            parts = pd.DataFrame([{"candidate": labels[i], "metric": name, "output": column, "value": shown(value)}
                                  for name, scores in results.items() for column, values in scores.items()
                                  for i, value in enumerate(values)]
                                 + [{"candidate": "corpus", "metric": name, "output": key, "value": shown(value)}
                                    for name, scores in results.items() for key, value in scores.corpus.items()],
                                 columns=["candidate", "metric", "output", "value"])
            found = pd.concat([details_table(candidates, scores, name) for name, scores in results.items()] or [pd.DataFrame()])
            return (scores_table(candidates, by_metric), metric_panels(labels, by_metric, ranges), parts,
                    gr.Dataframe(value=found, visible=not found.empty),
                    "\n".join(f"- not scored: {problem}" for problem in problems))

        button.click(score, inputs=[image, features, candidates_box, references_box],
                     outputs=[table, chart, breakdown, details, skipped], api_name="score")
    return demo
