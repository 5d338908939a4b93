"""The parts of the pure-Python METEOR 1.5 against the jar's own answers (tests/assets/meteor_jar_units.json, from
scripts/build_meteor_jar_outputs.py) and against hand-worked cases: Java's string primitives, the normalizer, the
Snowball stemmer, synonyms, the paraphrase table, the matching stages, the beam search with its quirks, the score
and the corpus aggregate."""

import collections
import gzip
import math
import random
import unicodedata

import pytest

from capeval.scoring import meteor as M
from capeval.scoring.meteor import EXACT, PARAPHRASE, STEM, SYNONYM


# --- Java's string primitives --------------------------------------------------------------------------------

def test_java_primitives():
    assert M.java_tokens("\ta  dog\r\nruns\f\x0bfast\u00a0now ") == ["a", "dog", "runs", "\x0bfast\u00a0now"]
    assert M.java_tokens("") == [] and M.java_tokens("   ") == []
    assert M.java_lines("a\r\nb\rc\n\nd") == ["a", "b", "c", "", "d"] and M.java_lines("a\n") == ["a"]
    assert M.java_lines("") == []
    # "a" and U+1F600 (two UTF-16 units, D83D DE00)
    assert [hex(ord(c)) for c in M.as_utf16("a\U0001F600")] == ["0x61", "0xd83d", "0xde00"]
    assert M.as_utf16("abc") == "abc" and M.utf16_length("\U0001F600\U00010000x") == 5
    assert M.as_utf16("\uffff\U0001F600") == "\uffff\ud83d\ude00" and M.utf16_length("\uffff") == 1
    # String.hashCode: s[0]*31^(n-1) + ... + s[n-1], 32 bits (Java's int, here unsigned)
    assert M.java_hash("") == 0 and M.java_hash("a") == 97 and M.java_hash("dog") == 99644
    assert M.java_hash("hello world") == 1794106052 and M.java_hash("polygenelubricants") == (-2147483648) % 2**32
    assert M.java_hash("\U0001F600") == (0xD83D * 31 + 0xDE00)
    # different words the jar takes for the same word
    assert M.java_hash("Aa") == M.java_hash("BB") and M.java_hash("w\u044f") == M.java_hash("x\u0430")
    # Python's split on plain ASCII text; the unit separator (U+001F) and the like split nothing in Java
    assert M.java_tokens("a dog  runs\n") == ["a", "dog", "runs"] and M.java_tokens("a\x1fb\x1c c") == ["a\x1fb\x1c", "c"]


# --- normalization and stems ---------------------------------------------------------------------------------

def test_normalizer_equals_the_jar(units, resources):
    wrong = [(text, jar, M.normalize(text, resources.prefixes)) for text, jar in units["normalize"]
             if M.normalize(text, resources.prefixes) != jar]
    assert wrong == [] and len(units["normalize"]) == 49


def test_nonbreaking_prefixes():
    prefixes = M.read_prefixes("#comment\n\nMr\nNo #NUMERIC_ONLY#\r\nSt  # a comment\n #x\nNo\n")
    # the last line for a word wins; anything after the word but #NUMERIC_ONLY# means "always"
    assert prefixes == {"Mr": M.ANY_PREFIX, "No": M.ANY_PREFIX, "St": M.ANY_PREFIX}
    assert M.read_prefixes("No #NUMERIC_ONLY#") == {"No": M.NUMERIC_PREFIX}
    only_numbers = {"No": M.NUMERIC_PREFIX, "Mr": M.ANY_PREFIX}
    assert M.normalize("No. 5 No. more No. More Mr. X. Y", only_numbers) == "no. 5 no. more no . more mr. x . y"
    assert M.normalize("a.b. c.", {}) == "ab c ." and M.normalize("x.", {}) == "x ." and M.normalize(".", {}) == "."
    assert M.normalize("  two  spaces here  ", {}) == "two spaces here"  # the plain fast path
    assert M.normalize("a\u2009b\u3000c", {}) == "a b c"


def test_stemmer_equals_the_jar(units):
    wrong = [(word, jar, M.english_stem(word)) for word, jar in units["stem"] if M.english_stem(word) != jar]
    assert wrong == [] and len(units["stem"]) >= 150


# --- synonyms ------------------------------------------------------------------------------------------------

def test_synonym_dictionary_rules():
    synsets = "car\n1 2\nauto\n2\nmouse\n3\nbus\n4\nbox\n5\nchurch\n6\nwoman\n7\ncity\n8\nhope\n9\nhop\n10\nbig\n11\nbe\n12\n"
    exceptions = "mouse\nmice\nbe\nwas were\nbig\nbigger\n"
    dictionary = M.SynonymDictionary(synsets, exceptions)
    assert dictionary.synsets("car") == {1, 2} and dictionary.synsets("cars") == {1, 2}
    assert dictionary.synsets("mice") == {3} and dictionary.synsets("were") == {12}  # irregular forms
    assert dictionary.synsets("buses") == {4} and dictionary.synsets("boxes") == {5} and dictionary.synsets("churches") == {6}
    assert dictionary.synsets("women") == {7} and dictionary.synsets("cities") == {8}
    # the first rule that leads to a known word: "hoped" -> "hope" (ed -> e) before "hop" (ed -> "")
    assert dictionary.synsets("hoped") == {9} and dictionary.synsets("hopping") == frozenset()
    assert dictionary.synsets("bigger") == {11} and dictionary.synsets("biggest") == frozenset()
    # words ending in "ss" and short words are their own base; unknown words have none
    assert dictionary.synsets("ss") == frozenset() and dictionary.synsets("zebra") == frozenset()
    both = M.SynonymDictionary("cars\n13\ncar\n1\n", "")
    assert both.synsets("cars") == {1, 13}  # its own synsets and its base's
    # no rules for two-letter words and words ending in "ss": "as" is not "a", "glass" not "glas"
    short = M.SynonymDictionary("a\n1\nas\n2\nglas\n3\nglass\n4\nbu\n5\n", "")
    assert short.synsets("as") == {2} and short.synsets("glass") == {4} and short.synsets("bus") == {5}


def test_synonym_partners_are_the_words_seen_that_share_a_synset():
    resources = M.MeteorResources(frozenset(), {}, M.SynonymDictionary("Aa\n1\nBB\n1 2\ncc\n2\ndd\n3\n", ""), None)
    for word in ("Aa", "BB", "cc", "dd"):
        resources.word(word)
    # "Aa" and "BB" share synset 1 but are the same word to the jar (equal hash codes): exact matches, not synonyms
    assert resources.word("Aa")[4] == set() and resources.word("BB")[4] == {"cc"} and resources.word("cc")[4] == {"BB"}
    assert resources.word("dd")[4] == set() and resources.word("ee")[4] == set()
    candidate, reference = M.Sentence("cc Aa dd", resources), M.Sentence("BB", resources)
    assert M.stage_matches(candidate, reference)[0] == [[(0, 1, 1, 1, EXACT), (0, 1, 0, 1, SYNONYM)]]


def test_synonyms_from_the_jar(resources):
    synonyms = resources.synonyms
    assert not synonyms.synsets("couch").isdisjoint(synonyms.synsets("sofa"))
    assert not synonyms.synsets("mice").isdisjoint(synonyms.synsets("mouse"))
    assert synonyms.synsets("qzx") == frozenset()
    assert resources.word("the")[3] and not resources.word("dog")[3] and "'s" in resources.function_words


# --- the paraphrase table ------------------------------------------------------------------------------------

#: A tiny table in the jar's format (probability, phrase, paraphrase), in the order the tests rely on.
TOY_TABLE = ["0.5", "qa qb", "qc", "0.4", "qa", "qd qe", "0.3", "qa qb", "qd", "0.2", "qc", "qa qb",
             "0.1", "  qf \t qg ", "qh"]


@pytest.fixture(scope="module")
def toy_table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy-table")
    with gzip.open(folder / "toy.gz", "wt", encoding="utf-8") as file:
        file.write("\n".join(TOY_TABLE) + "\n")
    M.ParaphraseTable.build(folder / "toy.gz", folder / "table")
    return M.ParaphraseTable(folder / "table")


def test_toy_table_is_built_as_the_jar_reads_it(toy_table):
    assert set(toy_table.vocabulary) == {"qa", "qb", "qc", "qd", "qe", "qf", "qg", "qh"}
    assert toy_table.longest == 2 and len(toy_table.hashes) == 7  # qa qb, qc, qa, qd qe, qd, qf qg, qh
    sentence, position, length, phrase = toy_table.find([["qd", "qe", "qc", "qd"], ["qa", "qb", "qa"], ["zz", "qf", "qg"], []])
    found = sorted(zip(sentence.tolist(), position.tolist(), length.tolist()))
    assert found == [(0, 0, 1), (0, 0, 2), (0, 2, 1), (0, 3, 1), (1, 0, 1), (1, 0, 2), (1, 2, 1), (2, 1, 2)]
    # each phrase's paraphrases in the file's order
    words = {tuple(int(w) for w in row if w != toy_table.padding): p for p, row in enumerate(toy_table.words)}
    qa_qb = words[(toy_table.vocabulary["qa"], toy_table.vocabulary["qb"])]
    listed = toy_table.paraphrases[toy_table.starts[qa_qb]:toy_table.starts[qa_qb + 1]].tolist()
    assert listed == [words[(toy_table.vocabulary["qc"],)], words[(toy_table.vocabulary["qd"],)]]
    assert toy_table.find([["zz"]])[0].tolist() == []
    assert toy_table.word_ids(["qb", "zz", "qa"]).tolist() == [toy_table.vocabulary["qb"], -1, toy_table.vocabulary["qa"]]


@pytest.mark.parametrize("phrases, words", [
    (["qa qb", "qc", "qd qe qf"], [["qa", "qb"], ["qc"], ["qd", "qe", "qf"]]),
    (["qa\tqb", "qc"], [["qa", "qb"], ["qc"]]),
    ([" qa", "qc"], [["qa"], ["qc"]]),
    (["qa ", "qc"], [["qa"], ["qc"]]),
    (["qa  qb", "qc"], [["qa", "qb"], ["qc"]]),
    (["qa", "", "qc"], [["qa"], [], ["qc"]]),
    (["qa\fqb\tqc"], [["qa", "qb", "qc"]]),
    (["qa\u00a0qb", "qa\x0bqb"], [["qa\u00a0qb"], ["qa\x0bqb"]]),  # Java's tokenizer splits at neither
    (["quite-a-long-word-of-the-table qa", "quite-a-long-word-of-the-tablet"],
     [["quite-a-long-word-of-the-table", "qa"], ["quite-a-long-word-of-the-tablet"]]),  # beyond 8 bytes: all compared
    (["caf\u00e9 \udcff", "\ufffd"], [["caf\u00e9", "\ufffd"], ["\ufffd"]]),  # a bad UTF-8 byte is U+FFFD, one word
])
def test_table_phrases_split_as_java_splits_them(phrases, words):
    text = "".join(f"0.1\n{phrase}\nqa\n" for phrase in phrases).encode("utf-8", "surrogateescape")
    table_words = M.TableWords()
    table_words.numbers["qa"] = 0  # a word numbered before keeps its number
    rows = M.phrase_rows(text, table_words)[0::2]
    names = {i: word for word, i in table_words.numbers.items()}
    assert [[names[id_] for id_ in row if id_ >= 0] for row in rows.tolist()] == words
    assert rows.shape == (len(phrases), max(map(len, words)))


def test_paraphrase_matches_in_the_jars_order(toy_table, resources):
    sentences = [M.Sentence(text, resources) for text in ("qd qe qc qd", "qa qb qa")]
    matches = M.paraphrase_matches(toy_table, sentences, [(0, 1), (1, 0), (0, 0)])
    # candidate "qd qe qc qd", reference "qa qb qa": first the reference's phrases (by position, length, table
    # order: "qa qb" -> "qc" before "qa qb" -> "qd"), then the candidate's ("qc" -> "qa qb")
    assert matches[0] == [(0, 1, 0, 2, PARAPHRASE), (0, 2, 2, 1, PARAPHRASE), (0, 2, 0, 1, PARAPHRASE),
                          (0, 2, 3, 1, PARAPHRASE), (2, 1, 0, 2, PARAPHRASE), (0, 2, 2, 1, PARAPHRASE)]
    # the other way round: the reference's "qc" -> "qa qb", then the candidate's "qa" -> "qd qe", "qa qb" -> "qc",
    # "qa qb" -> "qd" (at both "qd"s), and the second "qa" -> "qd qe"
    assert matches[1] == [(2, 1, 0, 2, PARAPHRASE), (0, 2, 0, 1, PARAPHRASE), (2, 1, 0, 2, PARAPHRASE),
                          (0, 1, 0, 2, PARAPHRASE), (3, 1, 0, 2, PARAPHRASE), (0, 2, 2, 1, PARAPHRASE)]
    assert matches[2] == []  # no phrase of the sentence has a paraphrase in it
    assert M.paraphrase_matches(toy_table, sentences, []) == []


def test_the_jars_paraphrase_table(resources):
    table = resources.paraphrases
    assert len(table.paraphrases) == 5_274_084 and len(table.hashes) == 2_616_378 and table.longest == 7
    words = {i: word for word, i in table.vocabulary.items()}

    def text(phrase):
        return " ".join(words[int(w)] for w in table.words[phrase] if w != table.padding)

    _, _, length, phrase = table.find([["sitting", "on"]])
    assert [text(p) for p in phrase] == ["sitting", "sitting on"] and length.tolist() == [1, 2]
    assert [text(p) for p in table.paraphrases[table.starts[phrase[1]]:table.starts[phrase[1] + 1]]] == \
        ["meeting", "meeting of", "meeting of the", "seated on", "sitting of"]
    sentences = [M.Sentence(text, resources) for text in ("a man sits on a couch", "a person sitting on a sofa")]
    assert M.paraphrase_matches(table, sentences, [(0, 1)]) == [[(1, 1, 1, 1, PARAPHRASE)]]  # "person" / "man"


# --- matching and the search ---------------------------------------------------------------------------------

def test_stem_matches_are_the_other_words_with_the_stem():
    resources = M.MeteorResources(frozenset(), {}, M.SynonymDictionary("", ""), None)
    matches = M.stage_matches(M.Sentence("dogs dog dog", resources), M.Sentence("dog cats", resources))
    assert matches == ([[(0, 1, 1, 1, EXACT), (0, 1, 2, 1, EXACT), (0, 1, 0, 1, STEM)], []], [1, 1, 1], [3, 0])
    # the stem's words are all this word: exact matches only
    assert M.stage_matches(M.Sentence("dog a dog", resources), M.Sentence("dog", resources))[0] == \
        [[(0, 1, 0, 1, EXACT), (0, 1, 2, 1, EXACT)]]


def test_stage_matches_lists_every_stage_in_order(resources):
    candidate, reference = M.Sentence("a man sits on a couch", resources), M.Sentence("a person sitting on a sofa", resources)
    found = M.paraphrase_matches(resources.paraphrases, [candidate, reference], [(0, 1)])[0]
    matches, cover1, cover2 = M.stage_matches(candidate, reference, found)
    assert matches == [[(0, 1, 0, 1, EXACT), (0, 1, 4, 1, EXACT)], [(1, 1, 1, 1, PARAPHRASE)],
                       [(2, 1, 2, 1, STEM), (2, 1, 2, 1, SYNONYM)], [(3, 1, 3, 1, EXACT)],
                       [(4, 1, 0, 1, EXACT), (4, 1, 4, 1, EXACT)], [(5, 1, 5, 1, SYNONYM)]]
    assert cover1 == cover2 == [2, 1, 2, 1, 2, 1]
    alignment = M.best_alignment(matches, cover1, cover2)
    assert sorted(alignment) == [(0, 1, 0, 1, EXACT), (1, 1, 1, 1, PARAPHRASE), (2, 1, 2, 1, STEM), (3, 1, 3, 1, EXACT),
                                 (4, 1, 4, 1, EXACT), (5, 1, 5, 1, SYNONYM)]
    # six words each, three function words each ("a", "on", "a"), all matched: exact function words, a stem, a
    # synonym and a paraphrase (content words), one chunk
    assert M.alignment_statistics(candidate, reference, alignment) == (
        6, 6, 3, 3, 0, 0, 3, 3, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 6, 6)
    # identical sentences: exact matches only, though "a" has paraphrases and synonyms
    same, cover1, _ = M.stage_matches(candidate, candidate, found)
    assert all(match[4] == EXACT for options in same for match in options) and cover1 == [2, 1, 1, 1, 2, 1]


@pytest.mark.parametrize("matches, cover1, cover2, best", [
    # alone at its place and covering words nothing else covers: fixed, no search
    ([[(0, 1, 0, 1, SYNONYM)]], [1], [1], [(0, 1, 0, 1, SYNONYM)]),
    # two one-word stem matches for one word: a non-exact match adds half a word per side, rounded down (0), so
    # the path that skips the word ranks first (it closes no chunk)
    ([[(0, 1, 0, 1, STEM), (0, 1, 1, 1, STEM)]], [1, 1], [2], []),
    ([[(0, 1, 0, 1, EXACT), (0, 1, 1, 1, EXACT)]], [1, 1], [2], [(0, 1, 0, 1, EXACT)]),
    # the distance of a choice is added to the path it was made from, so the first choice never pays its own
    # distance: the candidate word 0 (distance 1) wins over word 1 (distance 0)
    ([[], [(1, 1, 0, 1, EXACT), (1, 1, 1, 1, EXACT)]], [1, 1], [0, 2], [(1, 1, 0, 1, EXACT)]),
    # a three-word paraphrase of one word ranks 3 // 2 + 1 // 2 = 1, an exact one-word match 2
    ([[(0, 3, 0, 1, PARAPHRASE), (0, 1, 1, 1, EXACT)], [], []], [1, 1], [2, 1, 1], [(0, 1, 1, 1, EXACT)]),
    # a two-word paraphrase also covers the next reference word, whose one match is then searched, not fixed: the
    # exact match there (rank weight 2) wins over the paraphrase (rank weight 2 // 2 + 1 // 2 = 1)
    ([[(0, 2, 0, 1, PARAPHRASE)], [(1, 1, 1, 1, EXACT)]], [1, 1], [1, 2], [(1, 1, 1, 1, EXACT)]),
    # before a fixed match, skipping a word whose stem matches lie elsewhere keeps one chunk
    ([[(0, 1, 2, 1, STEM), (0, 1, 3, 1, STEM)], [(1, 1, 1, 1, EXACT)]], [0, 1, 1, 1], [2, 1], [(1, 1, 1, 1, EXACT)]),
    # fewer chunks win among equal weights: 0->0, 1->1 is one chunk, 0->1, 1->0 two
    ([[(0, 1, 0, 1, EXACT), (0, 1, 1, 1, EXACT)], [(1, 1, 0, 1, EXACT), (1, 1, 1, 1, EXACT)]], [2, 2], [2, 2],
     [(0, 1, 0, 1, EXACT), (1, 1, 1, 1, EXACT)]),
])
def test_the_searchs_quirks(matches, cover1, cover2, best):
    assert sorted(M.best_alignment(matches, cover1, cover2)) == best


def word_by_word_search(matches, cover1, cover2):
    """The jar's search as plainly as it runs, the oracle that :func:`best_alignment`'s shortcuts are checked against:
    before every reference word the paths are sorted (stably) by rank and cut to the beam, and each path takes the
    word; a rank is a tuple (weighted words, negated; chunks; distance)."""
    fixed = {}
    for options in matches:
        if len(options) == 1:
            start, length, match_start, match_length, _ = match = options[0]
            if all(cover2[j] == 1 for j in range(start, start + length)) and \
                    all(cover1[i] == 1 for i in range(match_start, match_start + match_length)):
                fixed[start] = match

    def words(match):  # both sides' words, halved and rounded down unless exact
        _, length, _, match_length, stage = match
        return length + match_length if stage == EXACT else length // 2 + match_length // 2

    def covered(match):
        start, length, match_start, match_length, _ = match
        return set(range(match_start, match_start + match_length)), set(range(start, start + length))

    used1 = frozenset().union(*(covered(match)[0] for match in fixed.values()))
    used2 = frozenset().union(*(covered(match)[1] for match in fixed.values()))
    # a path: rank, next reference word, end of the open chunk in the candidate (-1: none), words used, matches chosen
    paths = [((0, 0, 0), 0, -1, used1, used2, ())]
    for current, options in enumerate(matches):
        paths = sorted(paths, key=lambda path: path[0])[:M.BEAM_SIZE]
        following = []
        for path in paths:
            (weighted, chunks, distance), next_word, last, used1, used2, chosen = path
            if next_word > current:  # inside a match
                following.append(path)
            elif current in fixed:
                start, length, match_start, match_length, _ = match = fixed[current]
                following.append(((weighted - words(match), chunks + (last not in (-1, match_start)),
                                   distance + abs(start - match_start)), start + length, match_start + match_length, used1,
                                  used2, chosen))
            else:
                for match in options:
                    start, length, match_start, match_length, _ = match
                    words1, words2 = covered(match)
                    if words1 & used1 or words2 & used2:
                        continue
                    following.append(((weighted - words(match), chunks + (last not in (-1, match_start)), distance),
                                      start + length, match_start + match_length, used1 | words1, used2 | words2,
                                      chosen + (match,)))
                    distance += abs(start - match_start)  # the path the choice was made from pays its distance
                following.append(((weighted, chunks + (last != -1), distance), current + 1, -1, used1, used2, chosen))
        paths = following
    paths = sorted(paths, key=lambda path: path[0])[:M.BEAM_SIZE]
    # the end of the reference closes the open chunk
    best = min(paths, key=lambda path: (path[0][0], path[0][1] + (path[2] != -1), path[0][2]))
    return list(fixed.values()) + list(best[5])


def random_search_problem(rng, longest, paraphrases=0.3):
    """Random matches between a candidate and a reference of at most ``longest`` words: one-word matches of the first
    three stages and paraphrases of up to three words a side (this share of the matches), and how many cover each
    word."""
    length1, length2 = rng.randint(1, longest), rng.randint(1, longest)
    matches = [[] for _ in range(length2)]
    for _ in range(rng.randint(0, 2 * longest)):
        if rng.random() >= paraphrases:
            length = match_length = 1
            stage = rng.choice((EXACT, STEM, SYNONYM))
        else:
            length, match_length, stage = rng.randint(1, min(3, length2)), rng.randint(1, min(3, length1)), PARAPHRASE
        start = rng.randrange(length2 - length + 1)
        matches[start].append((start, length, rng.randrange(length1 - match_length + 1), match_length, stage))
    cover1, cover2 = [0] * length1, [0] * length2
    for options in matches:
        for start, length, match_start, match_length, _ in options:
            for j in range(start, start + length):
                cover2[j] += 1
            for i in range(match_start, match_start + match_length):
                cover1[i] += 1
    return matches, cover1, cover2


def test_the_search_equals_the_jars_word_by_word(monkeypatch):
    """Random problems, small to past the beam: the same alignment as the word-by-word search, through every
    shortcut (fixed matches only; words stepped one by one inside chosen paraphrases, or all at once after the first
    step, which fixes a match or leaves a word unmatched)."""
    seen = collections.Counter()
    take_step, choose = M._take_step, M._choose

    def counting_step(paths, bit, fixed):
        seen["inside a chosen match" if bit else "fixed first" if fixed else "unmatched first"] += 1
        take_step(paths, bit, fixed)

    def counting_choose(paths, current, options, shift):
        following = choose(paths, current, options, shift)
        seen["choices"] += 1
        seen["past the beam"] += len(following) > M.BEAM_SIZE
        return following

    monkeypatch.setattr(M, "_take_step", counting_step)
    monkeypatch.setattr(M, "_choose", counting_choose)
    rng = random.Random(0)
    for trial in range(4000):
        # small problems, some past the beam, and many paraphrases over few words (paths inside them, ties)
        problem = random_search_problem(rng, *((5,), (11,), (6, 0.6))[min(trial // 1000, 2)])
        choices = seen["choices"]
        alignment = M.best_alignment(*problem)
        seen["fixed only"] += bool(alignment) and seen["choices"] == choices
        assert sorted(alignment) == sorted(word_by_word_search(*problem)), problem
    branches = ("fixed only", "inside a chosen match", "fixed first", "unmatched first", "past the beam")
    assert min(seen[branch] for branch in branches) >= 20, seen


def test_chunks_and_function_words(resources):
    candidate, reference = M.Sentence("qb qa the qc", resources), M.Sentence("the qa qb qc", resources)
    alignment = [(0, 1, 2, 1, EXACT), (1, 1, 1, 1, EXACT), (2, 1, 0, 1, STEM), (3, 1, 3, 1, EXACT)]
    # reference order: the->2, qa->1, qb->0, qc->3: every step goes back or jumps, so four chunks
    assert M.alignment_statistics(candidate, reference, alignment) == (
        4, 4, 1, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4)
    # an unmatched reference word ends a chunk, an unmatched candidate word does not
    assert M.alignment_statistics(candidate, reference, [(1, 1, 1, 1, EXACT), (3, 1, 2, 1, EXACT)])[M.CHUNKS] == 2
    assert M.alignment_statistics(candidate, reference, [(0, 1, 1, 1, EXACT), (1, 1, 3, 1, EXACT)])[M.CHUNKS] == 2
    assert M.alignment_statistics(candidate, reference, [(0, 2, 0, 2, PARAPHRASE), (2, 2, 2, 2, PARAPHRASE)])[M.CHUNKS] == 1
    assert M.alignment_statistics(candidate, reference, [])[-3:] == (0, 0, 0)


# --- scores --------------------------------------------------------------------------------------------------

PERFECT = [3, 3, 1, 1, 2, 2, 1, 1] + [0] * 12 + [1, 3, 3]


def test_scores_from_statistics():
    assert M.score_from_statistics(PERFECT) == 1.0  # no fragmentation penalty for the reference itself
    longer = [4, 3, 1, 1, 2, 2, 1, 1] + [0] * 12 + [1, 3, 3]
    # precision (2 · 0.75 + 0.25) / (3 · 0.75 + 0.25) = 0.7, recall 1, fragmentation 1 chunk / 3 matched words
    assert M.score_from_statistics(longer) == pytest.approx(1 / (0.15 / 0.7 + 0.85) * (1 - 0.6 * (1 / 3) ** 0.2), abs=1e-15)
    stems = [2, 2, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0] + [0] * 8 + [1, 2, 2]
    assert M.score_from_statistics(stems) == pytest.approx(0.6, abs=1e-15)  # stems weigh 0.6; all matched, one chunk
    # undefined (empty candidate, nothing matched) and negative scores are 0
    assert M.score_from_statistics([0, 3, 0, 1] + [0] * 19) == 0.0
    assert M.score_from_statistics([3, 3, 1, 1] + [0] * 19) == 0.0
    assert M.score_from_statistics([0] * 23) == 0.0
    assert M.score_from_statistics([1, 1, 0, 0, 1, 1, 0, 0] + [0] * 12 + [20, 1, 1]) == 0.0  # 1 - 0.6 * 20 ** 0.2 < 0
    assert M.score_from_statistics([1, 1, 0, 0, 1, 1, 0, 0] + [0] * 12 + [12, 1, 1]) > 0  # 1 - 0.6 * 12 ** 0.2 > 0
    assert M._divide(1.0, 0.0) == math.inf and math.isnan(M._divide(0.0, 0.0)) and M._divide(-2.0, 0.0) == -math.inf
    assert math.isnan(M._divide(math.nan, 0.0)) and M._divide(3.0, 2.0) == 1.5


def test_scores_equal_the_jars_eval_on_random_statistics(units):
    cases = units["scores"]
    assert len(cases) == 200 and sum(case["statistics"][M.CHUNKS] == 1 for case in cases) >= 50
    assert [M.score_from_statistics(case["statistics"]) for case in cases] == [case["score"] for case in cases]
    assert M.aggregate([case["statistics"] for case in cases]) == units["scores_corpus"]


def test_aggregate_is_the_jars_eval():
    first = [6, 5, 3, 2, 2, 2, 2, 2, 1, 1] + [0] * 10 + [2, 5, 5]
    second = [7, 5, 3, 3, 2, 2, 3, 3] + [0] * 12 + [3, 5, 5]
    perfect = [2, 2, 1, 1, 1, 1, 1, 1] + [0] * 12 + [1, 2, 2]
    # the jar's EVAL answers for these statistics
    assert M.aggregate([first, second]) == 0.4266123347277777
    assert M.aggregate([first, second, perfect]) == 0.45178860199600396
    # a candidate equal to its reference adds no chunk
    assert M.aggregate([perfect, perfect]) == 1.0 and M.aggregate([perfect]) == M.score_from_statistics(perfect)
    assert M.aggregate([first]) == M.score_from_statistics(first) and M.aggregate([]) == 0.0


# --- whole sentences against the jar -------------------------------------------------------------------------

def test_sentence_pairs_equal_the_jar(units, resources):
    pairs = units["pairs"]
    corpus, scores, statistics = M.meteor([p["candidate"] for p in pairs], [p["references"] for p in pairs], resources)
    assert [list(row) for row in statistics] == [p["statistics"] for p in pairs]
    assert scores == [p["score"] for p in pairs]
    assert corpus == units["pairs_corpus"]


def test_the_first_best_reference_wins_a_tie_it_was_aligned_after(resources):
    """"run" has stem and synonym matches with both candidate words, which weigh nothing in the search, so it is left
    unmatched: a score of 0, as "cat bird" has, but a higher bound, so that it is aligned first; of equal scores the
    jar keeps the first reference's statistics ("cat bird": two words), as the jar answers."""
    corpus, scores, statistics = M.meteor(["runs running"], [["cat bird", "run"]], resources)
    assert scores == [0.0] and statistics == [(2, 2) + (0,) * 21] and corpus == 0.0
    assert M.meteor(["runs running"], [["run"]], resources)[2] == [(2, 1) + (0,) * 21]
    # the other way round, the first reference is also the first aligned, and stays
    assert M.meteor(["runs running"], [["run", "cat bird"]], resources)[2] == [(2, 1) + (0,) * 21]


def test_meteor_reuses_equal_sentences_and_takes_the_first_best_reference(resources):
    corpus, scores, statistics = M.meteor(["a dog runs", "A  dog RUNS", "a dog runs"],
                                          [["the cat sleeps", "a dog runs"], ["a Dog runs"], ["a dog runs", "a dog runs"]],
                                          resources)
    assert scores == [1.0, 1.0, 1.0] and corpus == 1.0
    assert statistics[0] == statistics[1] == statistics[2] == (3, 3, 1, 1, 2, 2, 1, 1) + (0,) * 12 + (1, 3, 3)
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        M.meteor(["a", "b"], [["a"], []], resources)


def test_lowercase_as_java_17():
    """Java 17 knows no lowercase of Unicode 14's new capitals, and a final sigma does not see past them."""
    if unicodedata.unidata_version >= "14":  # each one a capital that this Python lower-cases
        assert len(M.JAVA_UNCASED) == 40 and all(capital.lower() != capital for capital in M.JAVA_UNCASED)
    assert M.java_lower("\u2c2f \ua7c0 DOG \U00010570") == "\u2c2f \ua7c0 dog \U00010570" and "\u2c2f".lower() == "\u2c5f"
    assert M.java_lower("\u0391\u03a3\u2c2f\u0391 \u2c2f\u03a3\u0391") == "\u03b1\u03c2\u2c2f\u03b1 \u2c2f\u03c3\u03b1"
    assert M.normalize("A \u2c2f \u2c5f dog.", {}) == "a \u2c2f \u2c5f dog ."
