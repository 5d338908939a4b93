"""capeval.file_contents: a data file is known by its bytes; a digest is remembered only while the file's status
proves it unchanged."""

import os

from capeval import file_contents
from capeval.file_contents import content_key, file_digest


def test_a_rewrite_within_one_clock_tick_is_seen(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"1": ["dog"]}')
    first = file_digest(path)
    stat = path.stat()
    path.write_text('{"1": ["cat"]}')  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_digest(path) != first
    assert content_key([path]) == ((str(path), file_digest(path)),)


def test_a_settled_files_digest_is_remembered_and_a_fresh_ones_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(file_contents, "_DIGESTS", {})
    path = tmp_path / "a.txt"
    path.write_text("dog")
    digest = file_digest(path)
    assert file_contents._DIGESTS == {}  # written just now: its status proves nothing yet
    now = file_contents.time.time()
    monkeypatch.setattr(file_contents.time, "time", lambda: now + file_contents.SETTLED_SECONDS + 0.5)
    assert file_digest(path) == digest and list(file_contents._DIGESTS.values()) == [digest]
    (status,) = file_contents._DIGESTS
    file_contents._DIGESTS[status] = "remembered"
    assert file_digest(path) == "remembered"  # read from memory, not from the file
    monkeypatch.setattr(file_contents.time, "time", lambda: now + file_contents.SETTLED_SECONDS - 0.5)
    file_contents._DIGESTS.clear()
    file_digest(path)
    assert file_contents._DIGESTS == {}


def test_a_settled_file_rewritten_with_the_same_size_is_read_again(tmp_path, monkeypatch):
    import time

    monkeypatch.setattr(file_contents, "_DIGESTS", {})
    path = tmp_path / "a.txt"
    path.write_text("dog")
    now = file_contents.time.time()
    monkeypatch.setattr(file_contents.time, "time", lambda: now + file_contents.SETTLED_SECONDS + 0.5)
    first = file_digest(path)
    assert file_contents._DIGESTS  # remembered
    time.sleep(0.05)  # past the file system clock's tick: the rewrite gets a new change time
    path.write_text("cat")
    assert file_digest(path) != first
