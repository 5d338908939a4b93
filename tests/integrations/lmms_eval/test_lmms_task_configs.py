"""capeval's lmms-eval task configs: shipped where ``--path`` says, found by lmms-eval's own task index, and each with
the documents, prompt and generation settings of the lmms-eval task it mirrors (field by field against the installed
lmms-eval's config, and the document functions called side by side on the same documents)."""

import pytest
from PIL import Image

from capeval.integrations import lmms_eval as integration
from capeval.integrations.lmms_eval import caption_tasks

from fixtures.lmms_eval import lmms_config, lmms_utils, require_lmms_eval

#: capeval task -> (lmms-eval's config file, its utils folder). The ``_extra`` tasks have the same documents.
MIRRORED = {
    "capeval_coco2014_cap_val": "coco_cap/coco2014_cap_val.yaml",
    "capeval_coco2017_cap_val": "coco_cap/coco2017_cap_val.yaml",
    "capeval_coco2017_cap_val_lite": "coco_cap/coco2017_cap_val_lite.yaml",
    "capeval_coco_karpathy_test": "coco_cap/coco_karpathy_test.yaml",
    "capeval_coco_karpathy_val": "coco_cap/coco_karpathy_val.yaml",
    "capeval_nocaps_val": "nocaps/nocaps_val.yaml",
    "capeval_nocaps_val_lite": "nocaps/nocaps_val_lite.yaml",
    "capeval_flickr30k_test": "flickr30k/flickr30k_test.yaml",
    "capeval_flickr30k_test_lite": "flickr30k/flickr30k_test_lite.yaml",
    "capeval_textcaps_val": "textcaps/textcaps_val.yaml",
    "capeval_textcaps_val_lite": "textcaps/textcaps_val_lite.yaml",
    "capeval_coco_cap_chair": "coco_cap_chair/coco_cap_chair.yaml",
    "capeval_coco_cap_chair_original": "coco_cap_chair/coco_cap_chair.yaml",
    "capeval_amber_g": "amber_g/amber_g.yaml",
    "capeval_amber_g_lmms": "amber_g/amber_g.yaml",
    "capeval_detailcaps": "detailcaps/detailcaps.yaml",
}
#: The tasks with an ``_extra`` twin (the image metrics and a judge).
EXTRA = ("capeval_coco2014_cap_val", "capeval_coco2017_cap_val", "capeval_coco_karpathy_test", "capeval_nocaps_val",
         "capeval_flickr30k_test", "capeval_textcaps_val")
SAME_FIELDS = ("dataset_path", "dataset_name", "dataset_kwargs", "test_split", "output_type", "generation_kwargs",
               "lmms_eval_specific_kwargs")


def own_config(task: str) -> dict:
    from lmms_eval import utils

    return utils.load_yaml_config(str(integration.tasks_path() / f"{task}.yaml"), mode="simple")


def is_function(value) -> bool:
    """Whether a config value read in lmms-eval's "simple" mode is a ``!function`` (left as a YAML node)."""
    return getattr(value, "tag", None) == "!function"


def mirrored(task: str) -> str:
    return MIRRORED[task.removesuffix("_extra")]


def test_path_prints_the_shipped_folder_of_every_task(capsys):
    """``python -m capeval.integrations.lmms_eval --path`` (tests/packaging runs it from the installed wheel)."""
    from capeval.integrations.lmms_eval.__main__ import main

    assert main(["--path"]) == 0 and capsys.readouterr().out.strip() == str(integration.tasks_path())
    assert main(["--list"]) == 0 and capsys.readouterr().out.split() == integration.task_names()
    assert set(integration.task_names()) == {*MIRRORED, *(f"{task}_extra" for task in EXTRA)}


def test_lmms_eval_indexes_and_loads_every_task():
    """lmms-eval's TaskManager finds each task through --include_path and resolves each config's functions."""
    require_lmms_eval()
    from lmms_eval import utils
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=str(integration.tasks_path()), include_defaults=False)
    assert sorted(manager.all_subtasks) == sorted(integration.task_names())
    for task in manager.all_subtasks:
        config = utils.load_yaml_config(manager.task_index[task]["yaml_path"], mode="full")
        assert callable(config["process_results"]) and callable(config["doc_to_visual"])
        for entry in config["metric_list"]:
            assert callable(entry["aggregation"]) or entry["aggregation"] == "mean"


@pytest.mark.parametrize("task", sorted(integration.task_names()))
def test_same_documents_prompt_and_generation_settings(task):
    require_lmms_eval()
    own, theirs = own_config(task), lmms_config(mirrored(task))
    for field in SAME_FIELDS:
        assert own.get(field) == theirs.get(field), field
    for field in ("doc_to_text", "doc_to_target"):  # a literal is the same literal; a function is compared below
        if not is_function(theirs[field]):
            assert own[field] == theirs[field], field
    # Every metric lmms-eval reports, under its name and direction (AMBER's Cog: see test_amber_cog_direction).
    own_metrics = {entry["metric"]: entry["higher_is_better"] for entry in own["metric_list"]}
    for entry in theirs["metric_list"]:
        if task == "capeval_amber_g" and entry["metric"] == "amber_cog":
            continue
        assert own_metrics[entry["metric"]] == entry["higher_is_better"], entry["metric"]


def test_amber_cog_direction():
    """Cog (hallucinated objects named / hallucination objects) is lower-is-better in AMBER's paper and code;
    lmms-eval's amber_g marks it higher-is-better. capeval_amber_g follows the paper, capeval_amber_g_lmms lmms-eval."""
    require_lmms_eval()
    directions = {task: {e["metric"]: e["higher_is_better"] for e in own_config(task)["metric_list"]}["amber_cog"]
                  for task in ("capeval_amber_g", "capeval_amber_g_lmms")}
    theirs = {e["metric"]: e["higher_is_better"] for e in lmms_config("amber_g/amber_g.yaml")["metric_list"]}["amber_cog"]
    assert directions == {"capeval_amber_g": False, "capeval_amber_g_lmms": True} and theirs is True


def documents():
    image = Image.new("RGB", (8, 6), (200, 30, 40))
    return [{"image": image, "question_id": "COCO_val2014_000000391895.jpg", "id": 7, "answer": ["a man on a moped"],
             "task_type": "generative", "text": "Is there a dog?"},
            {"image": image.convert("L"), "question_id": "5", "id": 8, "answer": ["x"], "task_type": "discriminative",
             "text": "Is there a cat?"}]


@pytest.mark.parametrize("folder, theirs, ours, kwargs", [
    ("coco_cap", "coco_doc_to_visual", "coco_doc_to_visual", None),
    ("coco_cap", "coco_doc_to_text", "coco_doc_to_text", None),
    ("flickr30k", "flickr_doc_to_visual", "coco_doc_to_visual", None),
    ("flickr30k", "flickr_doc_to_text", "coco_doc_to_text", None),
    ("nocaps", "nocaps_doc_to_visual", "coco_doc_to_visual", None),
    ("nocaps", "nocaps_doc_to_text", "prompt_doc_to_text", {"prompt": "P"}),
    ("textcaps", "textcaps_doc_to_visual", "coco_doc_to_visual", None),
    ("textcaps", "textcaps_doc_to_text", "prompt_doc_to_text", {"prompt": "P"}),
    ("coco_cap_chair", "coco_cap_chair_doc_to_visual", "num_image_doc_to_visual", None),
    ("coco_cap_chair", "coco_cap_chair_doc_to_text", "chair_doc_to_text", None),
    ("amber_g", "amber_g_doc_to_visual", "num_image_doc_to_visual", None),
    ("amber_g", "amber_g_doc_to_text", "amber_g_doc_to_text", None),
])
def test_document_functions_equal_lmms_evals(folder, theirs, ours, kwargs, monkeypatch):
    require_lmms_eval()
    module = lmms_utils(folder, monkeypatch)
    for num_image in ("1", "2"):
        monkeypatch.setenv("NUM_IMAGE", num_image)
        for doc in documents():
            extra = {} if kwargs is None else {"lmms_eval_specific_kwargs": kwargs}
            got, want = getattr(caption_tasks, ours)(doc, **extra), getattr(module, theirs)(doc, **extra)
            if isinstance(want, list):
                assert [(i.mode, i.size, i.tobytes()) for i in got] == [(i.mode, i.size, i.tobytes()) for i in want]
            else:
                assert got == want


def test_detailcaps_documents_equal_lmms_evals(monkeypatch):
    import io

    require_lmms_eval()
    module = lmms_utils("detailcaps", monkeypatch)
    buffer = io.BytesIO()
    Image.new("RGB", (5, 4), (1, 2, 3)).save(buffer, format="PNG")
    doc = {"binary": buffer.getvalue(), "GT_Caption_GPT4O": "a", "GT_Caption_GPT4V": "b", "GT_Caption_Gemini15Pro": "c", "image": "x.jpg"}
    assert caption_tasks.detailcaps_doc_to_target(doc) == module.detailcaps_doc_to_target(doc)
    assert caption_tasks.detailcaps_doc_to_visual(doc)[0].tobytes() == module.detailcaps_doc_to_visual(doc)[0].tobytes()
    kwargs = lmms_config("detailcaps/detailcaps.yaml")["lmms_eval_specific_kwargs"]["default"]
    assert caption_tasks.prompt_doc_to_text(doc, kwargs) == module.detailcaps_doc_to_text(doc, kwargs)


def test_chair_and_amber_aggregations_carry_their_own_names():
    # lmms-eval bootstraps a standard error (100,000 calls) for aggregations named like its own CHAIR and AMBER ones.
    from capeval.integrations.lmms_eval import caption_tasks

    names = ["chair_s", "chair_i", "chair_recall", "original_chair_s", "original_chair_i", "original_chair_recall",
             *(f"{prefix}{key}_of_amber" for prefix in ("", "lmms_") for key in ("chair", "cover", "hal", "cog"))]
    assert {name: getattr(caption_tasks, name).__name__ for name in names} == {name: name for name in names}
