"""What download tests share: an HTTP server on this machine only, and a fresh cache where downloads are allowed."""

import contextlib
import http.server
import threading
from pathlib import Path
from typing import Iterator

from capeval.settings import OFFLINE_VARIABLES


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 (a free port) in a thread; yields the server's base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def download_cache(folder: Path, monkeypatch) -> Path:
    """capeval's cache in ``folder``, with offline mode off (the tests' conftest turns it on)."""
    monkeypatch.setenv("CAPEVAL_CACHE", str(folder))
    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return folder


def files_handler(files: dict[str, tuple[bytes, str]]) -> type[http.server.BaseHTTPRequestHandler]:
    """A handler serving ``path -> (body, Content-Type)``, whole, with its length; any other path is a 404 page."""

    class Files(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body, kind = files.get(self.path, (b"<html><body>Not found</body></html>", "text/html"))
            self.send_response(200 if self.path in files else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Files
