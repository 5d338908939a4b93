"""The CAPTURE scorer and module: every option changes the scores and the hashcode, clear errors on bad options and
missing language data, the module's output, and where WordNet is read from."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import capeval
from capeval.models import ModelUnavailableError
from capeval.scoring import capture
from capeval.scoring.capture import CaptureScorer
from capeval.text import wordnet

from fixtures.english import requires_wordnet

SAMPLES = [("The image shows a red car, a white truck and other automobiles running on a city road. Pedestrians are walking "
            "on the side. Tall buildings can be seen under a clear blue sky.",
            ["The image depicts a busy city street with cars running in the foreground, including a red car and a white truck. "
             "The street is surrounded by green trees. In the background of the image, modern edifices and a clock tower "
             "stand under a clear blue sky.", "A red car and a white truck drive down a city street lined with trees. Tall "
             "buildings and a clock tower rise behind them."]),
           ("Two brown dogs play with a ball on the green grass. A woman in a blue jacket sits on a wooden bench near them. "
            "The scene is full of sunlight.", ["Two dogs running on a lawn while a person sits on a park bench."]),
           ("In the background, a kitchen counter holds a bowl of fruit and a silver kettle. The image has a warm atmosphere.",
            ["A kitchen with a fruit bowl, a steel kettle and a toaster on the counter. Sunlight comes through the window."]),
           ("A black cat sleeps on a sofa.", ["A cat is lying on the couch. A puppy is looking at it."])]
PREDICTIONS = [p for p, _ in SAMPLES]
REFERENCES = [r for _, r in SAMPLES]


@pytest.fixture(scope="module")
def other_encoder(tmp_path_factory, encoder_path):
    """The tiny encoder's folder with other random weights."""
    import torch
    from transformers import MPNetConfig, MPNetModel

    folder = tmp_path_factory.mktemp("other-encoder") / "encoder"
    shutil.copytree(encoder_path, folder)
    torch.manual_seed(7)
    MPNetModel(MPNetConfig.from_pretrained(folder)).eval().save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def other_parser(tmp_path_factory, fixtures):
    """A random (untrained) T5 with the tiny parser's words: other graphs."""
    from capeval.backbones.visual_t5 import save_random_t5

    words = sorted({w.strip(".,") for text in fixtures["graphs"] for w in text.split()} | {"(", ")", ",", "is"})
    return save_random_t5(tmp_path_factory.mktemp("other-parser"), words, seed=3, initializer_factor=5.0)


@pytest.fixture
def fixture_graphs(monkeypatch, fixtures):
    """The hand-written graphs in place of the parser (no model runs)."""
    from capeval.text.scene_graph import SceneGraphParser

    monkeypatch.setattr(SceneGraphParser, "__init__", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(SceneGraphParser, "parse", lambda self, sentences, **kwargs: [[fixtures["graphs"][s] for s in text]
                                                                                         for text in sentences])


def scores_and_hash(options: dict, samples: list) -> tuple[dict, str]:
    scorer = CaptureScorer(device="cpu", **options)
    scores = scorer.score([p for p, _ in samples], [r for _, r in samples])
    return {name: scores[name] for name in scores}, scorer.hashcode(scores)


def assert_changes(base: dict, changed: dict, samples: list = SAMPLES) -> None:
    (base_scores, base_hash), (changed_scores, changed_hash) = scores_and_hash(base, samples), scores_and_hash(changed, samples)
    assert base_hash != changed_hash
    assert any(max(abs(a - b) for a, b in zip(base_scores[name], changed_scores[name])) > 1e-6 for name in base_scores), changed


@requires_wordnet
@pytest.mark.models
@pytest.mark.parametrize("option, value", [("encoder_model", "fixture:other_encoder"), ("alpha", (0.7, 0.3)), ("gamma", 0.6),
                                           ("synonym_matching", False), ("soft_matching", False), ("stop_words", False)])
def test_every_option_changes_the_scores(recorded_language, fixture_graphs, parser_path, encoder_path, request, option, value):
    base = {"parser_model": parser_path, "encoder_model": encoder_path}
    if option == "alpha":
        changed = {**base, "alpha": value[0], "beta": value[1]}
    else:
        changed = {**base, option: request.getfixturevalue(value[8:]) if str(value).startswith("fixture:") else value}
    assert_changes(base, changed)


@requires_wordnet
@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("option", ["parser_model", "factual_version"])
def test_the_parser_options_change_the_scores(recorded_language, parser_path, encoder_path, other_parser, option):
    # FactualSceneGraph 0.7 cuts the last piece ("." ) of the longest sentence: the tiny parser then loses "sofa".
    base = {"parser_model": parser_path, "encoder_model": encoder_path}
    changed = {**base, **({"parser_model": other_parser} if option == "parser_model" else {"factual_version": "0.7"})}
    assert_changes(base, changed, SAMPLES[-1:])


def test_the_declaration_covers_every_option():
    from capeval.declaration import declared_options

    assert [(o.name, o.default) for o in declared_options(CaptureScorer)] == [
        ("parser_model", "lizhuang144/flan-t5-base-VG-factual-sg"), ("encoder_model", "sentence-transformers/all-mpnet-base-v2"),
        ("alpha", 0.5), ("beta", 0.5), ("gamma", 0.2), ("synonym_matching", True), ("soft_matching", True), ("stop_words", True),
        ("factual_version", "0.5"), ("device", None)]


@pytest.mark.parametrize("options, message", [
    ({"alpha": 0.6}, "alpha \\+ beta must be 1"),
    ({"alpha": 1.5, "beta": -0.5}, "alpha must be a number in \\[0.0, 1.0\\]"),
    ({"gamma": -0.1}, "gamma must be a number"),
    ({"gamma": float("nan")}, "gamma must be a number"),
    ({"synonym_matching": "yes"}, "synonym_matching must be True or False"),
    ({"factual_version": "0.6"}, "factual_version must be one of \\('0.5', '0.7'\\)"),
    ({"device": "gpu"}, "device must be None, 'cpu', 'cuda'"),
    ({"parser_model": ""}, "parser_model must be a hub id"),
])
def test_bad_options_raise_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        CaptureScorer(**options)


def test_an_encoder_that_does_not_pool_by_the_mean_is_refused(tmp_path, encoder_path):
    folder = tmp_path / "cls-encoder"
    shutil.copytree(encoder_path, folder)
    config = json.loads((folder / "1_Pooling" / "config.json").read_text())
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="pools with \\['pooling_mode_cls_token'\\]"):
        CaptureScorer(encoder_model=str(folder))


def test_references_are_required():
    with pytest.raises(ValueError, match="CAPTURE compares a caption with its references"):
        CaptureScorer().score(["a dog"], None)
    with pytest.raises(ValueError, match="references is None"):
        capeval.load("capture").compute(predictions=["a dog"], references=None)


@pytest.mark.parametrize("offline", [True, False])
def test_missing_language_data_is_never_downloaded_and_the_error_says_what_to_run(monkeypatch, offline):
    import nltk.data

    from capeval import models

    monkeypatch.setenv("CAPEVAL_OFFLINE", "1" if offline else "0")
    monkeypatch.setattr("capeval.settings.offline", lambda: offline)
    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: pytest.fail("downloaded while scoring"))
    monkeypatch.setattr(models, "_CACHE", {})  # nothing loaded yet
    find = nltk.data.find
    monkeypatch.setattr(nltk.data, "find", lambda name, *args, **kwargs: (_ for _ in ()).throw(LookupError(name))
                        if name.startswith(("taggers/", "corpora/wordnet")) else find(name, *args, **kwargs))
    monkeypatch.setattr(wordnet, "DEBIAN_FOLDER", Path("/no/wordnet/here"))
    monkeypatch.delenv("CAPEVAL_WORDNET", raising=False)
    with pytest.raises(ModelUnavailableError, match="WordNet 3.0 is not installed: run capeval download chair \\(or python -m nltk.downloader wordnet\\), or "
                                                    "apt-get install wordnet-base"):
        CaptureScorer().score(["a dog"], [["a dog runs"]])
    monkeypatch.setattr(capture, "wordnet", lambda: SimpleNamespace(lemmatize=lambda word, pos: word))
    with pytest.raises(ModelUnavailableError, match="NLTK's POS tagger weights are not installed: run capeval download chair \\(or python -m "
                                                    "nltk.downloader averaged_perceptron_tagger_eng"):
        CaptureScorer().score(["a dog"], [["a dog runs"]])


@requires_wordnet
@pytest.mark.models
def test_the_module_returns_every_column_and_the_elements(recorded_language, fixture_graphs, parser_path, encoder_path):
    module = capeval.load("capture", parser_model=parser_path, encoder_model=encoder_path, device="cpu")
    results = module.compute(predictions=PREDICTIONS[:2] + [""], references=REFERENCES[:2] + [["A black cat sleeps on a sofa."]])
    assert set(capture.COLUMNS) - {"capture"} <= set(results) and len(results["scores"]) == 3
    assert results["scores"][2] == 0.0  # an empty caption has nothing to match
    assert results["capture"] == pytest.approx(sum(results["scores"]) / 3)
    assert "image" not in results["elements"][0]["objects"] and "car" in results["elements"][0]["objects"]  # a stop word
    assert results["elements"][2] == {"objects": [], "attributes": {}, "relations": []}
    assert "factual_version=0.5" in results["hashcode"] and "encoder@" in results["hashcode"]
    options = {"parser_model": parser_path, "encoder_model": encoder_path, "device": "cpu"}
    together = capeval.evaluate(PREDICTIONS[:2], REFERENCES[:2], metrics=[("capture", options), "bleu"])
    assert together.per_caption["capture"].tolist() == pytest.approx(results["scores"][:2])


def test_wordnet_source_order(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPEVAL_WORDNET", str(tmp_path))
    with pytest.raises(wordnet.WordNetUnavailableError, match="not a WordNet dict folder"):
        wordnet.wordnet_source()
    (tmp_path / "data.noun").write_text("")
    assert wordnet.wordnet_source() == str(tmp_path)
    monkeypatch.delenv("CAPEVAL_WORDNET")
    import nltk

    monkeypatch.setattr(nltk.data, "find", lambda name: (_ for _ in ()).throw(LookupError(name)))
    monkeypatch.setattr(wordnet, "DEBIAN_FOLDER", tmp_path / "absent")
    with pytest.raises(wordnet.WordNetUnavailableError, match="apt-get install wordnet-base"):
        wordnet.wordnet_source()
    monkeypatch.setattr(wordnet, "DEBIAN_FOLDER", tmp_path)
    assert wordnet.wordnet_source() == str(tmp_path)


def test_lexnames_are_wordnets_45_lexicographer_files():
    lines = wordnet.lexnames_text().splitlines()
    assert len(lines) == 45 and lines[3] == "03\tnoun.Tops\t1" and lines[29] == "29\tverb.body\t2" and lines[-1] == "44\tadj.ppl\t3"
    assert lines[2] == "02\tadv.all\t4"


@requires_wordnet
@pytest.mark.parametrize("placeholder", [None, ""])
@pytest.mark.slow
def test_a_folder_without_lexnames_or_with_an_empty_one_reads_synsets(monkeypatch, tmp_path, placeholder):
    """Debian's files lack ``lexnames``, and copies laid out for NLTK often carry it empty: both read as WordNet 3.0."""
    source = Path(wordnet.wordnet_source())
    if not (source / "data.noun").is_file():
        pytest.skip("WordNet here is NLTK's zipped corpus, not a dict folder")
    for pattern in ("data.*", "index.*", "*.exc"):
        for path in source.glob(pattern):
            shutil.copyfile(path, tmp_path / path.name)
    if placeholder is not None:
        (tmp_path / "lexnames").write_text(placeholder)
    monkeypatch.setenv("CAPEVAL_WORDNET", str(tmp_path))
    words = wordnet.wordnet()
    assert {"automobile", "railcar", "cable_car"} <= words.lemma_names("car")
    car = words.load_reader().synsets("car", pos="n")[0]
    assert car.lexname() == "noun.artifact" and "automobile" in car.lemma_names()
