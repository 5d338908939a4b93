"""hub/amber: the generative set built from AMBER's files (load_benchmark and datasets.load_dataset give the same
rows), and capeval benchmark --dataset amber on a results file in AMBER's format."""

import json

import datasets
import pytest
import yaml

from fixtures.amber import DATA_DIR, responses
from capeval.benchmarks import hub_dir, load_benchmark
from capeval.benchmarks.amber import amber_features, evaluate_results, read_results, write_amber_folder
from capeval.cli import main
from capeval.scoring.amber import AmberDataError, NounExtractor

ANNOTATIONS = json.loads((DATA_DIR / "annotations.json").read_text())


def card():
    return yaml.safe_load((hub_dir() / "amber" / "README.md").read_text(encoding="utf-8").split("---\n")[1])


def test_load_benchmark_builds_the_generative_rows_from_the_data_folder():
    ds = load_benchmark("amber", data_dir=DATA_DIR)
    assert ds.num_rows == 9 and ds["id"] == list(range(1, 10))  # the three discriminative questions are left out
    assert ds[0] == {"id": 1, "image_file": "AMBER_1.jpg", "query": "Describe this image.",
                     "truth": ["dog", "sofa", "lamp", "window"], "hallu": ["cat", "table", "person"]}
    assert ds[4]["truth"] == ["man", "woman", "chair", "chair"]  # repeats kept
    assert [{k: row[k] for k in ("id", "truth", "hallu")} for row in ds] == \
        [{k: a[k] for k in ("id", "truth", "hallu")} for a in ANNOTATIONS if a["type"] == "generative"]


def test_the_written_folder_loads_with_datasets_with_the_same_rows_and_the_cards_features(tmp_path):
    folder = write_amber_folder(tmp_path / "amber", data_dir=DATA_DIR)
    loaded = datasets.load_dataset(str(folder), split="test")
    assert loaded.to_list() == load_benchmark("amber", data_dir=DATA_DIR).to_list()
    assert loaded.features == amber_features()
    meta = card()
    assert [f["name"] for f in meta["dataset_info"]["features"]] == list(amber_features())
    assert datasets.Features._from_yaml_list(meta["dataset_info"]["features"]) == amber_features()
    assert meta["license"] == "apache-2.0" and meta["dataset_info"]["splits"][0]["num_examples"] == 1004


def test_offline_without_the_files_loading_says_what_to_download(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path))
    with pytest.raises(AmberDataError, match="download annotations.json, relation.json, safe_words.txt, metrics.txt from "
                                             "the data/ folder of https://github.com/junyangwang0410/AMBER"):
        load_benchmark("amber")
    with pytest.raises(ValueError, match="data_dir: benchmark 'thumb' ships with capeval"):
        load_benchmark("thumb", data_dir=DATA_DIR)


@pytest.fixture
def fixture_tags(monkeypatch):
    """Every NounExtractor reads the fixture's tags and lemmas (NLTK's data is not installed in tests)."""
    items = responses()
    tagged = {r["response"]: [(word, tag) for word, tag, _ in r["tagged"]] for r in items}
    lemmas = {word: lemma for r in items for word, _, lemma in r["tagged"] if lemma is not None}
    monkeypatch.setattr(NounExtractor, "tag", lambda self, text: tagged[text])
    monkeypatch.setattr(NounExtractor, "lemmatize", lambda self, word: lemmas[word])


@pytest.fixture
def results_file(tmp_path):
    """The fixture's 36 responses in AMBER's results format, with two answers to discriminative questions."""
    entries = [{"id": r["id"], "response": r["response"]} for r in responses()] + [{"id": 10, "response": "Yes"},
                                                                                    {"id": 11, "response": "No"}]
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(entries))
    return path


def test_a_results_file_scores_its_generative_responses(small_spacy, fixture_tags, results_file):
    from capeval.scoring.amber import AmberScorer

    result = evaluate_results(results_file, AmberScorer(data_dir=str(DATA_DIR), spacy_model=small_spacy))
    assert {k: result[k] for k in ("amber_chair", "amber_cover", "amber_hal", "amber_cog")} == \
        {"amber_chair": 34.8, "amber_cover": 47.7, "amber_hal": 50.0, "amber_cog": 25.9}
    assert (result["descriptions"], result["discriminative_left_out"]) == (36, 2)
    assert result["per_description"][2] == {"id": 1, "amber_chair": pytest.approx(200 / 3), "amber_cover": 25.0,
                                            "amber_hal": 100.0, "amber_cog": pytest.approx(200 / 3),
                                            "objects": ["cat", "dog", "table"], "hallucinated": ["cat", "table"]}


@pytest.mark.parametrize("content, message", [
    ('{"id": 1}', r"should hold a non-empty JSON list"),
    ("[]", r"should hold a non-empty JSON list"),
    ('[{"id": 1, "response": "a"}, {"id": "2", "response": "b"}]', r"entry 1: expected \{\"id\": <int>, \"response\": <str>\}"),
    ('[{"id": 1, "text": "a"}]', r"entry 0: expected"),
    ("[{", r"is not a JSON file"),
])
def test_a_malformed_results_file_is_named_with_its_entry(tmp_path, content, message):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_results(path)
    with pytest.raises(ValueError, match="no such results file"):
        read_results(tmp_path / "missing.json")


def test_ids_outside_the_annotations_or_no_generative_response_are_refused(small_spacy, tmp_path):
    from capeval.scoring.amber import AmberScorer

    scorer = AmberScorer(data_dir=str(DATA_DIR), spacy_model=small_spacy)
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"id": 1, "response": "a"}, {"id": 40, "response": "b"}]))
    with pytest.raises(ValueError, match=r"ids \[40\] are not in AMBER's annotations \(ids 1 to 12\)"):
        evaluate_results(path, scorer)
    path.write_text(json.dumps([{"id": 10, "response": "Yes"}]))
    with pytest.raises(ValueError, match=r"has no response to a generative image \(ids 1 to 9\)"):
        evaluate_results(path, scorer)


def test_capeval_benchmark_prints_and_writes_the_four_numbers(small_spacy, fixture_tags, results_file, tmp_path, capsys):
    spec = f"amber:data_dir={DATA_DIR},spacy_model={small_spacy}"
    code = main(["benchmark", "--metric", spec, "--metric", f"{spec},similarity_threshold=0.7", "--dataset", "amber",
                 "--results", str(results_file), "--output", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    assert f"| {spec} | 34.8 | 47.7 | 50.0 | 25.9 | 36 |" in out
    assert f"| {spec},similarity_threshold=0.7 | 20.2 | 50.4 | 36.1 | 33.3 | 36 |" in out
    assert "2 answers to discriminative questions left out" in out
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["amber_chair"] for r in written] == [34.8, 20.2] and len(written[0]["per_description"]) == 36
    assert (tmp_path / "out" / "results.md").read_text().startswith("| metric | CHAIR | Cover | Hal | Cog | descriptions |")


@pytest.mark.parametrize("arguments, message", [
    (["--metric", "amber", "--dataset", "amber"], "--dataset amber needs --results FILE"),
    (["--metric", "bleu", "--dataset", "amber", "--results", "r.json"], "--metric bleu: AMBER's generative set is scored by the amber metric"),
    (["--metric", "amber", "--dataset", "amber", "--dataset", "thumb", "--results", "r.json"], "run it alone"),
    (["--metric", "amber", "--dataset", "amber", "--results", "missing.json", "--option", f"data_dir={DATA_DIR}"],
     "missing.json: no such results file"),
])
def test_capeval_benchmark_amber_usage_errors(arguments, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["benchmark", *arguments]) == 2
    assert message in capsys.readouterr().err
