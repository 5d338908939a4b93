"""CHAIR's pure steps, each pinned without NLTK's downloads: Pattern's singularization, WordNet's morphy, NLTK's
word tokenizer with Punkt, the synonym list, two-word names, toilet seats, the counting and the image ids."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from capeval.models import ModelUnavailableError
from capeval.scoring import chair
from capeval.scoring.chair import (COCO_SYNONYMS, DOUBLE_WORDS, OBJECT_OF_WORD, caption_lemmas, caption_statistics, chair_values,
                                   drop_toilet_seats, given_objects, image_key, merge_double_words, object_mentions, words_of_lemmas,
                                   wordnet_pos)
from capeval.text.english import word_tokenize
from capeval.text.inflect import singularize
from capeval.text.wordnet import WordNet, morphy, wordnet

from fixtures.chair import ANNOTATIONS, ASSETS


def tsv_rows(name: str) -> list[list[str]]:
    lines = (ASSETS / name).read_text(encoding="utf-8").split("\n")
    return [line.split("\t") for line in lines[1:] if line]


def test_singularize_equals_pattern_on_5000_words():
    rows = tsv_rows("pattern_singularize.tsv")
    assert len(rows) > 5000
    assert [singularize(word) for word, _ in rows] == [singular for _, singular in rows]


@pytest.mark.parametrize("word, singular", [
    ("bus", "bu"), ("buses", "bus"), ("glass", "glas"), ("glasses", "glass"), ("people", "person"), ("women", "woman"),
    ("skis", "ski"), ("scissors", "scissors"), ("sheep", "sheep"), ("knives", "knife"), ("mice", "mouse"), ("geese", "goose"),
    ("cookies", "cookies"), ("ties", "ty"), ("hour", "hmy"), ("is", "is"), ("ice", "ice"), ("ox", "ox"), ("oxen", "ox"),
    ("analyses", "analysis"), ("bases", "basis"), ("theses", "thesis"), ("data", "datum"), ("safari", "safarus"),
    ("mothers-in-law", "mother-in-law"), ("cross-walks", "cross-walk"), ("dogs'", "dog's"), ("glasses'", "glass's"), ("'", "'s"),
    ("", ""),
])
def test_singularize_quirks(word, singular):
    assert singularize(word) == singular


def lemmatizer_from(files: dict[str, str]) -> WordNet:
    names = {f"index.{pos}": "" for pos in ("noun", "verb", "adj", "adv")} | {f"{pos}.exc": "" for pos in ("noun", "verb", "adj", "adv")}
    names.update(files)
    return WordNet(lambda name: names[name].splitlines(), load_reader=lambda: None)


def test_morphy_on_a_tiny_wordnet():
    """Exceptions first, else one rule step; forms WordNet lacks dropped; the shortest kept; the word itself otherwise."""
    wordnet = lemmatizer_from({
        "index.noun": "  1 licence header line\ndog n 1 0 1 0 01\nbus n 1 0 1 0 01\naxe n 1 0 1 0 01\nax n 1 0 1 0 01\n"
                      "goose n 1 0 1 0 01\npeople n 1 0 1 0 01\nglass n 1 0 1 0 01\n",
        "index.verb": "run v 1 0 1 0 01\nrunning v 1 0 1 0 01\nsee v 1 0 1 0 01\n",
        "index.adj": "good a 1 0 1 0 01\nbig a 1 0 1 0 01\n",
        "noun.exc": "geese goose\npeople person\n",
        "verb.exc": "saw see\n",
        "adj.exc": "better good well\n",
    })
    assert [wordnet.lemmatize(w) for w in ("dogs", "buses", "geese", "people", "glasses", "cats", "dog", "axes")] == [
        "dog", "bus", "goose", "people", "glass", "cats", "dog", "ax"]
    assert [wordnet.lemmatize(w, "v") for w in ("running", "runs", "saw", "sees")] == ["running", "run", "see", "see"]
    assert [wordnet.lemmatize(w, "a") for w in ("better", "bigger", "good")] == ["good", "bigger", "good"]
    assert wordnet.lemmatize("quickly", "r") == "quickly" and wordnet.lemmas["n"] >= {"dog", "bus"}
    assert "1" not in wordnet.lemmas["n"]  # the licence lines (they start with spaces) are no lemmas
    assert morphy("axes", "n", wordnet.lemmas["n"], wordnet.exceptions["n"]) == ["axe", "ax"]  # in rule order; the shortest wins


def test_wordnet_synonyms_come_from_the_reader_loaded_on_first_use_and_are_remembered():
    """``lemma_names`` is every lemma name of every synset the reader gives; the reader loads once, on the first
    synonym asked (the lemmatizer never loads it), and each word is asked of it once."""
    def synset(*names):
        return SimpleNamespace(lemmas=lambda: [SimpleNamespace(name=lambda name=name: name) for name in names])

    asked, loads = [], []

    class Reader:
        def synsets(self, word):
            asked.append(word)
            return [synset("car", "auto"), synset("car", "railcar", "cable_car")] if word == "car" else []

    wordnet = WordNet(lambda name: ["dog n 1 0 1 0 01"] if name == "index.noun" else [],
                      load_reader=lambda: loads.append(1) or Reader())
    assert wordnet.lemmatize("dogs") == "dog" and loads == []
    assert wordnet.lemma_names("car") == {"car", "auto", "railcar", "cable_car"}
    assert wordnet.lemma_names("car") == {"car", "auto", "railcar", "cable_car"} and wordnet.lemma_names("zzz") == frozenset()
    assert loads == [1] and asked == ["car", "zzz"]


@pytest.fixture(scope="module")
def installed_wordnet():
    try:
        return wordnet()
    except ModelUnavailableError as error:
        pytest.skip(str(error))


def test_wordnet_lemmas_equal_nltk_on_5000_words(installed_wordnet):
    """NLTK 3.9.4's WordNetLemmatizer on WordNet 3.0 (asset), against the lemmatizer on this machine's WordNet files."""
    rows = tsv_rows("wordnet_lemmas.tsv")
    assert len(rows) > 5000
    mine = [[installed_wordnet.lemmatize(row[0], pos) for pos in "nvar"] for row in rows]
    assert mine == [row[1:] for row in rows]


def caption_sample(count: int) -> list[str]:
    import pandas as pd

    texts = pd.read_parquet(ASSETS.parent / "ptb_jar_outputs.parquet", columns=["text"]).text
    return texts.iloc[:: max(1, len(texts) // count)].tolist()


def test_word_tokenize_equals_nltk_with_punkt(nltk_punkt, released):
    """On 5,000 caption strings of six corpora, raw and lower-cased, and on 800 six-caption paragraphs."""
    import nltk

    captions = caption_sample(5000) + [c["caption"] for c in released["captions"]]
    paragraphs = [" ".join(captions[i:i + 6]) for i in range(0, 4800, 6)]
    texts = captions + [c.lower() for c in captions] + paragraphs + [p.lower() for p in paragraphs] + [
        "a dog. a cat.", "a man with mr. smith at 3 p.m. in the u.s. a bus!", "dogs... cats?", "  two dogs , one bus .  ",
        "a,1.", "a,,b,.", "", ".", "   ", "it's a dog's bowl. the cat isn't here."]
    mismatches = [text for text in texts if word_tokenize(text) != nltk.word_tokenize(text)]
    assert mismatches == []


def test_word_tokenize_equals_nltk_where_two_marks_end_the_text(nltk_punkt):
    """A mark before the last character may end a sentence (Punkt decides): "a dog.?" is two sentences, "dog" then "."."""
    import nltk

    texts = ["a dog.?", "a dog?!", "a dog!.", "a dog..", "a dog.? ", "a dog. ?", "two dogs?. a cat", "a b.?!", ".?", "a?"]
    assert {text: word_tokenize(text) for text in texts} == {text: nltk.word_tokenize(text) for text in texts}
    assert word_tokenize("a dog.?") == ["a", "dog", ".", "?"]


def test_the_line_tokenizer_does_not_split_sentences(nltk_punkt):
    """capeval.text.tokenize.word_tokenize is nltk.word_tokenize(text, preserve_line=True): one sentence, even with punkt."""
    from capeval.text.tokenize import word_tokenize as line_word_tokenize

    assert line_word_tokenize("a dog. a cat's bowl.") == ["a", "dog.", "a", "cat", "'s", "bowl", "."]
    assert word_tokenize("a dog. a cat's bowl.") == ["a", "dog", ".", "a", "cat", "'s", "bowl", "."]


def test_tokenizing_is_available_with_the_package_or_nltks_data(monkeypatch):
    from capeval import models

    assert chair.punkt_available() is True
    monkeypatch.setattr(models, "_CACHE", {})
    monkeypatch.setattr(chair, "punkt_english", lambda: (_ for _ in ()).throw(ModelUnavailableError("no punkt")))
    assert chair.punkt_available() is False


@pytest.mark.slow
def test_word_tokenize_equals_nltk_on_every_caption_string(nltk_punkt):
    """All 143,571 distinct caption strings of the PTB asset, raw and lower-cased (about 2 minutes)."""
    import nltk

    captions = caption_sample(10 ** 6)
    assert len(captions) > 140_000
    assert [c for c in captions + [c.lower() for c in captions] if word_tokenize(c) != nltk.word_tokenize(c)] == []


def test_the_synonym_list():
    categories = json.loads((ANNOTATIONS / "instances_val2014.json").read_text())["categories"]
    assert set(COCO_SYNONYMS) == {category["name"] for category in categories} and len(COCO_SYNONYMS) == 80
    words = [word for category, synonyms in COCO_SYNONYMS.items() for word in (category, *synonyms)]
    assert len(words) == len(set(words)) == len(OBJECT_OF_WORD) == 400  # the released list's 403 distinct entries, less 3 that never match
    assert OBJECT_OF_WORD["puppy"] == "dog" and OBJECT_OF_WORD["seat"] == "chair" and OBJECT_OF_WORD["passenger"] == "person"
    assert all(word == word.strip().lower() for word in words)
    assert "motor bike" not in OBJECT_OF_WORD and "cheesecake" not in OBJECT_OF_WORD and "iphone" not in OBJECT_OF_WORD


def test_double_words():
    # 27 distinct names (two listed twice), 24 baby/adult animals, 2 passengers, "toilet seat" and "wine glas".
    assert len(DOUBLE_WORDS) == 27 + 24 + 2 + 2
    assert DOUBLE_WORDS["baby cub"] == "cub" and DOUBLE_WORDS["passenger train"] == "train" and DOUBLE_WORDS["bow tie"] == "tie"
    assert merge_double_words(["a", "wine", "glas", "and", "a", "hot", "dog", "and", "a", "baby", "bird"]) == [
        "a", "wine glass", "and", "a", "hot dog", "and", "a", "bird"]
    # Left to right, each word in one pair at most: "teddy bear bear" keeps the second bear.
    assert merge_double_words(["teddy", "bear", "bear"]) == ["teddy bear", "bear"]
    assert merge_double_words(["baby", "baby", "bird"]) == ["baby", "bird"]
    assert merge_double_words(["stop"]) == ["stop"] and merge_double_words([]) == []
    assert merge_double_words(["stop", "sign"]) == ["stop sign"] and merge_double_words(["hot", "dog", "stop"]) == ["hot dog", "stop"]


def test_toilet_seats_and_mentions():
    assert drop_toilet_seats(["toilet", "seat", "seat"]) == ["toilet"] and drop_toilet_seats(["seat", "chair"]) == ["seat", "chair"]
    assert drop_toilet_seats(["toilet"]) == ["toilet"]
    assert words_of_lemmas(["a", "toilet", "seat", "and", "a", "seat", "by", "a", "toilet"]) == [("toilet", "toilet"), ("toilet", "toilet")]
    assert words_of_lemmas(["a", "seat", "and", "a", "motor", "bike", "at", "home", "plate"]) == [("seat", "chair")]
    assert object_mentions(["man", "people", "laptop computer", "home plate", "animal"]) == [
        ("man", "person"), ("people", "person"), ("laptop computer", "laptop")]


def test_base_forms():
    assert caption_lemmas(["the", "dogs'", "buses"], "original") == ["the", "dog's", "bus"]
    assert [wordnet_pos(tag) for tag in ("JJR", "VBD", "NNP", "RBS", "IN", "CD", "", "PRP$")] == ["a", "v", "n", "r", "n", "n", "n", "n"]
    lemmas = caption_lemmas(["running", "dogs", "fast"], "opera", tags=["VBG", "NNS", "RB"], lemmatize=lambda w, pos: f"{w}:{pos}")
    assert lemmas == ["running:v", "dogs:n", "fast:r"]
    with pytest.raises(ValueError, match="one tag per token"):
        caption_lemmas(["a", "dog"], "opera", tags=["DT"], lemmatize=lambda w, pos: w)
    with pytest.raises(ValueError, match="one tag per token"):
        caption_lemmas(["a"], "opera", tags=["DT"])


def test_counting():
    truth = frozenset({"dog", "person", "frisbee"})
    assert caption_statistics([], truth) == [1.0, 0.0, 0.0, 0.0, 0.0, 3.0]
    assert caption_statistics(["dog", "dog"], truth) == [1.0, 0.0, 0.0, 2.0, 1.0, 3.0]
    assert caption_statistics(["cat", "cat", "dog"], frozenset()) == [1.0, 1.0, 3.0, 3.0, 0.0, 0.0]
    assert chair_values([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]) == {"chair_s": 0.0, "chair_i": 0.0, "recall": 0.0}
    assert chair_values([3.0, 2.0, 3.0, 4.0, 1.0, 3.0]) == {"chair_s": 2 / 3, "chair_i": 0.75, "recall": 1 / 3}


def test_image_identities():
    import numpy as np

    assert [image_key(x) for x in (9, np.int64(9), "9", "000000000009.jpg", "COCO_train2014_000000000009.jpg",
                                   Path("/data/val2014/COCO_val2014_000000391895.JPG"), "img-3.png", "a/b.jpg")] == [
        9, 9, 9, 9, 9, 391895, "img-3.png", "a/b.jpg"]
    for bad, message in ((True, "images\\[0\\] is a bool"), (3.0, "images\\[0\\] is float"), (None, "is NoneType: CHAIR takes image identities")):
        with pytest.raises(ValueError, match=message):
            image_key(bad, "images[0]")


def test_objects_given_directly(tmp_path):
    path = tmp_path / "objects.json"
    path.write_text(json.dumps({"391895": ["dog", "person"], "img-1": []}))
    assert given_objects(str(path)) == {391895: frozenset({"dog", "person"}), "img-1": frozenset()}
    assert given_objects({9: ("cow",)}) == {9: frozenset({"cow"})}
    for value, message in (({9: ["man"]}, "'man' is a word for 'person'"), ({9: ["unicorn"]}, "not one of COCO's 80 category names$"),
                           ({9: "dog"}, "must be a list"), ({9: 3}, "must be a list"), ({}, "must map image ids"), ([1], "must map"),
                           (str(tmp_path / "none.json"), "no such file")):
        with pytest.raises(ValueError, match=message):
            given_objects(value)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable JSON file"):
        given_objects(str(path))


def nltk_tagger(weights, tagdict, classes):
    from nltk.tag.perceptron import PerceptronTagger

    tagger = PerceptronTagger(load=False)
    tagger.model.weights, tagger.tagdict = weights, tagdict
    tagger.classes = tagger.model.classes = set(classes)
    return tagger


@pytest.fixture(scope="module")
def tagged_sentences(released):
    return [list(zip(tokens.split(" "), tags)) for tokens, tags in released["opera_tags"].items()]


@pytest.fixture(scope="module")
def token_lists(released):
    captions = caption_sample(3000) + [c["caption"] for c in released["captions"]]
    return [word_tokenize(caption.lower()) for caption in captions] + [word_tokenize(c) for c in captions[:500]] + [[], ["a"]]


def test_batched_tags_equal_nltks_perceptron_tagger(tagged_sentences, token_lists):
    """A model NLTK trains on the recorded tags (averaged weights rounded as NLTK rounds them), on 3,500 token lists."""
    from nltk.tag.perceptron import PerceptronTagger

    from capeval.text.english import PerceptronTags

    trained = PerceptronTagger(load=False)
    trained.train(tagged_sentences, nr_iter=5)
    batched = PerceptronTags(trained.model.weights, trained.tagdict, trained.model.classes)(token_lists)
    assert batched == [[tag for _, tag in trained.tag(tokens)] for tokens in token_lists]


def test_the_tagger_normalizes_words_as_nltk_does():
    from nltk.tag.perceptron import PerceptronTagger

    from capeval.text.english import PerceptronTags

    words = ["2014", "201", "20145", "12", "3rd", "x-ray", "-5", "-", "Dog", "", "1-2"]
    assert [PerceptronTags.normalize(w) for w in words] == [PerceptronTagger(load=False).normalize(w) for w in words] == [
        "!YEAR", "!DIGITS", "!DIGITS", "!DIGITS", "!DIGITS", "!HYPHEN", "-5", "-", "dog", "", "!HYPHEN"]


def test_a_model_without_a_bias_feature_adds_nothing_for_it():
    """NLTK skips a feature its model lacks, ``bias`` included: no other feature's weights stand in for it."""
    from capeval.text.english import PerceptronTags

    model = ({"i suffix ogs": {"NNS": 1.0}, "i-1 tag NNS": {"VBP": 2.0}}, {}, ["DT", "NN", "NNS", "VBP"])
    tokens = ["a", "dogs", "run", "the"]
    assert PerceptronTags(*model)([tokens]) == [[tag for _, tag in nltk_tagger(*model).tag(tokens)]] == [["VBP", "NNS", "VBP", "VBP"]]


def test_batched_tags_break_ties_as_nltk_does(token_lists):
    """Weights of -1, 0 and 1 on a few features: most scores tie, and the later tag in alphabetical order must win."""
    from capeval.text.english import PerceptronTags

    rng = __import__("random").Random(7)
    classes = ["DT", "IN", "JJ", "NN", "NNS", "VB", "VBZ", "."]
    features = {f"i suffix {w[-3:]}" for tokens in token_lists[:300] for w in tokens} | {f"i-1 tag {c}" for c in classes} | {"bias"}
    weights = {feature: {tag: float(rng.choice((-1, 0, 1))) for tag in rng.sample(classes, 3)} for feature in sorted(features)}
    tagdict = {"the": "DT", "a": "DT", ".": "."}
    batched = PerceptronTags(weights, tagdict, classes)(token_lists)
    assert batched == [[tag for _, tag in nltk_tagger(weights, tagdict, classes).tag(tokens)] for tokens in token_lists]


def test_batched_tags_equal_nltk_pos_tag_where_its_weights_are_installed(token_lists):
    import nltk

    from capeval.text.english import pos_tagger

    try:
        tags = pos_tagger()
    except ModelUnavailableError as error:
        pytest.skip(str(error))
    assert tags(token_lists) == [[tag for _, tag in nltk.pos_tag(tokens)] for tokens in token_lists]
