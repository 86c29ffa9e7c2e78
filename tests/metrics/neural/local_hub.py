"""A model hub on 127.0.0.1 that serves one folder as a repository, as the Hugging Face Hub
answers `huggingface_hub`'s downloads (a HEAD with the commit, the ETag and the size, then
the file; a missing file is 404 with `EntryNotFound`). With `HF_ENDPOINT` pointing at it, a
process downloads a model as a user online does, here without the network."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _handler(
    repo_id: str, folder: Path, seen: list[str]
) -> type[http.server.BaseHTTPRequestHandler]:
    prefix = f"/{repo_id}/resolve/"

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet: the test reads `seen`
            pass

        def _file(self) -> Path | None:
            path = self.path.split("?")[0]
            if not path.startswith(prefix):
                return None
            name = path[len(prefix) :].split("/", 1)[-1]
            f = folder / name
            return f if f.is_file() else None

        def _answer(self, body: bool) -> None:
            seen.append(f"{self.command} {self.path}")
            f = self._file()
            if f is None:
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = f.read_bytes()
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def do_HEAD(self) -> None:  # noqa: N802 (the http.server protocol's name)
            self._answer(False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(True)

    return Handler


@contextmanager
def local_hub(repo_id: str, folder: Path) -> Iterator[tuple[str, list[str]]]:
    """(endpoint URL, the requests it saw) while the hub serves `folder` as `repo_id`."""
    seen: list[str] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(repo_id, folder, seen))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
