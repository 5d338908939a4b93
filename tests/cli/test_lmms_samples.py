"""``capeval score --lmms-samples``: lmms-eval's logged samples (``--log_samples``) re-scored with capeval's metrics,
the same numbers as the same captions given with ``--input``; a file that is not one caption task's samples is one
line and exit 2."""

import doctest
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from capeval.caption_files import CaptionFileError
from capeval.cli import main
from capeval.integrations.lmms_eval.samples import image_files, read_lmms_samples
from fixtures import ASSETS, REPO

LOGS = ASSETS / "lmms_eval"
COCO = LOGS / "20260101_120000_samples_coco2017_cap_val.jsonl"   # lmms-eval 0.7.x
COCO_03 = LOGS / "20240601_120000_samples_coco2017_cap_val.jsonl"  # lmms-eval 0.3.x: 'doc', 'arguments', lists
CHAIR = LOGS / "20260101_120000_samples_coco_cap_chair.jsonl"
MME = LOGS / "20260101_120000_samples_mme.jsonl"
TEXT_METRICS = ["bleu", "cider", "rouge", "meteor"]


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def scored(tmp_path, capsys, *arguments):
    """``capeval score ARGUMENTS --output``: (what it printed, what it wrote)."""
    output = tmp_path / f"scores{len(list(tmp_path.glob('scores*')))}.json"
    assert main(["score", *map(str, arguments), "--output", str(output)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out, json.loads(output.read_text())


def as_input(tmp_path, rows, **extra):
    """The rows as ``--input`` JSON lines (candidate, references, image id)."""
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps({"candidate": row["candidate"], "references": row["references"],
                                          "image_id": row["image_id"], **{key: value[i] for key, value in extra.items()}})
                              for i, row in enumerate(rows)))
    return path


def test_the_readers_examples():
    """Run here too: tests/core's doctest run finds the module once the lmms_eval folder is a package."""
    from capeval.integrations.lmms_eval import samples

    result = doctest.testmod(samples, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0


def test_the_reader_takes_captions_references_and_ids_as_logged():
    logged = read_lmms_samples(COCO)
    samples = lines(COCO)
    assert logged.task == "coco2017_cap_val"
    assert [row["candidate"] for row in logged.rows] == [sample["filtered_resps"] for sample in samples]
    assert [row["references"] for row in logged.rows] == [sample["coco_CIDEr"]["answer"] for sample in samples]
    assert [row["image_id"] for row in logged.rows] == [391895, 522418, 184613, 318219]
    assert read_lmms_samples(COCO_03).rows == logged.rows  # 0.3.x's lists and 'doc' read as 0.7.x's strings


def test_text_metrics_print_every_asked_metric_equal_to_the_same_captions_as_input(tmp_path, capsys):
    metrics = [argument for name in TEXT_METRICS for argument in ("--metric", name)]
    out, logged = scored(tmp_path, capsys, "--lmms-samples", COCO, *metrics)
    assert f"Scoring 4 captions ({COCO}: lmms-eval samples of coco2017_cap_val)." in out
    assert "- bleu: 0.2262 corpus, 0.0859 per-caption mean (Bleu_1 0.8684, Bleu_2 0.7147, Bleu_3 0.4084, Bleu_4 0.2262)" in out
    assert "- rouge: 0.5970 corpus = per-caption mean" in out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("- ")] == [f"- {name}" for name in TEXT_METRICS]
    assert "| 391895 |" in out  # the per-caption table names each sample by its image id
    _, given = scored(tmp_path, capsys, "--input", as_input(tmp_path, read_lmms_samples(COCO).rows), *metrics)
    assert logged["system"] == given["system"] and logged["scores"] == given["scores"]
    assert logged["system"]["cider"] == pytest.approx(1.5679, abs=5e-5)
    assert [image["image_id"] for image in logged["images"]] == [391895, 522418, 184613, 318219]
    _, older = scored(tmp_path, capsys, "--lmms-samples", COCO_03, *metrics)
    assert older["system"] == logged["system"]


def test_chair_takes_the_logged_image_ids_and_equals_lmms_evals_own_aggregation(tmp_path, capsys, monkeypatch):
    """coco_cap_chair logs each image's COCO objects ('answer') and the objects the caption names ('pred'): CHAIR given
    those objects by the logged image ids gives lmms-eval's CHAIR_s, CHAIR_i and recall of the same entries."""
    monkeypatch.chdir(tmp_path)
    entries = [sample["coco_cap_chair_s"] for sample in lines(CHAIR)]
    (tmp_path / "objects.json").write_text(json.dumps({str(entry["image_id"]): entry["answer"] for entry in entries}))
    out, written = scored(tmp_path, capsys, "--lmms-samples", CHAIR, "--metric", "chair:variant=original,objects=objects.json")
    hallucinated = [len(set(entry["pred"]) - set(entry["answer"])) for entry in entries]
    named = [len(entry["pred"]) for entry in entries]
    recalled = [len(set(entry["pred"]) & set(entry["answer"])) for entry in entries]
    assert written["system"]["chair_s"] == pytest.approx(np.mean([count > 0 for count in hallucinated])) == pytest.approx(2 / 3)
    assert written["system"]["chair_i"] == pytest.approx(sum(hallucinated) / sum(named)) == pytest.approx(2 / 11)
    assert written["system"]["chair_recall"] == pytest.approx(sum(recalled) / sum(len(entry["answer"]) for entry in entries)) == 0.9
    assert "| 391895 |" in out


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_documented_jq_line_writes_the_logged_objects_chair_takes(tmp_path):
    """docs/command-line.md's jq line: the objects coco_cap_chair logged, by image id (as the test above builds them)."""
    line = re.search(r"^jq .*$", (REPO / "docs" / "command-line.md").read_text(), re.MULTILINE).group(0)
    shutil.copy(CHAIR, tmp_path / "samples_coco_cap_chair.jsonl")
    subprocess.run(line, shell=True, cwd=tmp_path, check=True)
    entries = [sample["coco_cap_chair_s"] for sample in lines(CHAIR)]
    assert json.loads((tmp_path / "objects.json").read_text()) == {str(entry["image_id"]): entry["answer"] for entry in entries}


@pytest.mark.slow
@pytest.mark.models
def test_an_image_metric_finds_each_logged_id_in_the_images_folder(tmp_path, capsys, spread_clip):
    """CLIP-S over the logged captions with --images: each image id's file by its name (COCO 2014 and 2017 names,
    <id>.<ext>), the same scores as the files named in --input rows."""
    from PIL import Image

    folder = tmp_path / "images"
    folder.mkdir()
    names = ["COCO_val2014_000000391895.jpg", "000000522418.jpg", "184613.png", "318219"]
    for seed, name in enumerate(names):
        pixels = np.random.default_rng(seed).integers(0, 255, (48, 64, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / name, format="PNG" if "." not in name else None)
    (folder / "notes.txt").write_text("not an image of the run")
    spec = f"clip_score:model_name={spread_clip}"
    _, logged = scored(tmp_path, capsys, "--lmms-samples", COCO, "--metric", spec, "--images", folder)
    _, given = scored(tmp_path, capsys, "--input", as_input(tmp_path, read_lmms_samples(COCO).rows, image=names),
                      "--metric", spec, "--images", folder)
    (about,) = logged["metrics"].values()
    column = about["column"]
    assert logged["scores"] == given["scores"] and len(set(logged["scores"][column])) == 4


def test_each_image_id_names_one_file(tmp_path):
    for name in ("000000000007.jpg", "7.png", "COCO_val2014_000000000008.jpg", "x9.jpg"):
        (tmp_path / name).touch()
    with pytest.raises(CaptionFileError, match=r"image id 7 names 2 files \['000000000007.jpg', '7.png'\]"):
        image_files([7], tmp_path)
    assert image_files([8, "x9.jpg", "x9"], tmp_path) == ["COCO_val2014_000000000008.jpg", "x9.jpg", "x9.jpg"]
    with pytest.raises(CaptionFileError, match=r"no file for 1 image id\(s\), e.g. \[9\]"):
        image_files([8, 9], tmp_path)


def rewritten(tmp_path, change, source=COCO, name=COCO.name):
    """``source``'s lines after ``change(lines)`` (a list of JSON objects, or text), written as ``name``."""
    changed = change(lines(source))
    path = tmp_path / name
    path.write_text(changed if isinstance(changed, str) else "".join(json.dumps(line) + "\n" for line in changed))
    return path


def without(field, number):
    return lambda samples: [{k: v for k, v in sample.items() if not (k == field and i == number)} for i, sample in enumerate(samples, 1)]


BAD_FILES = {
    "not JSON lines": (lambda samples: "".join(json.dumps(s) + "\n" for s in samples[:2]) + '{"doc_id": 2, "target\n',
                       ":3: not JSON (Unterminated string"),
    "empty": (lambda samples: "\n\n", ": empty: no logged samples"),
    "no filtered_resps": (without("filtered_resps", 2), ":2: no 'filtered_resps': not a sample lmms-eval's --log_samples writes"),
    "no doc_id": (without("doc_id", 1), ":1: no 'doc_id': not a sample"),
    "a list line": (lambda samples: [*samples[:3], ["a dog"]], ":4: list, not a logged sample"),
    "mixed tasks": (lambda samples: samples[:2] + lines(CHAIR)[2:], ":3: another task's sample (it logs coco_cap_chair_i"),
    "two runs": (lambda samples: samples + samples[:1], ":5: doc_id 0 again (first on line 1): one run's samples per file"),
    "repeats": (lambda samples: [{**s, "filtered_resps": ["a dog", "a cat"]} for s in samples],
                ":1: 2 responses in 'filtered_resps' (lmms-eval's repeats)"),
    "empty caption": (lambda samples: [{**s, "filtered_resps": " "} for s in samples], ":1 'filtered_resps': empty caption"),
    "answer not a list": (lambda samples: [{**s, **{k: {**v, "answer": 3} for k, v in s.items() if k.startswith("coco_")}} for s in samples],
                          ":1: 'answer' is int, expected the reference captions"),
    "image id a list": (lambda samples: [{**s, **{k: {**v, "image_id": [1]} for k, v in s.items() if k.startswith("coco_")}} for s in samples],
                        ":1: image id [1], expected a number or a file name"),
    "doc_id a list": (lambda samples: [{**s, "doc_id": [0]} for s in samples], ":1: doc_id [0], expected the document's index"),
    "aggregated results": (lambda samples: json.dumps({"results": {"coco2017_cap_val": {}}, "configs": {}}),
                           ": lmms-eval's aggregated results, not its logged samples"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_samples_file_is_one_line_and_exit_2(case, tmp_path, capsys):
    change, message = BAD_FILES[case]
    path = rewritten(tmp_path, change)
    assert main(["score", "--lmms-samples", str(path), "--metric", "bleu"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"capeval score: {path}{message}"), captured.err
    assert captured.err.count("\n") == 1 and "Scoring" not in captured.out


@pytest.mark.parametrize("arguments, message", [
    ([MME, "--metric", "bleu"], f"{MME}: the samples of mme are no caption task's: they log mme_perception_score, none "
                                "with the 'pred' and 'image_id' or 'answer' that lmms-eval's caption tasks log"),
    ([CHAIR, "--metric", "bleu"], f"bleu need(s) reference captions, and {CHAIR} logs none: score it with metrics that "
                                  "take none, e.g. clip_score or pac_score (with --images), chair with annotations= or objects="),
    ([COCO, "--input", COCO], "--lmms-samples is the input: leave out --input, --results and --annotations"),
    ([LOGS / "missing.jsonl"], f"{LOGS / 'missing.jsonl'}: no such file"),
    ([COCO, "--metric", "clip_score", "--images", LOGS], f"--images {LOGS}: no file for 4 image id(s), e.g. [391895, 522418, 184613]"),
    ([COCO, "--metric", "clip_score", "--images", LOGS / "none"], f"--images {LOGS / 'none'}: no such folder"),
])
def test_another_tasks_samples_and_misused_flags_are_one_line(arguments, message, capsys):
    assert main(["score", "--lmms-samples", *map(str, arguments)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"capeval score: {message}") and err.count("\n") == 1, err


def test_a_file_not_named_as_lmms_eval_names_it_is_named_in_the_message(tmp_path, capsys):
    renamed = shutil.copy(MME, tmp_path / "mme_run.jsonl")
    assert main(["score", "--lmms-samples", str(renamed), "--metric", "bleu"]) == 2
    assert capsys.readouterr().err.startswith(f"capeval score: {renamed}: the samples of 'mme_run.jsonl' (not named "
                                              "*_samples_<task>.jsonl) are no caption task's: they log mme_perception_score")
    json_file = shutil.copy(COCO, tmp_path / "20260101_120000_samples_coco.json")
    assert read_lmms_samples(json_file).task == "'20260101_120000_samples_coco.json' (not named *_samples_<task>.jsonl)"


def test_samples_that_log_no_image_id_say_so_for_an_image_metric(tmp_path, capsys):
    """amber_g logs AMBER's counts, and its image's id only in 'doc' (left out from 0.4 on)."""
    counts = {"chair_score": 0, "chair_num": 2, "safe_cover_score": 1, "safe_cover_num": 2, "hallu_cover_score": 0,
              "hallu_cover_num": 0, "non_hallu_score": [], "non_hallu_num": 0}
    path = tmp_path / "20260101_120000_samples_amber_g.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "target": "['dog']", "filtered_resps": "A dog on grass.", "doc_hash": "00",
                                **{f"amber_{name}": counts for name in ("chair", "cover", "hal", "cog")}, "input": "Describe this image"}))
    assert read_lmms_samples(path).rows == [{"doc_id": 0, "candidate": "A dog on grass.", "references": []}]
    assert main(["score", "--lmms-samples", str(path), "--metric", "clip_score", "--images", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"capeval score: {path}:1 logs no image id, and clip_score need(s) each sample's image "
                                       "(lmms-eval logs amber_g's only in its 'doc', which 0.4 and later leave out)\n")
    older = tmp_path / "20240601_120000_samples_amber_g.jsonl"
    shutil.copy(path, older)
    older.write_text(json.dumps({**json.loads(path.read_text()), "doc": {"question_id": 17, "task_type": "generative"}}))
    assert read_lmms_samples(older).rows[0]["image_id"] == 17


@pytest.mark.slow
def test_what_lmms_evals_own_code_writes_is_read_as_the_fixture_is(tmp_path):
    """lmms-eval's evaluator and tracker, unchanged, log coco2017_cap_val's task functions on the fixture's documents and
    captions: the reader takes the same rows from that file as from the fixture written by the project."""
    evaluator = pytest.importorskip("lmms_eval.evaluator", reason="lmms-eval is not installed (capeval's lmms extra)")
    from types import SimpleNamespace

    from lmms_eval.api.instance import Instance, TokenCounts
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker
    from lmms_eval.tasks.coco_cap import utils as coco

    task = SimpleNamespace(process_results=coco.coco_process_result, doc_to_target=lambda doc: doc["answer"],
                           config=SimpleNamespace(repeats=1))
    logged = []
    for sample in lines(COCO_03):  # its 'doc' is the document's text fields
        doc, caption = sample["doc"], sample["filtered_resps"][0]
        request = Instance("generate_until", (coco.coco_doc_to_text(doc), {"max_new_tokens": 64}), 0,
                           {"task": "coco2017_cap_val", "doc_id": sample["doc_id"], "repeats": 1}, resps=[caption],
                           filtered_resps={"none": caption}, token_counts=[TokenCounts(input_tokens=590, output_tokens=12)])
        request.doc = doc
        logged.append(evaluator._process_document_results((sample["doc_id"], doc, [request]), task=task, filter_key="none",
                                                          reasoning_tags=None, log_samples=True).logged_sample)
    tracker = EvaluationTracker(output_path=str(tmp_path))
    tracker.general_config_tracker.model_name_sanitized, tracker.date_id = "tiny", "20260101_120000"
    tracker.save_results_samples("coco2017_cap_val", logged)
    (written,) = (tmp_path / "tiny").glob("*_samples_coco2017_cap_val.jsonl")
    assert read_lmms_samples(written).rows == read_lmms_samples(COCO).rows
    assert [list(line) for line in lines(written)] == [list(line) for line in lines(COCO)]  # the same fields, in order


@pytest.mark.parametrize("name", ["COCO_val2014_000000000008.jpg", "000000000008.jpg", "COCO_train2014_000000000008.PNG",
                                  "8.jpeg"])
def test_an_image_file_is_found_by_the_id_chair_reads_from_its_name(tmp_path, name):
    """One rule for the COCO id a file name carries: --images finds the file CHAIR's image_key reads id 8 from."""
    from capeval.scoring.chair import image_key

    (tmp_path / name).touch()
    (tmp_path / "img_000000000008.webp").touch()  # no COCO name: never taken for id 8
    assert image_key(name) == 8
    assert image_files([8], tmp_path) == [name]
