"""The operating system's refusals, as one-line messages saying what happened and what to do.

A full disk, a size limit, a read-only medium or a failing disk reach the program as
SQLite errors ("database or disk is full", "disk I/O error", "attempt to write a readonly
database"), sometimes wrapped by SQLAlchemy, or as OSErrors from plain file writes. They
are not bugs: `describe_fault` turns them into a `StudyFileError` the command line prints
(exit 2) and the app shows in a message box. SQLite rolls back the failed transaction, so
the failed write itself changed nothing, and the messages say so.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from meaningbench.db.errors import StudyFileError, StudyReadOnlyError, StudyWriteError

# Free space under which an unspecific write error is reported as a full disk.
NEARLY_FULL_BYTES = 1 << 20

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_READ_ONLY = {errno.EROFS}
_DENIED = {errno.EACCES, errno.EPERM}
_IO = {errno.EIO, errno.EFBIG}

NOTHING_SAVED = "the failed write changed nothing"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        orig = getattr(e, "orig", None)  # SQLAlchemy's DBAPIError wraps the driver's error
        # Only what an error says it was caused by: an error met while handling another
        # (`__context__`) may be a bug of its own, which must not pass for a full disk.
        todo += [orig if isinstance(orig, BaseException) else None, e.__cause__]


def _sqlite_kind(exc: sqlite3.Error) -> str | None:
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name.startswith("SQLITE_FULL") or "database or disk is full" in text:
        return "full"
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return "read-only"
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in text:
        return "io"
    if name.startswith("SQLITE_CANTOPEN") or "unable to open database file" in text:
        return "cannot-open"
    return None


def _os_kind(exc: OSError) -> str | None:
    if exc.errno in _FULL:
        return "full"
    if exc.errno in _READ_ONLY:
        return "read-only medium"
    if exc.errno in _DENIED:
        return "denied"
    if exc.errno in _IO:
        return "io"
    return None


def _nearly_full(where: Path | None) -> bool:
    if where is None:
        return False
    folder = where.parent if str(where.parent) else Path(".")
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def describe_fault(
    exc: BaseException, path: str | Path | None = None, *, output: bool = False
) -> StudyFileError | None:
    """A user-facing error for a full disk, a read-only or failing medium; else None.

    `path` is the study, named in the message when the error itself names no file; with
    `output`, it is a file being written (an export), always the one named: the error
    would name the hidden partial file it is written through.
    """
    for e in _causes(exc):
        if isinstance(e, StudyFileError):
            return e
        if isinstance(e, sqlite3.Error):
            kind, detail = _sqlite_kind(e), str(e)
        elif isinstance(e, OSError):
            kind, detail = _os_kind(e), e.strerror or str(e)
            if e.filename and not output:
                path = e.filename
        else:
            continue
        if kind is not None:
            where = Path(path) if path is not None else None
            if output and kind in ("read-only", "read-only medium", "denied", "cannot-open"):
                return _unwritable_output(kind, where)
            return fault_error(kind, where, detail)
    return None


def fault_reason(exc: BaseException, path: str | Path | None = None) -> str | None:
    """What happened, in a few words to go inside another message ("cannot write: the
    disk is full"), without the file's name or the advice; None when not a fault."""
    fault = describe_fault(exc, path)
    if fault is None:
        return None
    text = str(fault)
    if path is not None and text.startswith(f"{path}: "):
        text = text[len(f"{path}: ") :]
    return text.split("; ", 1)[0]


def fault_error(kind: str, where: Path | None, detail: str) -> StudyFileError:
    subject = f"{where}: " if where is not None else ""
    if kind == "io" and _nearly_full(where):
        kind = "full"
    if kind == "full":
        return StudyWriteError(
            f"{subject}cannot write: the disk is full; {NOTHING_SAVED}. "
            "Free some disk space and run it again."
        )
    if kind == "io":
        return StudyWriteError(
            f"{subject}cannot write ({detail}: the disk may be full or failing, or the file "
            f"over a size limit); {NOTHING_SAVED}. Check the disk and run it again."
        )
    if kind in ("read-only", "read-only medium"):
        why = "it is on a read-only disk or medium" if kind == "read-only medium" else None
        return StudyReadOnlyError(read_only_message(where, why))
    if kind == "denied":
        return StudyReadOnlyError(
            f"{subject}permission denied; nothing was changed. "
            "Choose a file or folder you may write, or ask for write access."
        )
    return StudyFileError(
        f"{subject}cannot open the file ({detail}): check that its folder exists and that "
        "you may read and write there."
    )


def _unwritable_output(kind: str, where: Path | None) -> StudyFileError:
    subject = f"{where}: " if where is not None else ""
    why = {
        "read-only medium": "its folder is on a read-only disk or medium",
        "denied": "permission denied",
    }.get(kind, "its folder is read-only or missing")
    return StudyWriteError(
        f"{subject}cannot write the file ({why}); nothing was written. "
        "Choose a folder you may write."
    )


def read_only_message(where: Path | None, reason: str | None = None) -> str:
    subject = f"{where}: " if where is not None else ""
    why = f" ({reason})" if reason else ""
    return (
        f"{subject}the study is read-only{why}; nothing was changed. To change it, copy it "
        "to a writable folder (or make it writable) and work on the copy."
    )
