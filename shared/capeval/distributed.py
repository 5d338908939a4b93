"""Scoring beyond one process on Ray Data (the ``capeval[ray]`` extra): the cores of one machine or
the nodes of a cluster.

:func:`score_dataset` maps a caption set (a Ray Dataset, Parquet or JSON-lines files, a
``datasets.Dataset``, a pandas or Arrow table, a list of dicts) through any capeval scorer and adds
one column per output column of the scorer (:meth:`~capeval.scoring.protocol.CaptionScorer.columns`)
and an ``error`` column; the input's other columns (an id, a system name) pass through unchanged.

* Per-caption scorers (BLEU, ROUGE-L, METEOR, SMURF, UMIC, ...) run in one pass: an actor pool
  maps batches through the scorer, so models load once per actor, from the process-wide cache that
  single-process scoring uses.
* Corpus-dependent scorers (CIDEr-D's document frequencies, BERT-TBR's IDF) run in two: tasks count
  each block's :meth:`~capeval.scoring.protocol.CaptionScorer.count_document_frequencies`, the driver merges
  them, and the actors score with the merged table
  (:meth:`~capeval.scoring.protocol.CaptionScorer.with_document_frequencies`), which gives exactly the numbers of
  single-process scoring. The runner asks the scorer, so it has no per-metric code.
* A row whose inputs the scorer rejects (a missing caption or references, missing or malformed
  region features) gets the error message in ``error`` and nulls in the score columns: a batch that
  raises ``ValueError`` is split in halves until the bad rows are alone, and the other rows score as
  usual. A batch whose worker dies (a crash, an out-of-memory kill, a lost node) is retried on a
  restarted actor, up to ``max_retries`` times. Any other exception is a bug and fails the run.
* :func:`summarize` computes the system-level results from the scored dataset: rows, failed rows,
  and the mean and sum of each column, over the whole set or per group (e.g. per captioning system:
  SMURF's system report takes the mean SPARCS'/SPURTS'/SMURF and the summed grammar penalty).
  Each group's corpus values follow the scorer's merge rule (``CaptionScorer.merge``): the means for
  most metrics, corpus BLEU from the rows' summed n-gram counts and METEOR's aggregate from every row's
  statistics vector, so they equal single-process scoring.

Rows may come back in another order than they went in: carry an id column. Every entry point connects
to Ray itself (:func:`connect`): it joins the cluster at ``ray_address=`` (or ``$RAY_ADDRESS``), else starts
a local instance, unless this process called ``ray.init`` already.

A batch as the actors score it, without Ray (a ``pyarrow.Table`` in, the same table with the score
columns out; the row without references fails alone):

>>> import pyarrow as pa
>>> from capeval.scoring.coco import RougeScorer
>>> batch = pa.table({"id": [1, 2], "candidate": ["a dog runs", "a cat"], "references": [["a dog running"], None]})
>>> scored = score_batch(RougeScorer(), batch)
>>> scored.column_names, scored["rouge_l"].to_pylist()[1], scored["error"].to_pylist()
(['id', 'candidate', 'references', 'rouge_l', 'error'], None, [None, 'ValueError: references[0] is empty: ...'])
"""

from __future__ import annotations

import pickle
import warnings
from functools import reduce
from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa

from .inputs import check_inputs
from .registry import resolve
from .declaration import MERGE_MEAN, MERGE_SUM
from .scoring.protocol import CaptionScorer, Scores, shape_result
from .vision.regions import load_feature_table

#: The per-row error message column (null for a row that scored).
ERROR_COLUMN = "error"
#: Input columns: the caption, its references, and for image metrics an image or its region features
#: (a path, or a struct of ``features``/``norm_bb``/``conf``; or those as flat columns, as
#: :func:`capeval.vision.regions.load_feature_table` reads them).
CANDIDATE, REFERENCES, IMAGE, REGION_FEATURES = "candidate", "references", "image", "region_features"
#: Scorers whose corpus value is not a mean (BLEU, METEOR) put each row's sufficient statistics here.
STATISTICS_COLUMN = "sufficient_statistics"
#: Rows per batch handed to an actor; the scorer batches its model passes inside (its own defaults).
CPU_BATCH_ROWS, GPU_BATCH_ROWS = 256, 1024
#: Rows per task that counts statistics or totals: small blocks are bundled, since each task costs ~10 ms.
TASK_BATCH_ROWS = 8192


def connect(address: str | None = None):
    """The ``ray`` module, connected: as this process already is, else joined to the cluster at ``address``
    (``None``: ``$RAY_ADDRESS`` if set, else a new local instance)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray


def make_scorer(metric: Any, **options: Any) -> CaptionScorer:
    """The scorer of a metric spec (:func:`capeval.registry.resolve`: a name with ``options``, ``"name:k=v"``, a
    scorer instance as it is)."""
    if isinstance(metric, CaptionScorer) and options:
        raise TypeError(f"options {sorted(options)} go with a metric name, not with a scorer instance")
    return resolve(metric, options)


def batch_inputs(scorer: CaptionScorer, table: pa.Table, *, batch_size: int | None = None) -> dict[str, Any]:
    """``scorer.score``'s inputs from a batch's columns, validated (:func:`capeval.inputs.check_inputs`)."""
    names = table.column_names
    references = table[REFERENCES].to_pylist() if scorer.needs_references else None
    region_features = None
    if REGION_FEATURES in names:
        region_features = table[REGION_FEATURES].to_pylist()
    elif "features" in names:
        region_features = load_feature_table(table)
    images = table[IMAGE].to_pylist() if IMAGE in names else None
    return check_inputs(scorer, table[CANDIDATE].to_pylist(), references, images=images, region_features=region_features,
                        batch_size=batch_size)


def attempt_rows(attempt: Callable[[pa.Table], Any], table: pa.Table) -> list[tuple[pa.Table, Any, str | None]]:
    """``attempt(table)``; where it raises ``ValueError`` (an input it rejects), ``attempt`` over each
    half, down to single rows. Returns ``(rows, result, None)`` or ``(row, None, message)`` in row order."""
    try:
        return [(table, attempt(table), None)]
    except ValueError as error:
        if table.num_rows == 1:
            return [(table, None, f"{type(error).__name__}: {error}")]
        half = table.num_rows // 2
        return attempt_rows(attempt, table.slice(0, half)) + attempt_rows(attempt, table.slice(half))


def score_batch(scorer: CaptionScorer, table: pa.Table, *, batch_size: int | None = None) -> pa.Table:
    """``table`` with one float column per output column of ``scorer`` and :data:`ERROR_COLUMN`
    (see the module docstring); ``batch_size`` goes to the scorer's model passes."""
    columns = scorer.columns()
    values: dict[str, list[float | None]] = {name: [] for name in columns}
    statistics: list[list[float] | None] = []
    errors: list[str | None] = []
    for rows, scores, error in attempt_rows(
            lambda rows: scorer.score(**batch_inputs(scorer, rows, batch_size=batch_size), show_progress=False), table):
        for name in columns:
            values[name].extend(scores[name] if error is None else [None] * rows.num_rows)
        if not scorer.merge == MERGE_MEAN:
            statistics.extend(scores.sufficient_statistics if error is None else [None] * rows.num_rows)
        errors.extend([error] * rows.num_rows)
    for name in columns:
        table = table.append_column(name, pa.array(values[name], pa.float64()))
    if not scorer.merge == MERGE_MEAN:
        # Per-row vectors whose sums give corpus BLEU / METEOR's aggregate (CaptionScorer.corpus_from_sufficient_statistics).
        table = table.append_column(STATISTICS_COLUMN, pa.array(statistics, pa.list_(pa.float64())))
    return table.append_column(ERROR_COLUMN, pa.array(errors, pa.string()))


def batch_document_frequencies(table: pa.Table, *, metric: str | CaptionScorer, options: dict[str, Any]) -> pa.Table:
    """The merged document frequencies of a batch's valid rows, pickled in a one-row table (none if no row is valid)."""
    scorer = make_scorer(metric, **options)

    def frequencies(rows: pa.Table):
        inputs = batch_inputs(scorer, rows)
        return scorer.count_document_frequencies(inputs["predictions"], inputs["references"])

    parts = [result for _, result, error in attempt_rows(frequencies, table) if error is None]
    return pa.table({"document_frequencies": pa.array([pickle.dumps(reduce(lambda total, part: total.merge(part), parts))] if parts else [],
                                            pa.binary())})


class BatchScorer:
    """An actor of the pool: builds the scorer once (its models load on the first batch) and scores batches."""

    def __init__(self, metric: str | CaptionScorer, options: dict[str, Any], frequencies: Any, batch_size: int | None):
        scorer = make_scorer(metric, **options)
        self.scorer = scorer if frequencies is None else scorer.with_document_frequencies(frequencies)
        self.batch_size = batch_size

    def __call__(self, table: pa.Table) -> pa.Table:
        return score_batch(self.scorer, table, batch_size=self.batch_size)


def as_dataset(data: Any):
    """A Ray Dataset from a Dataset, a Parquet or JSON-lines path, a ``datasets.Dataset``, a pandas
    DataFrame, a ``pyarrow.Table`` or a list of row dicts."""
    import pandas
    import ray.data

    if isinstance(data, ray.data.Dataset):
        return data
    if isinstance(data, (str, Path)):
        path = str(data)
        return ray.data.read_parquet(path) if path.endswith(".parquet") or Path(path).is_dir() else ray.data.read_json(path, lines=True)
    if isinstance(data, pandas.DataFrame):
        return ray.data.from_pandas(data)
    if isinstance(data, pa.Table):
        return ray.data.from_arrow(data)
    if type(data).__module__.startswith("datasets."):
        return ray.data.from_huggingface(data)
    if isinstance(data, Sequence):
        return ray.data.from_items(list(data))
    raise TypeError(f"cannot read a caption set from a {type(data).__name__}: pass a Ray Dataset, a path, a datasets.Dataset, "
                    "a pandas DataFrame, a pyarrow.Table or a list of row dicts")


def default_gpus() -> int:
    """GPUs per actor: one where the cluster has GPUs, else none."""
    import ray

    return 1 if ray.cluster_resources().get("GPU") else 0


def default_workers(num_gpus: float) -> int:
    """The actor pool's size from the resources Ray reports: one actor per ``num_gpus`` GPUs, or one per
    CPU but one, which stays free for the read and repartition tasks (a pool holding every CPU deadlocks)."""
    import ray

    resources = ray.cluster_resources()
    if num_gpus:
        return max(1, int(resources.get("GPU", 0) // num_gpus))
    return max(1, int(resources.get("CPU", 1)) - 1)


def merged_document_frequencies(dataset, metric: str | CaptionScorer, options: dict[str, Any], *, num_workers: int):
    """The first pass of a corpus-dependent scorer: document frequencies counted per batch of blocks in tasks (at
    most ``num_workers`` at once, each loading the tokenizer once), merged here."""
    counted = dataset.map_batches(batch_document_frequencies, batch_format="pyarrow", batch_size=TASK_BATCH_ROWS, concurrency=num_workers,
                                  fn_kwargs={"metric": metric, "options": options})
    parts = [pickle.loads(blob) for batch in counted.iter_batches(batch_format="pyarrow", batch_size=None)
             for blob in batch["document_frequencies"].to_pylist()]
    return reduce(lambda total, part: total.merge(part), parts) if parts else None


def score_dataset(data: Any, metric: str | CaptionScorer, *, num_workers: int | None = None, num_gpus: float | None = None,
                  batch_rows: int | None = None, batch_size: int | None = None, max_retries: int = 3,
                  ray_address: str | None = None, **options: Any):
    """``data`` with the scores of ``metric`` (a registry name with its constructor ``options``, or a
    scorer instance) added, as a lazy Ray Dataset (see the module docstring).

    ``num_workers``: actors in the pool (default from the cluster's resources, :func:`default_workers`);
    ``num_gpus``: GPUs per actor (default 1 where the cluster has GPUs); ``batch_rows``: rows per actor
    call (default 1024 per GPU actor, 256 per CPU actor); ``batch_size``: the scorer's model batch;
    ``max_retries``: how often a batch whose worker died is retried; ``ray_address``: the cluster to join
    (:func:`connect`).

    For example::

        scored = score_dataset(ray.data.read_parquet("captions/"), "cider")
        scored.write_parquet("scored/")
        summarize(scored, "cider")  # {'rows': ..., 'failed': ..., 'means': {'cider': ...}, 'sums': {...}}
    """
    scorer = make_scorer(metric, **options)
    if isinstance(data, Sequence) and not isinstance(data, str) and not data:
        raise ValueError("the caption set is empty: there are no rows to score")
    connect(ray_address)
    dataset = as_dataset(data)
    names = set(dataset.columns() or ())
    missing = [name for name in (CANDIDATE, *([REFERENCES] if scorer.needs_references else [])) if name not in names]
    if missing:
        raise ValueError(f"{scorer.name} needs the column(s) {missing}; the input has {sorted(names)}")
    clash = sorted(names & {*scorer.columns(), ERROR_COLUMN})
    if clash:
        raise ValueError(f"the input already has the output column(s) {clash}; rename them first")
    num_gpus = default_gpus() if num_gpus is None else num_gpus
    num_workers = num_workers or default_workers(num_gpus)
    frequencies = merged_document_frequencies(dataset, metric, options, num_workers=num_workers) if scorer.corpus_dependent else None
    with warnings.catch_warnings():
        # Ray 2.60 deprecates remote args given to map_batches, but takes the actors' retry limits no other way.
        warnings.simplefilter("ignore", DeprecationWarning)
        return dataset.map_batches(
            BatchScorer, batch_format="pyarrow", batch_size=batch_rows or (GPU_BATCH_ROWS if num_gpus else CPU_BATCH_ROWS),
            fn_constructor_kwargs={"metric": metric, "options": options, "frequencies": frequencies, "batch_size": batch_size},
            concurrency=num_workers, num_gpus=num_gpus, max_restarts=max_retries, max_task_retries=max_retries)


def add_statistics(total: list | None, vectors: list | None, add_up: bool) -> list | None:
    """Two groups' statistics (lists of vectors) as one: summed to a single vector when they ``add_up``."""
    if total is None or vectors is None:
        return total if vectors is None else list(vectors)
    return [[a + b for a, b in zip(total[0], vectors[0])]] if add_up else total + vectors


def block_totals(table: pa.Table, *, columns: Sequence[str], by: str | None, add_up: bool = True) -> pa.Table:
    """Per group of a scored block (one group without ``by``): rows, failed rows, each column's sum and
    number of values, and the rows' statistics vectors where the scorer returns them (summed when they
    ``add_up``)."""
    import pyarrow.compute as pc

    sums = [(name, "sum", pc.ScalarAggregateOptions(min_count=0)) for name in columns]
    totals = table.group_by([by] if by else []).aggregate(
        [([], "count_all"), (ERROR_COLUMN, "count"), *sums, *((name, "count") for name in columns)])
    if STATISTICS_COLUMN not in table.column_names:
        return totals
    vectors: dict[Any, list | None] = {}
    keys = table.column(by).to_pylist() if by else [None] * table.num_rows
    for key, vector in zip(keys, table.column(STATISTICS_COLUMN).to_pylist()):
        vectors[key] = add_statistics(vectors.get(key), None if vector is None else [vector], add_up)
    groups = totals.column(by).to_pylist() if by else [None]
    return totals.append_column(STATISTICS_COLUMN, pa.array([vectors.get(key) for key in groups], pa.list_(pa.list_(pa.float64()))))


def summarize(scored, metric: str | CaptionScorer, *, by: str | None = None, **options: Any) -> dict[str, Any]:
    """System-level results of a scored dataset (or of scored ``pyarrow`` tables, e.g. from
    :func:`score_batch`): ``rows``, ``failed`` (rows with an error), and the ``means`` and ``sums`` of
    the score columns over the rows that scored; with ``by`` (a column with a few values: the system,
    the checkpoint) one such dict per value, with its ``corpus`` values (the means, or for BLEU and METEOR
    those of the summed statistics). Blocks are totalled in tasks and the totals added here, so nothing
    is shuffled.

    >>> import pyarrow as pa
    >>> scored = pa.table({"system": ["A", "A", "B"], "bleu": [0.5, None, 1.0], "error": [None, "ValueError: ...", None]})
    >>> summarize([scored], "bleu", by="system")["A"]
    {'rows': 2, 'failed': 1, 'means': {'bleu': 0.5}, 'sums': {'bleu': 0.5}, 'corpus': {'bleu': 0.5}}
    """
    scorer = make_scorer(metric, **options)
    columns = scorer.columns()
    if hasattr(scored, "map_batches"):
        totals = scored.map_batches(block_totals, batch_format="pyarrow", batch_size=TASK_BATCH_ROWS,
                                    fn_kwargs={"columns": columns, "by": by, "add_up": scorer.merge == MERGE_SUM})
        blocks = list(totals.iter_batches(batch_format="pyarrow", batch_size=None))
    else:
        blocks = [block_totals(table, columns=columns, by=by, add_up=scorer.merge == MERGE_SUM) for table in scored]
    groups: dict[Any, dict[str, Any]] = {}
    for row in (row for block in blocks for row in block.to_pylist()):
        group = groups.setdefault(row.pop(by) if by else None, {**dict.fromkeys(row, 0), STATISTICS_COLUMN: None})
        for key, value in row.items():
            if key == STATISTICS_COLUMN:
                group[key] = add_statistics(group[key], value, scorer.merge == MERGE_SUM)
            else:
                group[key] += value
    results = {key: {"rows": group["count_all"], "failed": group[f"{ERROR_COLUMN}_count"],
                     "means": {name: group[f"{name}_sum"] / group[f"{name}_count"] if group[f"{name}_count"] else None
                               for name in columns},
                     "sums": {name: group[f"{name}_sum"] for name in columns}}
               for key, group in groups.items()}
    for key, result in results.items():
        statistics = groups[key][STATISTICS_COLUMN]
        # Statistics are missing only for a table scored without them, or when every row failed.
        result["corpus"] = (dict(result["means"]) if scorer.merge == MERGE_MEAN or statistics is None
                            else scorer.corpus_from_sufficient_statistics(statistics))
    return results if by else results.get(None, {"rows": 0, "failed": 0, "means": dict.fromkeys(columns), "sums": {}})


def score_on_ray(scorer: CaptionScorer, predictions: list[str], references: list[list[str]] | None = None, *,
                 ray_address: str | None = None, **inputs: Any) -> Scores:
    """``scorer``'s columns for validated inputs, scored on Ray, in input order, with the corpus values of one
    process (the columns' means, or for BLEU and METEOR from the rows' summed statistics); a row that fails
    raises ``ValueError`` naming it, as single-process scoring would. Image inputs are not sent through this
    helper: put them in the dataset's columns and use :func:`score_dataset`. ``ray_address``: see :func:`connect`."""
    connect(ray_address)
    rows = [{"row": i, CANDIDATE: p, **({REFERENCES: references[i]} if references is not None else {})}
            for i, p in enumerate(predictions)]
    num_gpus = default_gpus()
    # No more actors than batches: each one loads the models.
    num_workers = min(default_workers(num_gpus), -(-len(rows) // (GPU_BATCH_ROWS if num_gpus else CPU_BATCH_ROWS)))
    scored = sorted(score_dataset(rows, scorer, num_workers=num_workers, num_gpus=num_gpus).take_all(),
                    key=lambda row: row["row"])
    failed = [(row["row"], row[ERROR_COLUMN]) for row in scored if row[ERROR_COLUMN] is not None]
    if failed:
        raise ValueError(f"{len(failed)} row(s) failed, the first: row {failed[0][0]}: {failed[0][1]}")
    columns = {name: [row[name] for row in scored] for name in scorer.columns()}
    if scorer.merge == MERGE_MEAN:
        return Scores(columns)
    return Scores(columns, corpus=scorer.corpus_from_sufficient_statistics([row[STATISTICS_COLUMN] for row in scored]))


def compute(metric: str, predictions: list[str], references: list[list[str]] | None = None, *,
            ray_address: str | None = None, **options: Any) -> dict[str, Any]:
    """evaluate's result dict for ``metric`` (as its module's ``compute`` returns it), scored on Ray
    (:func:`score_on_ray`)."""
    scorer = make_scorer(metric, **options)
    return shape_result(scorer, score_on_ray(scorer, predictions, references, ray_address=ray_address))
