"""The amber metric as users call it: the module, image ids in every accepted form, shards that merge exactly, the
hashcode's data id, and one clear error for each bad input."""

import hashlib
import shutil

import pyarrow as pa
import pytest

import capeval
from fixtures.amber import DATA_DIR, SMALL_SPACY, responses, with_fixture_tags
from capeval.distributed import score_batch, summarize
from capeval.models import ModelUnavailableError
from capeval.scoring.amber import AMBER_FILES, AmberDataError, AmberScorer

ITEMS = responses()
PREDICTIONS = [r["response"] for r in ITEMS]
IDS = [r["id"] for r in ITEMS]


def test_the_module_returns_the_four_numbers_and_the_objects(small_spacy):
    amber = capeval.load("amber", data_dir=str(DATA_DIR), spacy_model=small_spacy)
    with_fixture_tags(amber.scorer)
    result = amber.compute(predictions=PREDICTIONS, images=IDS)
    assert result["amber_chair"] == 34.8 and result["means"] == {"amber_cover": 47.7, "amber_hal": 50.0, "amber_cog": 25.9}
    assert len(result["scores"]) == len(result["amber_cover"]) == 36
    # "A cat and a dog sit on a table." (image 1: truth dog, sofa, lamp, window; hallu cat, table, person)
    assert result["amber_objects"][2] == ["cat", "dog", "table"] and result["amber_hallucinated"][2] == ["cat", "table"]
    assert result["scores"][2] == pytest.approx(200 / 3) and result["amber_cover"][2] == 25.0
    assert result["amber_hal"][2] == 100.0 and result["amber_cog"][2] == pytest.approx(200 / 3)
    # "Dog on Sofa": capitalised proper nouns keep their capital, so no AMBER object is named.
    assert result["amber_objects"][6] == [] and result["scores"][6] == 0.0
    assert result["hashcode"].startswith("amber(data=local@") and f"spacy_model={SMALL_SPACY}" in result["hashcode"]


def test_capeval_evaluate_passes_the_images(scorer):
    result = capeval.evaluate(PREDICTIONS[:4], images=IDS[:4], metrics=[scorer])
    assert list(result.per_caption.columns) == ["amber_chair", "amber_cover", "amber_hal", "amber_cog"]
    assert result.corpus == scorer.score(PREDICTIONS[:4], images=IDS[:4]).corpus


def test_every_form_of_image_gives_the_same_scores(scorer, tmp_path):
    forms = [IDS, [str(i) for i in IDS], [f"AMBER_{i}" for i in IDS], [f"AMBER_{i}.jpg" for i in IDS],
             [str(tmp_path / "image" / f"AMBER_{i}.jpg") for i in IDS]]
    results = [scorer.score(PREDICTIONS, images=images) for images in forms]
    assert all(r == results[0] and r.corpus == results[0].corpus for r in results)


@pytest.mark.parametrize("order", ["forward", "reversed", "interleaved"])
def test_shards_in_any_order_merge_to_the_whole_calls_numbers(scorer, order):
    whole = scorer.score(PREDICTIONS, images=IDS)
    indices = {"forward": list(range(36)), "reversed": list(range(35, -1, -1)),
               "interleaved": [*range(0, 36, 3), *range(1, 36, 3), *range(2, 36, 3)]}[order]
    shards = [indices[:5], indices[5:6], indices[6:20], indices[20:]]
    statistics = [row for shard in shards
                  for row in scorer.score([PREDICTIONS[i] for i in shard], images=[IDS[i] for i in shard]).sufficient_statistics]
    summed = [[sum(column) for column in zip(*statistics)]]
    assert scorer.corpus_from_sufficient_statistics(statistics) == scorer.corpus_from_sufficient_statistics(summed) == whole.corpus
    exact = AmberScorer(data_dir=str(DATA_DIR), rounded=False)
    assert exact.corpus_from_sufficient_statistics(summed) == exact.corpus_from_sufficient_statistics(whole.sufficient_statistics)


def test_the_distributed_summary_merges_scored_blocks(scorer):
    table = pa.table({"candidate": PREDICTIONS, "image": IDS})
    blocks = [score_batch(scorer, table.slice(0, 10)), score_batch(scorer, table.slice(10, 7)), score_batch(scorer, table.slice(17))]
    summary = summarize(blocks, scorer)
    assert summary["rows"] == 36 and summary["failed"] == 0
    assert summary["corpus"] == scorer.score(PREDICTIONS, images=IDS).corpus == {
        "amber_chair": 34.8, "amber_cover": 47.7, "amber_hal": 50.0, "amber_cog": 25.9}


def test_the_hashcode_names_the_released_data_wherever_it_is(scorer, tmp_path, monkeypatch):
    copy = tmp_path / "data"
    shutil.copytree(DATA_DIR, copy)
    moved = AmberScorer(data_dir=str(copy), spacy_model=SMALL_SPACY)
    assert moved.options() == scorer.options() and scorer.options()["data"].startswith("local@")
    (copy / "safe_words.txt").write_text("light\n")
    assert AmberScorer(data_dir=str(copy)).options()["data"] != scorer.options()["data"]
    digests = {name: hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() for name in AMBER_FILES}
    monkeypatch.setattr("capeval.scoring.amber.AMBER_FILES", digests)
    assert scorer.options()["data"] == "released@534babf" == AmberScorer().options()["data"]
    assert AmberScorer(data_dir=str(tmp_path / "nowhere")).options()["data"] == "nowhere"


# --------------------------------------------------------------------------- bad input


def test_without_images_the_error_says_how_to_give_them(scorer):
    with pytest.raises(ValueError, match=r"AMBER needs each description's AMBER image: pass images=\[id, ...\]"):
        scorer.score(PREDICTIONS[:1])


def test_an_image_that_names_no_amber_id_is_refused(scorer):
    with pytest.raises(ValueError, match=r"images\[1\] = 'dog.jpg': AMBER names an image by its id"):
        scorer.score(PREDICTIONS[:2], images=[1, "dog.jpg"])


@pytest.mark.parametrize("image, message", [(13, r"images\[0\]: AMBER id 13 is not in .*annotations.json \(ids 1 to 12\)"),
                                            (0, r"AMBER id 0 is not in"),
                                            ("AMBER_10.jpg", r"images\[0\]: AMBER id 10 is a discriminative-attribute-state question")])
def test_an_id_not_in_the_generative_annotations_is_refused(scorer, image, message):
    with pytest.raises(ValueError, match=message):
        scorer.score(PREDICTIONS[:1], images=[image])


def test_a_missing_data_folder_says_what_to_download_and_where(tmp_path):
    scorer = AmberScorer(data_dir=str(tmp_path))
    with pytest.raises(AmberDataError, match=rf"AMBER's data folder '{tmp_path}' lacks \['annotations.json', 'relation.json', "
                                             r"'safe_words.txt', 'metrics.txt'\]: download .* from the data/ folder of "
                                             rf"https://github.com/junyangwang0410/AMBER \(commit 534babf\) into {tmp_path}"):
        scorer.score(PREDICTIONS[:1], images=[1])
    shutil.copytree(DATA_DIR, tmp_path / "partial")
    (tmp_path / "partial" / "relation.json").unlink()
    with pytest.raises(AmberDataError, match=r"lacks \['relation.json'\]"):
        AmberScorer(data_dir=str(tmp_path / "partial")).data()


def test_offline_without_the_released_files_the_error_says_what_to_download(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(AmberDataError, match=r"AMBER's data files are not available \(.*offline mode.*\); download "
                                             r"annotations.json, relation.json, safe_words.txt, metrics.txt from the data/ "
                                             r"folder of https://github.com/junyangwang0410/AMBER \(commit 534babf\) into a "
                                             r"folder and pass it as data_dir"):
        AmberScorer().score(PREDICTIONS[:1], images=[1])


@pytest.mark.parametrize("name, text, message", [
    ("annotations.json", "[{", r"annotations.json is not valid JSON"),
    ("annotations.json", "{}", r"annotations.json should hold a JSON list, not dict"),
    ("relation.json", "[]", r"relation.json should hold a JSON object, not list"),
    ("metrics.txt", "chair_score=0\n", r"metrics.txt has no initial value for \['chair_num'"),
])
def test_a_corrupt_data_file_is_named(tmp_path, name, text, message):
    shutil.copytree(DATA_DIR, tmp_path / "data")
    (tmp_path / "data" / name).write_text(text)
    with pytest.raises(AmberDataError, match=message):
        AmberScorer(data_dir=str(tmp_path / "data")).data()


def test_a_missing_spacy_model_says_how_to_install_it():
    scorer = with_fixture_tags(AmberScorer(data_dir=str(DATA_DIR), spacy_model="no_such_spacy_pipeline"))
    with pytest.raises(ModelUnavailableError, match=r"The spaCy pipeline 'no_such_spacy_pipeline' is not installed. AMBER's "
                                                    r"similarity uses en_core_web_lg \(python -m spacy download en_core_web_lg\)"):
        scorer.score(["A cat and a dog sit on a table."], images=[1])


@pytest.mark.parametrize("options, message", [({"similarity_threshold": 1.5}, r"similarity_threshold must be a number in \[-1.0, 1.0\]"),
                                              ({"similarity_threshold": "0.8"}, "similarity_threshold must be a number"),
                                              ({"rounded": 1}, "rounded must be True or False"),
                                              ({"spacy_model": ""}, "spacy_model must be a spaCy pipeline name or folder"),
                                              ({"data_dir": 3}, "data_dir must be a folder path or None")])
def test_bad_options_fail_when_the_metric_is_built(options, message):
    with pytest.raises(ValueError, match=message):
        capeval.load("amber", **options)
