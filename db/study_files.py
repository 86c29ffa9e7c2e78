"""Every handle this process holds on a study file, in one place, and the two rules that
keep SQLite's locks on it.

Why. SQLite's locks on a study are POSIX advisory locks, and POSIX locks belong to the
process, not to the descriptor: closing ANY descriptor of the study file in this process
(a plain `open()` and `close()`, `shutil.copy`, `Path.read_bytes`, a hash of the file, a
second copy of the SQLite library) silently drops every lock every connection of this
process holds on it. The next process whose connection closes then believes it is the
last one: it checkpoints and deletes the `-wal` and `-shm` under this process's live
connections, whose next read answers "database disk image is malformed". Connections made
through the one SQLite library that the `sqlite3` module loads are safe: SQLite shares
one record per file among them and never closes a descriptor while another of its
connections holds a lock (measured: a `mode=ro`, `immutable=1` or second read-write
connection opened and closed beside a live one keeps the process's locks).

The rules, kept here for every process that opens a study:
1. Nothing in the process may open a study file, its `-wal`, `-shm` or `-journal` outside
   SQLite while a study is open: an audit hook refuses such an `open()` with an error that
   names the file, instead of letting it drop the locks unnoticed.
2. Before each transaction a study checks that the `-wal` its connections hold is the one
   on disk (see `replaced_wal`). When it is not (something outside this process's control
   deleted or replaced it), every connection of this process to that study is closed, so
   that none keeps reading the deleted log and its shared memory, the event is logged, and
   the study is opened again on the files that are now there.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

LOG = logging.getLogger("meaningbench.db")

# The files SQLite keeps beside a study; a plain open of any of them drops the locks.
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


class StudyFileOpenRefused(PermissionError):
    """A plain open() of a study file that this process holds open through SQLite."""


class StudyConnection(sqlite3.Connection):
    """A raw connection that the registry can hold weakly (sqlite3.Connection cannot be)."""


_LOCK = threading.RLock()
# Real path of an open study → the things to close when its log was replaced.
_CLOSERS: dict[str, weakref.WeakSet[Any]] = {}
_HELD: dict[str, int] = {}  # real path → open Study objects
_GUARDED: frozenset[str] = frozenset()  # the files rule 1 protects (read by the hook)
_hook_installed = False


def real(path: str | Path) -> str:
    return os.path.realpath(os.fspath(path))


def hold(path: str | Path) -> None:
    """A study at `path` is open in this process (until `release`)."""
    global _GUARDED, _hook_installed
    key = real(path)
    with _LOCK:
        _HELD[key] = _HELD.get(key, 0) + 1
        _GUARDED = _guarded_names()
        if not _hook_installed:
            sys.addaudithook(_refuse_plain_open)
            _hook_installed = True


def release(path: str | Path) -> None:
    global _GUARDED
    key = real(path)
    with _LOCK:
        left = _HELD.get(key, 0) - 1
        if left > 0:
            _HELD[key] = left
        else:
            _HELD.pop(key, None)
            _CLOSERS.pop(key, None)
        _GUARDED = _guarded_names()


def _guarded_names() -> frozenset[str]:
    return frozenset(f"{p}{s}" for p in _HELD for s in SQLITE_SUFFIXES)


def _refuse_plain_open(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _GUARDED:
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return
    try:
        name = os.path.realpath(os.fsdecode(target))
    except (TypeError, ValueError):
        return
    if name in _GUARDED:
        raise StudyFileOpenRefused(
            f"{name}: a study file this program holds open may only be read through SQLite "
            "(opening it directly would drop the program's locks on it)"
        )


def track(path: str | Path, thing: Any) -> None:
    """`thing` (a raw connection, a Study) holds the study at `path`: `reopen_if_replaced`
    closes it when the log was replaced. Held weakly."""
    with _LOCK:
        _CLOSERS.setdefault(real(path), weakref.WeakSet()).add(thing)
    if isinstance(thing, sqlite3.Connection):
        leave_log_if_guest(thing)


# Set in the child processes the app starts for its jobs (see `work_as_guest`).
_GUEST = False


def leave_log_if_guest(conn: sqlite3.Connection) -> None:
    """Every connection a guest process makes to a study goes through here."""
    if _GUEST:
        _no_checkpoint_on_close(conn)


def work_as_guest() -> None:
    """This process works on studies that a longer-lived process (the app that started
    it) holds open: none of its connections checkpoints on close, so none deletes a study's
    `-wal` and `-shm`.

    Why: SQLite deletes the log when the connection that closes believes it is the last
    one, which it decides from the locks other processes hold. Were the app's locks ever
    dropped (see the module's docstring: one close of a descriptor of the study, from code
    that no audit hook sees, is enough), the job ending beside it would delete the log the
    app is using. A guest never does; the app checkpoints and tidies when it closes the
    study, as the study's real last user. What a guest committed is in the log, which every
    later connection reads, so nothing is lost by leaving the checkpoint to the app."""
    global _GUEST
    _GUEST = True


def connect(uri: str, path: str | Path, **kwargs: Any) -> sqlite3.Connection:
    """A raw connection to a study (an SQLite URI) that the registry knows of.

    Usable from any thread: the registry may have to close it from the thread that found
    the study's log replaced."""
    conn = sqlite3.connect(
        uri, uri=True, factory=StudyConnection, check_same_thread=False, **kwargs
    )
    track(path, conn)
    return conn


def is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 - raises once the connection is closed
    except sqlite3.ProgrammingError:
        return False
    return True


SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE = 1006


def _no_checkpoint_on_close(conn: sqlite3.Connection) -> None:
    """SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on `conn`: closing it never checkpoints, nor
    deletes the `-wal` and `-shm`. Through Connection.setconfig where Python has it,
    else through the SQLite library this process loaded; left as it is where neither
    can be reached safely (the handle must name this very connection's file)."""
    setconfig = getattr(conn, "setconfig", None)
    if setconfig is not None:
        setconfig(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
        return
    lib = _sqlite_library()
    if lib is None:
        return
    import ctypes

    # CPython's sqlite3 connection object starts with its `sqlite3 *` after the object
    # header; checked against the file SQLite says that handle has open.
    handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value
    name = lib.sqlite3_db_filename(handle, b"main")
    listed = conn.execute("PRAGMA database_list").fetchone()
    if not handle or name is None or os.fsdecode(name) != listed[2]:
        return
    lib.sqlite3_db_config(
        ctypes.c_void_p(handle),
        ctypes.c_int(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE),
        ctypes.c_int(1),
        ctypes.c_void_p(None),
    )


def _sqlite_library() -> Any:
    import ctypes

    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            found = {line.split()[-1] for line in maps if "libsqlite3" in line}
    except OSError:
        return None
    if len(found) != 1:  # none (built into Python) or several: no safe choice
        return None
    lib = ctypes.CDLL(found.pop())
    lib.sqlite3_db_filename.restype = ctypes.c_char_p
    lib.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.sqlite3_db_config.restype = ctypes.c_int
    return lib


# Per study: this process's descriptors on its `-wal` and `-shm` as last found, so that the
# check before each transaction reads a few links, not all of /proc/self/fd (2 ms with a
# hundred descriptors open, as the app has).
_FDS: dict[str, list[int]] = {}


def replaced_wal(path: str | Path) -> str | None:
    """Why this process's handle on the study's `-wal` or `-shm` is stale, or None.

    Read from /proc/self/fd (links and fstat only: nothing is opened). None where there is
    no /proc, or where this process holds no handle on them."""
    base = real(path)
    names = {f"{base}{suffix}": suffix for suffix in ("-wal", "-shm")}
    cached = _FDS.get(base)
    if cached:
        found = _links(cached, names)
        if found is None:  # a descriptor was closed or reused since: look again
            cached = None
    if not cached:
        try:
            listed = [int(fd) for fd in os.listdir("/proc/self/fd")]
        except OSError:
            return None
        found = _links(listed, names, every=False) or []
        _FDS[base] = [fd for fd, _ in found]
    assert found is not None
    for fd, target in found:
        suffix = names.get(target.removesuffix(" (deleted)"), "")
        if target.endswith(" (deleted)"):
            return f"its {suffix} was deleted by another program"
        try:
            held, on_disk = os.fstat(fd).st_ino, os.stat(target).st_ino
        except FileNotFoundError:
            return f"its {suffix} was deleted by another program"
        except OSError:
            continue
        if held != on_disk:
            return f"its {suffix} was replaced by another program"
    return None


def _links(
    fds: list[int], names: dict[str, str], *, every: bool = True
) -> list[tuple[int, str]] | None:
    """(fd, link target) of the descriptors that point at one of `names` (deleted or not).
    With `every`, None as soon as one of `fds` does not."""
    out = []
    for fd in fds:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.removesuffix(" (deleted)") in names:
            out.append((fd, target))
        elif every:
            return None
    return out


def reopen_if_replaced(path: str | Path) -> bool:
    """Rule 2: when this process's `-wal` or `-shm` of the study is stale, close every
    connection of this process to it (they are opened again on first use) and log it.
    True when that happened."""
    why = replaced_wal(path)
    if why is None:
        return False
    with _LOCK:
        holders = list(_CLOSERS.get(real(path), ()))
    # All of them before any new connection: SQLite shares one map of the `-shm` among the
    # connections of a process, and a new connection would join the stale one. Raw
    # connections first, each told not to checkpoint on close: the last one would otherwise
    # take itself for the study's last user and delete the `-wal` and `-shm` now on disk,
    # by name, with what other programs committed to them since.
    holders.sort(key=lambda h: not isinstance(h, sqlite3.Connection))
    for holder in holders:
        try:
            if isinstance(holder, sqlite3.Connection):
                _no_checkpoint_on_close(holder)
                holder.close()
            else:
                holder.close_connections()
        except Exception:  # noqa: BLE001 - one holder failing must not keep the others
            LOG.exception("closing a stale connection to %s", path)
    LOG.warning(
        "%s: %s while this program had the study open; its connections were closed and "
        "the study is opened again on the files now there",
        path,
        why,
    )
    return True
