"""Pattern 3.6's English noun singularization (``pattern.en.singularize``), rule for rule, in pure Python.

CHAIR's released code (Rohrbach et al., 2018) singularizes every token with Pattern 3.6, so its object mentions
depend on Pattern's rules, quirks included: a word that is a *suffix* of an uninflected or uncountable word is
kept (``"ice"``, ``"is"``), a word ending in a listed ``-ie`` plural is returned still plural (``"cookies"``), an
irregular plural is matched as a suffix (``"women"`` → ``"woman"``, and also ``"hour"`` → ``"hmy"`` through
``our → my``), and the last rule drops any final ``s`` (``"bus"`` → ``"bu"``, ``"glass"`` → ``"glas"``).
The word lists and rules below are Pattern's (BSD licence; its singular rules adapted from Bermi Ferrer's
Inflector), written out as data.

>>> [singularize(w) for w in ["dogs", "women", "buses", "bus", "glasses", "knives", "scissors", "cookies", "hour"]]
['dog', 'woman', 'bus', 'bu', 'glass', 'knife', 'scissors', 'cookies', 'hmy']
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Pattern keeps a word unchanged when it ends one of these (its uninflected and uncountable nouns): the test is
#: ``listed.endswith(word)``, so every suffix of a listed word ("s", "es", "ice", "is") is kept too.
_KEPT = frozenset((
    "bison", "bream", "breeches", "britches", "carp", "chassis", "christmas", "clippers", "cod", "contretemps", "corps",
    "debris", "diabetes", "djinn", "eland", "elk", "flounder", "gallows", "georgia", "graffiti", "headquarters", "herpes",
    "high-jinks", "homework", "innings", "jackanapes", "mackerel", "measles", "mews", "mumps", "news", "pincers",
    "pliers", "proceedings", "rabies", "salmon", "scissors", "series", "shears", "species", "swine", "swiss", "trout",
    "tuna", "whiting", "wildebeest",
    "advice", "bread", "butter", "cheese", "electricity", "equipment", "fruit", "furniture", "garbage", "gravel",
    "happiness", "information", "ketchup", "knowledge", "love", "luggage", "mathematics", "mayonnaise", "meat",
    "mustard", "progress", "research", "rice", "sand", "software", "understanding", "water",
))

#: A word ending in one of these plus "s" is returned as it is, still plural (Pattern's ``-ie`` nouns). The two
#: entries written with "^" are Pattern's too: compared as plain text, they never match.
_IE_NOUNS = (
    "alergie", "auntie", "beanie", "birdie", "bogie", "bombie", "collie", "cookie", "cutie", "doggie", "eyrie",
    "freebie", "goonie", "groupie", "hankie", "hippie", "hoagie", "hottie", "indie", "junkie", "laddie", "laramie",
    "lingerie", "meanie", "newbie", "nightie", "oldie", "^pie", "pixie", "quickie", "reverie", "rookie", "softie",
    "sortie", "stoolie", "sweetie", "techie", "^tie", "toughie", "valkyrie", "veggie", "weenie", "yuppie", "zombie",
)
_IE_PLURAL_ENDINGS = tuple(noun + "s" for noun in _IE_NOUNS)

_KEPT_SUFFIXES = frozenset(word[i:] for word in _KEPT for i in range(len(word) + 1))

#: Irregular plural endings and what replaces them (no ending is a suffix of another, so their order is free).
_IRREGULAR = {
    "atlantes": "atlas", "atlases": "atlas", "axes": "axe", "beeves": "beef", "brethren": "brother", "children": "child",
    "corpora": "corpus", "corpuses": "corpus", "ephemerides": "ephemeris", "feet": "foot", "ganglia": "ganglion",
    "geese": "goose", "genera": "genus", "genii": "genie", "graffiti": "graffito", "helves": "helve", "kine": "cow",
    "leaves": "leaf", "loaves": "loaf", "men": "man", "mongooses": "mongoose", "monies": "money", "moves": "move",
    "mythoi": "mythos", "numena": "numen", "occipita": "occiput", "octopodes": "octopus", "opera": "opus",
    "opuses": "opus", "our": "my", "oxen": "ox", "penes": "penis", "penises": "penis", "people": "person",
    "sexes": "sex", "soliloquies": "soliloquy", "teeth": "tooth", "testes": "testis", "trilbys": "trilby",
    "turves": "turf", "zoa": "zoon",
}

#: Suffix rules, tried in order; the first that matches rewrites the word (a group that took no part in the match
#: leaves nothing in the replacement). Kept verbatim, quirks included: ``[octop|vir]`` is a character class
#: ("safari" → "safarus"), ``^(ox)en`` has no end anchor, ``([ti])a$`` makes "pasta" → "pastum".
_RULES = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"(.)ae$", r"\1a"), (r"(.)itis$", r"\1itis"), (r"(.)eaux$", r"\1eau"), (r"(quiz)zes$", r"\1"),
    (r"(matr)ices$", r"\1ix"), (r"(ap|vert|ind)ices$", r"\1ex"), (r"^(ox)en", r"\1"), (r"(alias|status)es$", r"\1"),
    (r"([octop|vir])i$", r"\1us"), (r"(cris|ax|test)es$", r"\1is"), (r"(shoe)s$", r"\1"), (r"(o)es$", r"\1"),
    (r"(bus)es$", r"\1"), (r"([m|l])ice$", r"\1ouse"), (r"(x|ch|ss|sh)es$", r"\1"), (r"(m)ovies$", r"\1ovie"),
    (r"(.)ombies$", r"\1ombie"), (r"(s)eries$", r"\1eries"), (r"([^aeiouy]|qu)ies$", r"\1y"),
    # -f and -fe nouns whose plural is -ves (lives, wolves), and -ve nouns that only look like them.
    (r"([aeo]l)ves$", r"\1f"), (r"([^d]ea)ves$", r"\1f"), (r"arves$", "arf"), (r"erves$", "erve"),
    (r"([nlw]i)ves$", r"\1fe"), (r"([lr])ves$", r"\1f"), (r"([aeo])ves$", r"\1ve"), (r"(sive)s$", r"\1"),
    (r"(tive)s$", r"\1"), (r"(hive)s$", r"\1"), (r"([^f])ves$", r"\1fe"),
    # -ses
    (r"(^analy)ses$", r"\1sis"), (r"((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)ses$", r"\1\2sis"),
    (r"(.)opses$", r"\1opsis"), (r"(.)yses$", r"\1ysis"), (r"(h|d|r|o|n|b|cl|p)oses$", r"\1ose"),
    (r"(fruct|gluc|galact|lact|ket|malt|rib|sacchar|cellul)ose$", r"\1ose"), (r"(.)oses$", r"\1osis"),
    # -a
    (r"([ti])a$", r"\1um"), (r"(n)ews$", r"\1ews"), (r"s$", ""),
))

#: Prepositions of compounds such as "mothers-in-law", whose first part is the noun.
_COMPOUND_PREPOSITIONS = frozenset((
    "about", "above", "across", "after", "among", "around", "at", "athwart", "before", "behind", "below", "beneath",
    "beside", "besides", "between", "betwixt", "beyond", "but", "by", "during", "except", "for", "from", "in", "into",
    "near", "of", "off", "on", "onto", "out", "over", "since", "till", "to", "under", "until", "unto", "upon", "with",
))


@lru_cache(maxsize=1 << 16)
def singularize(word: str) -> str:
    """``pattern.en.singularize(word)`` for a lower-case word (CHAIR lower-cases captions before it singularizes).

    >>> singularize("mothers-in-law"), singularize("dogs'"), singularize("'"), singularize("safari")
    ('mother-in-law', "dog's", "'s", 'safarus')
    """
    parts = word.split("-")
    if len(parts) > 1 and parts[1] in _COMPOUND_PREPOSITIONS:
        return singularize(parts[0]) + "-" + "-".join(parts[1:])
    if word.endswith("'"):  # a plural possessive: dogs' -> dog's
        return singularize(word[:-1]) + "'s"
    if word in _KEPT_SUFFIXES:
        return word
    if word.endswith(_IE_PLURAL_ENDINGS):
        return word
    for plural, singular in _IRREGULAR.items():
        if word.endswith(plural):
            return word[: len(word) - len(plural)] + singular
    for rule, replacement in _RULES:
        if rule.search(word):
            return rule.sub(replacement, word)
    return word
