"""HTTP for the judge's endpoint, bounded in every way the endpoint could stretch it.

- **Time:** one deadline for the whole exchange (connect, request, headers, body). A socket
  timeout alone is per read: an endpoint sending a byte every few seconds would never trip
  it. A timer shuts the socket down at the deadline, which ends any read at once.
- **Size:** the answer is read up to a cap and refused past it (a declared length past the
  cap is refused before reading), so a runaway server cannot fill memory or the study.
- **Redirects:** followed only to the same scheme, host and port, repeating the request;
  one to anywhere else is refused by name, so the prompts (the study's texts) never go to
  a URL the user did not give.

The standard library's `http.client` does the protocol; proxies from the environment are
not used, for the same reason as the redirects.

**Connections** are kept alive and reused, a few per host and port (`Pool`): a run of many
short answers does not pay a TCP (and TLS) handshake per item. A connection goes back to the
pool only after an answer read whole that did not ask to close; one the server closed while
idle fails at its next request before any answer, and that request is sent once more on a
new connection.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from meaningbench.errors import UserError

MAX_REDIRECTS = 3
READ_CHUNK = 65536
# How much of an error answer is quoted in a message.
QUOTED_CHARS = 200


@dataclass(frozen=True)
class Limits:
    timeout_s: float  # the whole exchange
    max_bytes: int  # the answer's body


@dataclass(frozen=True)
class HttpAnswer:
    url: str  # where it came from, after same-origin redirects
    status: int
    body: bytes


def one_line(text: str, limit: int = QUOTED_CHARS) -> str:
    """A server's text as part of a one-line message: whitespace runs (newlines included)
    as one space, shortened to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def unreachable(url: str, exc: BaseException) -> UserError:
    text = one_line(str(getattr(exc, "reason", None) or exc)) or type(exc).__name__
    return UserError(f"cannot reach the judge endpoint {url}: {text}")


def fetch(url: str, body: bytes | None, limits: Limits) -> HttpAnswer:
    """POST `body` (GET when None) to `url` within `limits`; any HTTP status is returned,
    a redirect to the same origin is followed, anything else is a one-line `UserError`."""
    deadline = time.monotonic() + limits.timeout_s
    for _hop in range(MAX_REDIRECTS + 1):
        status, data, location = _exchange(url, body, limits, deadline)
        if location is None:
            return HttpAnswer(url, status, data)
        url = _same_origin_target(url, location, status)
    raise UserError(f"the judge endpoint {url} redirects more than {MAX_REDIRECTS} times")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _same_origin_target(url: str, location: str, status: int) -> str:
    target = urljoin(url, location.strip())
    if _origin(target) != _origin(url):
        raise UserError(
            f"the judge endpoint {url} redirects (HTTP {status}) to {one_line(target)}, another "
            "host or port: not followed; give that URL as backend= if it is the endpoint"
        )
    return target


class _Deadline:
    """Shuts the socket down when the time is up; `expired` says it did. The socket itself,
    not the connection's: http.client hands it over to the response and forgets it."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self.sock, self.expired = sock, False
        self.timer = threading.Timer(max(0.0, seconds), self._cut)
        self.timer.daemon = True

    def _cut(self) -> None:
        self.expired = True
        with suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        self.timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.timer.cancel()


def _connection(url: str, timeout_s: float) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout_s)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)


class Pool:
    """Idle kept-alive connections by (scheme, host, port), at most `keep` each."""

    def __init__(self, keep: int = 64) -> None:
        self.keep = keep
        self.lock = threading.Lock()
        self.idle: dict[tuple[str, str, int | None], list[http.client.HTTPConnection]] = {}
        self.opened = 0  # connections made: what the reuse saves shows here

    def take(self, url: str) -> http.client.HTTPConnection | None:
        with self.lock:
            idle = self.idle.get(_origin(url))
            return idle.pop() if idle else None

    def give(self, url: str, conn: http.client.HTTPConnection) -> None:
        with self.lock:
            idle = self.idle.setdefault(_origin(url), [])
            if len(idle) < self.keep:
                idle.append(conn)
                return
        conn.close()


POOL = Pool()
# What a kept connection the server closed while idle raises at its next request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def _exchange(
    url: str, body: bytes | None, limits: Limits, deadline: float
) -> tuple[int, bytes, str | None]:
    """One request: (status, body, the redirect's Location or None), on a kept connection
    when there is one (sent again once on a new one if that had been closed)."""
    kept = POOL.take(url)
    if kept is not None:
        try:
            return _exchange_on(kept, url, body, limits, deadline)
        except _Stale:
            pass
    return _exchange_on(None, url, body, limits, deadline)


class _Stale(Exception):
    """A kept connection turned out closed before any answer came on it."""


def _exchange_on(
    conn: http.client.HTTPConnection | None,
    url: str,
    body: bytes | None,
    limits: Limits,
    deadline: float,
) -> tuple[int, bytes, str | None]:
    late = UserError(f"the judge endpoint {url} did not answer within {limits.timeout_s:g} s")
    if deadline <= time.monotonic():
        raise late
    kept = conn is not None
    if conn is None:
        conn = _connection(url, deadline - time.monotonic())
        try:
            conn.connect()  # one operation: the socket timeout bounds it
        except OSError as exc:
            raise (late if deadline <= time.monotonic() else unreachable(url, exc)) from exc
        with POOL.lock:
            POOL.opened += 1
    assert conn.sock is not None
    conn.sock.settimeout(max(0.001, deadline - time.monotonic()))
    done = False
    try:
        with _Deadline(conn.sock, deadline - time.monotonic()) as clock:
            try:
                status, data, location, reusable = _request(conn, url, body, limits.max_bytes)
            except _STALE as exc:
                if kept and not clock.expired:
                    raise _Stale from exc
                raise (late if clock.expired else unreachable(url, exc)) from exc
            except (OSError, http.client.HTTPException) as exc:
                raise (late if clock.expired else unreachable(url, exc)) from exc
            if clock.expired:
                raise late
        done = reusable
        return status, data, location
    finally:
        if done:
            POOL.give(url, conn)
        else:
            conn.close()


def _request(
    conn: http.client.HTTPConnection, url: str, body: bytes | None, max_bytes: int
) -> tuple[int, bytes, str | None, bool]:
    """(status, body, Location, whether the connection may carry another request)."""
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request("GET" if body is None else "POST", path, body, headers)
    with conn.getresponse() as response:
        location = response.getheader("Location")
        if 300 <= response.status < 400 and location:
            data = _read_capped(response, url, max_bytes)  # read whole: the connection goes on
            return response.status, data, location, not response.will_close
        data = _read_capped(response, url, max_bytes)
        return response.status, data, None, not response.will_close


def _read_capped(response: http.client.HTTPResponse, url: str, max_bytes: int) -> bytes:
    too_big = UserError(
        f"the judge endpoint {url} answered more than {max_bytes:,} bytes: not read further"
    )
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise too_big
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(READ_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)
