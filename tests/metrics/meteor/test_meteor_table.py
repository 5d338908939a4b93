"""METEOR's paraphrase table: built from ``paraphrase-en.gz`` as the jar reads it (line ends, gzip members, blocks
cut anywhere), and kept in capeval's cache safely: a damaged table is noticed and built anew, a cache where it cannot
be built is one error, killed builds are cleaned up, and the folder is readable as the umask allows."""

import gzip
import io
import json
import os
import time
import warnings

import numpy as np
import pytest

from capeval.scoring import meteor as M

#: Records (probability, phrase, paraphrase) of a toy table.
RECORDS = [("0.5", "qa qb", "qc"), ("0.4", "qa", "qd qe"), ("0.3", "qa qb", "qd"), ("0.2", "qc", "qa qb"),
           ("0.1", "  qf \t qg ", "qh"), ("0.1", "a-word-longer-than-eight-bytes", "qa")]


def reference_rows(raw: bytes) -> list[list[str]]:
    """The phrases of a gzipped table as the jar reads them (UTF-8, readLine, StringTokenizer), written plainly."""
    lines = list(io.TextIOWrapper(io.BytesIO(gzip.decompress(raw)), encoding="utf-8", errors="replace", newline=None))
    lines = [line.rstrip("\n") for line in lines[:len(lines) // 3 * 3]]
    return [M.java_tokens(line) for k, line in enumerate(lines) if k % 3]


def built_rows(folder) -> list[list[str]]:
    table = M.ParaphraseTable(folder)
    names = {i: word for word, i in table.vocabulary.items()}
    phrase = np.repeat(np.arange(len(table.hashes)), np.diff(table.starts))
    rows = []
    for p, q in zip(phrase[np.argsort(table.paraphrases, kind="stable")], np.sort(table.paraphrases)):
        rows += [[names[int(w)] for w in table.words[x] if w != table.padding] for x in (p, q)]
    return rows


@pytest.mark.parametrize("block_bytes", [3, 7, 64, 1 << 20])
@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_the_table_is_read_as_the_jar_reads_it_wherever_the_blocks_end(tmp_path, monkeypatch, block_bytes, line_end):
    text = line_end.join(field for record in RECORDS for field in record)
    # two gzip members (as `cat a.gz b.gz` makes), an incomplete last record and no final line end
    raw = gzip.compress(text[:40].encode()) + gzip.compress((text[40:] + line_end + "0.9" + line_end + "qz").encode())
    (tmp_path / "table.gz").write_bytes(raw)
    monkeypatch.setattr(M, "_BLOCK_BYTES", block_bytes)
    M.ParaphraseTable.build(tmp_path / "table.gz", tmp_path / "table", show=False)
    expected = reference_rows(raw)
    assert len(expected) == 2 * len(RECORDS)
    # the paraphrases of each phrase in the file's order, so the records come back grouped by phrase
    assert sorted(map(tuple, built_rows(tmp_path / "table"))) == sorted(map(tuple, expected))
    assert M.table_problem(tmp_path / "table") is None


def test_a_cut_table_file_is_one_error(tmp_path):
    (tmp_path / "table.gz").write_bytes(gzip.compress(b"0.5\nqa\nqb\n" * 1000)[:-20])
    with pytest.raises(EOFError, match="is cut short: reinstall pycocoevalcap"):
        M.ParaphraseTable.build(tmp_path / "table.gz", tmp_path / "table", show=False)


# --- the cache -----------------------------------------------------------------------------------------------

@pytest.fixture
def jar(tmp_path, monkeypatch):
    """A stand-in for the jar: its bytes name the cache folder; its data/paraphrase-en.gz is a toy table."""
    monkeypatch.setenv("CAPEVAL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    with gzip.open(tmp_path / "data" / "paraphrase-en.gz", "wt", encoding="utf-8") as file:
        file.write("".join(f"{p}\n{a}\n{b}\n" for p, a, b in RECORDS))
    (tmp_path / "meteor-1.5.jar").write_bytes(b"not a real jar")
    return tmp_path / "meteor-1.5.jar"


def damage(folder, how):
    if how == "random bytes in hashes.npy":
        with open(folder / "hashes.npy", "r+b") as file:
            file.seek(-8, os.SEEK_END)
            file.write(os.urandom(8))
    elif how == "random bytes in words.npy":
        with open(folder / "words.npy", "r+b") as file:
            file.seek(130)
            file.write(b"\xff\xfe")
    elif how == "emptied vocabulary.txt":
        (folder / "vocabulary.txt").write_text("")
    elif how == "cut vocabulary.txt":
        (folder / "vocabulary.txt").write_bytes((folder / "vocabulary.txt").read_bytes()[:-3])
    elif how == "changed multiplier":
        meta = json.loads((folder / "table.json").read_text())
        (folder / "table.json").write_text(json.dumps({**meta, "multiplier": meta["multiplier"] + 2}))
    elif how == "table.json not JSON":
        (folder / "table.json").write_text("{")
    elif how == "table.json a list":
        (folder / "table.json").write_text("[]")
    elif how == "table.json gone":
        (folder / "table.json").unlink()
    elif how == "starts.npy gone":
        (folder / "starts.npy").unlink()
    elif how == "paraphrases.npy a folder":
        (folder / "paraphrases.npy").unlink()
        (folder / "paraphrases.npy").mkdir()


DAMAGES = ["random bytes in hashes.npy", "random bytes in words.npy", "emptied vocabulary.txt", "cut vocabulary.txt",
           "changed multiplier", "table.json not JSON", "table.json a list", "table.json gone", "starts.npy gone",
           "paraphrases.npy a folder"]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_table_is_noticed_and_built_anew(jar, how):
    folder = M.build_paraphrase_table(jar, show=False)
    sound = {name: (folder / name).read_bytes() for name in (*M.TABLE_FILES, "table.json")}
    assert M.table_problem(folder) is None
    damage(folder, how)
    assert M.table_problem(folder) is not None
    with pytest.warns(M.MeteorTableWarning, match=rf"paraphrase table in .*{folder.name} is damaged \(.+\): building it anew"):
        assert M.build_paraphrase_table(jar, show=False) == folder
    assert {name: (folder / name).read_bytes() for name in sound} == sound
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # healed: no second warning
        M.build_paraphrase_table(jar, show=False)
    assert sorted(path.name for path in folder.parent.iterdir()) == [folder.name]  # nothing left beside it


def test_a_cache_where_the_table_cannot_be_built_is_one_error(jar, tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "meteor").write_text("a file where the folder should be")
    with pytest.raises(M.MeteorCacheError, match=r"cannot be built in .*meteor \(.+\): make it writable or point "
                                                 r"CAPEVAL_CACHE at a writable folder"):
        M.build_paraphrase_table(jar, show=False)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_sound_table_in_a_read_only_cache_is_used(jar):
    folder = M.build_paraphrase_table(jar, show=False)
    for path in (folder, folder.parent):
        path.chmod(0o555)
    try:
        assert M.build_paraphrase_table(jar, show=False) == folder
        assert M.ParaphraseTable(folder).find([["qa", "qb"]])[2].tolist() == [1, 2, 1]
    finally:
        for path in (folder, folder.parent):
            path.chmod(0o755)


def test_a_build_interrupted_or_killed_leaves_no_folder_for_good(jar, monkeypatch):
    root = M.build_paraphrase_table(jar, show=False).parent
    for name in M.TABLE_FILES:
        (root / next(root.iterdir()) / name).unlink()

    def interrupted(source, folder, show=None):
        (folder / "hashes.npy").write_bytes(b"half")
        raise KeyboardInterrupt

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt), pytest.warns(M.MeteorTableWarning):
        patched.setattr(M.ParaphraseTable, "build", staticmethod(interrupted))
        M.build_paraphrase_table(jar, show=False)
    assert not [path for path in root.iterdir() if path.name.startswith(".building-")]
    # A SIGKILL leaves its folder: the next look at the cache removes it once it is old enough to be no live build.
    killed, live = root / ".building-123-dead", root / ".building-456-live"
    for path in (killed, live):
        path.mkdir()
        (path / "hashes.npy").write_bytes(b"half")
    old = time.time() - M.STALE_BUILD_SECONDS - 60
    os.utime(killed, (old, old))
    with pytest.warns(M.MeteorTableWarning):
        M.build_paraphrase_table(jar, show=False)
    assert not killed.exists() and live.exists()


def test_the_table_folder_is_readable_as_the_umask_allows(jar):
    previous = os.umask(0o022)
    try:
        folder = M.build_paraphrase_table(jar, show=False)
    finally:
        os.umask(previous)
    assert folder.stat().st_mode & 0o777 == 0o755
    assert {(folder / name).stat().st_mode & 0o777 for name in (*M.TABLE_FILES, "table.json")} == {0o644}


def test_the_build_shows_a_progress_bar_once_it_takes_a_while(jar, monkeypatch, capsys):
    monkeypatch.setattr("capeval.progress.SHOW_AFTER_SECONDS", 0.0)
    M.build_paraphrase_table(jar, show=True)
    assert "METEOR: building its paraphrase table (once per machine)" in capsys.readouterr().err


def test_words_are_numbered_by_their_bytes_whatever_their_hashes(monkeypatch):
    """With a multiplier of 1 every word falls into slot 0 and words whose 8-byte pieces are swapped share a hash:
    only the length and byte checks tell them apart."""
    monkeypatch.setattr(M, "_HASH_MULTIPLIERS", (1, M._HASH_MULTIPLIERS[0]))
    batches = [["abcdefghijklmnop", "dog", "ijklmnopabcdefgh", "abcdefgh", "dog", "ab"],
               ["abcdefghi", "abcdefgh", "cat", "abcdefghijklmnopq", "ijklmnopabcdefgh", "dog"],
               ["a-very-long-word-of-thirty-bytes", "abcdefghijklmnop", "ab\x00"]]
    words, expected = M.TableWords(), {}
    for batch in batches:
        text = " ".join(batch).encode()
        starts = np.cumsum([0] + [len(word) + 1 for word in batch[:-1]])
        ids = words.ids(text, starts, np.array([len(word) for word in batch]))
        assert ids.tolist() == [expected.setdefault(word, len(expected)) for word in batch]
    assert words.numbers == expected


def test_a_last_record_without_its_line_end_is_read(tmp_path):
    (tmp_path / "table.gz").write_bytes(gzip.compress(b"0.5\nqa\nqb\n0.4\nqc\nqd"))
    M.ParaphraseTable.build(tmp_path / "table.gz", tmp_path / "table", show=False)
    assert sorted(map(tuple, built_rows(tmp_path / "table"))) == [("qa",), ("qb",), ("qc",), ("qd",)]


def test_empty_phrases_at_the_end_of_a_block_keep_their_rows():
    words = M.TableWords()
    assert M.phrase_rows(b"0.1\nqa\nqb\n0.2\n\n\n", words).tolist() == [[0], [1], [-1], [-1]]
