"""``capeval download spice``: Stanford CoreNLP 3.6.0's two jars out of its release archive, from a URL (through
capeval's checkpoint downloads: whole, not an HTML page) or a local copy, only with the archive's SHA-1."""

import hashlib
import io
import zipfile

import pytest

from capeval import cli
from capeval.checkpoints import cached_path_for
from capeval.models import ModelUnavailableError
from capeval.scoring import spice

from fixtures.loopback import download_cache, files_handler, serving

JAR, MODELS = (b"PK-code " * 5000, b"PK-models " * 20000)


def release_archive(members=None) -> bytes:
    members = members if members is not None else {
        "stanford-corenlp-full-2015-12-09/stanford-corenlp-3.6.0.jar": JAR,
        "stanford-corenlp-full-2015-12-09/stanford-corenlp-3.6.0-models.jar": MODELS,
        "stanford-corenlp-full-2015-12-09/README.txt": b"Stanford CoreNLP",
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, body in members.items():
            zipped.writestr(name, body)
    return buffer.getvalue()


ARCHIVE = release_archive()
ARCHIVE_SHA1 = hashlib.sha1(ARCHIVE).hexdigest()


@pytest.fixture(scope="module")
def server():
    moved = b"<html><body>The file moved.</body></html>"
    with serving(files_handler({"/software/stanford-corenlp-full-2015-12-09.zip": (ARCHIVE, "application/zip"),
                                "/software/moved": (moved, "text/html")})) as url:
        yield url


@pytest.fixture
def cache(tmp_path, monkeypatch):
    return download_cache(tmp_path / "cache", monkeypatch)


def installed(cache):
    folder = cache / "spice" / "stanford-corenlp-3.6.0"
    return {path.name: path.read_bytes() for path in folder.iterdir()} if folder.is_dir() else {}


def test_the_release_archive_and_its_checksum_are_pinned():
    assert spice.CORENLP_URL == "https://nlp.stanford.edu/software/stanford-corenlp-full-2015-12-09.zip"
    assert len(spice.CORENLP_SHA1) == 40 and int(spice.CORENLP_SHA1, 16)


def test_a_download_is_checked_extracted_and_removed(server, cache):
    url = f"{server}/software/stanford-corenlp-full-2015-12-09.zip"
    assert spice.install_corenlp(url, sha1=ARCHIVE_SHA1) == cache / "spice" / "stanford-corenlp-3.6.0"
    assert installed(cache) == {"stanford-corenlp-3.6.0.jar": JAR, "stanford-corenlp-3.6.0-models.jar": MODELS}
    assert not cached_path_for(url).exists()  # the archive is mostly the jars: not kept twice
    assert spice.corenlp_jars() == [cache / "spice" / "stanford-corenlp-3.6.0" / name for name in spice.CORENLP_JARS]


def test_a_download_with_another_checksum_is_refused_and_removed(server, cache):
    url = f"{server}/software/stanford-corenlp-full-2015-12-09.zip"
    with pytest.raises(ModelUnavailableError, match=f"has SHA-1 {ARCHIVE_SHA1}, not {spice.CORENLP_SHA1}"):
        spice.install_corenlp(url)
    assert installed(cache) == {} and not cached_path_for(url).exists()


def test_an_html_page_in_the_archives_place_is_refused(server, cache):
    with pytest.raises(ModelUnavailableError, match="returned an HTML page"):
        spice.install_corenlp(f"{server}/software/moved", sha1=ARCHIVE_SHA1)
    assert installed(cache) == {}


def test_offline_nothing_is_downloaded(server, cache, monkeypatch):
    monkeypatch.setenv("CAPEVAL_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="offline mode"):
        spice.install_corenlp(f"{server}/software/stanford-corenlp-full-2015-12-09.zip", sha1=ARCHIVE_SHA1)


def test_a_local_copy_is_installed_and_kept(cache, tmp_path):
    archive = tmp_path / "stanford-corenlp-full-2015-12-09.zip"
    archive.write_bytes(ARCHIVE)
    spice.install_corenlp(archive, sha1=ARCHIVE_SHA1)
    assert installed(cache)["stanford-corenlp-3.6.0-models.jar"] == MODELS and archive.exists()


def test_a_local_copy_with_another_checksum_is_refused_and_kept(cache, tmp_path):
    archive = tmp_path / "corenlp.zip"
    archive.write_bytes(ARCHIVE)
    with pytest.raises(ModelUnavailableError, match="has SHA-1"):
        spice.install_corenlp(archive)
    assert archive.exists() and installed(cache) == {}


@pytest.mark.parametrize("body, message", [(b"not a zip at all", "not the CoreNLP 3.6.0 release archive"),
                                           (release_archive({"other/README.txt": b"x"}), "not the CoreNLP 3.6.0 release archive")])
def test_an_archive_without_the_jars_is_refused(cache, tmp_path, body, message):
    archive = tmp_path / "corenlp.zip"
    archive.write_bytes(body)
    with pytest.raises(ModelUnavailableError, match=message):
        spice.install_corenlp(archive, sha1=hashlib.sha1(body).hexdigest())
    assert installed(cache) == {}


def test_the_command_installs_from_a_local_copy_once(cache, tmp_path, monkeypatch, capsys):
    archive = tmp_path / "stanford-corenlp-full-2015-12-09.zip"
    archive.write_bytes(ARCHIVE)
    monkeypatch.setattr(spice, "CORENLP_SHA1", ARCHIVE_SHA1)
    assert cli.main(["download", "spice", "--from", str(archive)]) == 0
    assert capsys.readouterr().out.startswith(f"- installed Stanford CoreNLP 3.6.0 from {archive}\n")
    assert spice.corenlp_jars()[0].parent == cache / "spice" / "stanford-corenlp-3.6.0"
    assert cli.main(["download", "spice"]) in (0, 1)  # nothing to fetch (1 where Java, which capeval cannot fetch, is absent)
    assert "- Stanford CoreNLP 3.6.0: here\n" in capsys.readouterr().out


def test_the_command_refuses_a_wrong_archive_in_one_line(cache, tmp_path, capsys):
    archive = tmp_path / "corenlp.zip"
    archive.write_bytes(ARCHIVE)
    assert cli.main(["download", "spice", "--from", str(archive)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capeval download: ") and "has SHA-1" in err and err.count("\n") == 1
    assert cli.main(["download", "spice", "--from", str(tmp_path / "absent.zip")]) == 2
    assert "does not exist" in capsys.readouterr().err
