"""A checkpoint download is cached only when whole and checked: cut bodies, HTML pages, a wrong SHA-256 and plain
http:// to another host are refused, and nothing half-written is left to be returned later."""

import hashlib
import http.server

import pytest

from capeval import checkpoints
from capeval.models import ModelUnavailableError

from fixtures.loopback import download_cache, serving

BODY = b"\\x80\\x02 pretend torch checkpoint " * 1000
#: A page sent with no Content-Type header at all (some mirrors and proxies do): only its first bytes tell.
BARE_PAGE = b"\n<!DOCTYPE html>\n<html><head><title>Moved</title></head><body>The file moved.</body></html>"
#: A checkpoint shorter than the bytes sniffed for HTML.
SMALL_BODY = b"PK\x03\x04 tiny zip"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        if self.path == "/umic.pt":
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        elif self.path in ("/bare/umic.pt", "/small/umic.pt"):
            body = BARE_PAGE if self.path.startswith("/bare") else SMALL_BODY
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/cut/umic.pt":
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY[: len(BODY) // 3])  # the connection closes early
        else:  # a login page served in the file's place
            page = b"<html><body>Please sign in</body></html>"
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    with serving(Handler) as url:
        yield url


@pytest.fixture
def cache(tmp_path, monkeypatch):
    return download_cache(tmp_path, monkeypatch)


def cached_files(cache):
    return sorted(p.name for p in cache.rglob("*") if p.is_file())


def test_a_complete_download_is_cached_once(server, cache):
    path = checkpoints.resolve_checkpoint(f"{server}/umic.pt", sha256=hashlib.sha256(BODY).hexdigest())
    assert path.read_bytes() == BODY and cached_files(cache) == ["umic.pt"]
    assert checkpoints.resolve_checkpoint(f"{server}/umic.pt") == path


@pytest.mark.parametrize("path, message", [
    ("/cut/umic.pt", "cut short"),
    ("/login/umic.pt", "HTML page"),
    ("/bare/umic.pt", r"\(http://127.0.0.1:[0-9]+/bare/umic.pt returned an HTML page, not the checkpoint"),
])
def test_a_bad_download_is_never_cached(server, cache, path, message):
    for _ in range(2):  # and the second call does not return what the first one left
        with pytest.raises(ModelUnavailableError, match=message):
            checkpoints.resolve_checkpoint(f"{server}{path}")
    assert [name for name in cached_files(cache) if not name.startswith(".")] == []  # a cut one is kept hidden, to resume


def test_a_body_shorter_than_the_sniffed_bytes_is_cached_whole(server, cache):
    path = checkpoints.resolve_checkpoint(f"{server}/small/umic.pt", sha256=hashlib.sha256(SMALL_BODY).hexdigest())
    assert path.read_bytes() == SMALL_BODY


def test_a_wrong_published_digest_is_refused(server, cache):
    with pytest.raises(ModelUnavailableError, match="SHA-256 .* not the published 00ff"):
        checkpoints.resolve_checkpoint(f"{server}/umic.pt", sha256="00ff")
    assert cached_files(cache) == []


def test_plain_http_only_from_this_machine(cache):
    with pytest.raises(ValueError, match="plain http:// from 'example.org'"):
        checkpoints.resolve_checkpoint("http://example.org/umic.pt")
    checkpoints.check_url("https://example.org/umic.pt")
    checkpoints.check_url("http://localhost:8000/umic.pt")
