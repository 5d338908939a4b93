"""The publish script's dry run, and its upload calls against a stand-in HfApi (no network)."""

import importlib.util

import pytest


@pytest.fixture
def publish_script(repo_root):
    spec = importlib.util.spec_from_file_location("publish_hub", repo_root / "scripts" / "publish_hub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dry_run_lists_repos_and_files(publish_script, capsys):
    assert publish_script.main(["--namespace", "me", "--dry-run", "flickr8k_expert", "thumb"]) == 0
    out = capsys.readouterr().out
    assert "me/flickr8k-expert (dataset)" in out and "me/thumb (dataset)" in out
    assert "data/test-00000-of-00001.parquet" in out and "README.md" in out and "composite" not in out
    with pytest.raises(SystemExit, match="no benchmark folder"):
        publish_script.main(["--namespace", "me", "--dry-run", "coco"])


def test_publish_creates_then_uploads_each_folder(publish_script, monkeypatch):
    import huggingface_hub

    calls = []

    class FakeApi:
        def __init__(self, token=None):
            calls.append(("token", token))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create", repo_id, kwargs["repo_type"], kwargs["exist_ok"]))

        def upload_folder(self, **kwargs):
            calls.append(("upload", kwargs["repo_id"], kwargs["folder_path"].rsplit("/", 1)[-1], kwargs["repo_type"]))

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    assert publish_script.main(["--namespace", "me", "--token", "t", "capeval1k"]) == 0
    assert calls == [("token", "t"), ("create", "me/capeval1k", "dataset", True),
                     ("upload", "me/capeval1k", "capeval1k", "dataset")]
