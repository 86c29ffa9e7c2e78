"""A local fake of an OpenAI-compatible judge endpoint (http.server on 127.0.0.1, in a
thread), whose answer each test sets: a well-formed chat completion, raw bytes, a status
with a body, a redirect, a trickle, an endless stream, or a slow answer."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The answer "4" with its top alternatives; "x" is not a score and is left out.
TOP = [("4", 0.6), ("3", 0.3), ("x", 0.1)]


def completion(content: str, tokens: Any = None) -> dict[str, Any]:
    """A chat-completions answer; `tokens` is its logprobs.content (None: the answer as one
    token with TOP as its alternatives)."""
    if tokens is None:
        tokens = [
            {
                "token": content,
                "logprob": math.log(TOP[0][1]),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in TOP],
            }
        ]
    return {
        "choices": [
            {"message": {"role": "assistant", "content": content}, "logprobs": {"content": tokens}}
        ],
        "usage": {"prompt_tokens": 42},
    }


Reply = Callable[["Handler", dict[str, Any]], None]


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, *args: object) -> None:
        return None

    def send_bytes(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for key, value in (headers or {"Content-Length": str(len(data))}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, code: int, body: Any) -> None:
        self.send_bytes(code, json.dumps(body).encode("utf-8"))

    def do_GET(self) -> None:
        self.server.requests.append({"path": self.path, "method": "GET"})
        self.send_json(200, {"data": [{"id": "judge"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "method": "POST", **body})
        self.server.reply(self, body)
        self.server.answered += 1


def _well_formed(h: Handler, _body: dict[str, Any]) -> None:
    h.send_json(200, completion("4"))


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, reply: Reply = _well_formed) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.answered = 0  # answers sent whole

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def fake_endpoint(reply: Reply | None = None) -> Iterator[FakeServer]:
    server = FakeServer(reply or _well_formed)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def trickle(every_s: float, length: int = 1000) -> Reply:
    """Headers at once, then the body one byte at a time: never silent for `every_s`."""

    def reply(h: Handler, _body: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(length))
        h.end_headers()
        for _ in range(length):
            try:
                h.wfile.write(b" ")
                h.wfile.flush()
            except OSError:
                return
            time.sleep(every_s)

    return reply


def endless(chunk: bytes = b" " * 65536, limit: int = 64 << 20) -> Reply:
    """A body without a declared length that goes on until the client leaves (or `limit`)."""

    def reply(h: Handler, _body: dict[str, Any]) -> None:
        h.send_response(200)
        h.end_headers()
        sent = 0
        while sent < limit:
            try:
                h.wfile.write(chunk)
            except OSError:
                return
            sent += len(chunk)

    return reply


def slow(seconds: float, content: str = "4") -> Reply:
    def reply(h: Handler, _body: dict[str, Any]) -> None:
        time.sleep(seconds)
        h.send_json(200, completion(content))

    return reply
