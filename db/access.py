"""Whether this process may write a study, and how to read one that it may not.

Decided before SQLite touches the file, from the file system alone: SQLite opens a file it
cannot write read-only without a word, and then creates a `-shm` and `-wal` beside it with
the study's (read-only) permissions. Those outlive the process and make the study unwritable
even after its owner makes it writable again, so a study we may not write is never opened
the ordinary way.

Reading a study we may not write (SQLite's rules for WAL databases opened read-only):
- its `-wal` exists (a writer has it open now, or one crashed): `mode=ro`, which reads the
  log and takes part in SQLite's locking, so a live writer is seen consistently;
- otherwise `immutable=1`: SQLite creates no `-shm`/`-wal` (impossible on a read-only
  medium or in a read-only folder, where `mode=ro` fails with "unable to open database
  file") and takes no locks. The study is read as it is at that moment; a process that
  may write it and changes it meanwhile is not seen (reopen the study to see its changes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StudyAccess:
    writable: bool
    # Why not, in words that fit "the study is read-only (...)": empty when writable.
    reason: str = ""


def _on_read_only_medium(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): the access checks decide
        return False


def study_access(path: str | Path) -> StudyAccess:
    """May this process write the study at `path` (an existing file) and its companions?"""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    # os.access asks the kernel with this process's real rights: root may write anything
    # unless the medium is read-only, an unprivileged user only what its modes allow.
    if _on_read_only_medium(path):
        return StudyAccess(False, "it is on a read-only disk or medium")
    if not os.access(path, os.W_OK):
        return StudyAccess(False, "the file is read-only")
    if not os.access(folder, os.W_OK | os.X_OK) and not _companions_writable(path):
        # SQLite writes a WAL study through `-wal` and `-shm` files beside it.
        return StudyAccess(False, "its folder is read-only")
    return StudyAccess(True)


def folder_access(folder: str | Path) -> StudyAccess:
    """May this process create a study (and its companions) in `folder`?"""
    folder = Path(folder)
    if _on_read_only_medium(folder):
        return StudyAccess(False, "the folder is on a read-only disk or medium")
    if not os.access(folder, os.W_OK | os.X_OK):
        return StudyAccess(False, "the folder is read-only")
    return StudyAccess(True)


def _companions_writable(path: Path) -> bool:
    return all(os.access(f"{path}{s}", os.W_OK) for s in ("-wal", "-shm"))


def read_only_uris(path: str | Path) -> list[str]:
    """SQLite URIs to read a study this process may not write, to try in this order."""
    base = Path(path).resolve().as_uri()
    uris = [f"{base}?immutable=1"]
    if Path(f"{path}-wal").exists():
        uris.insert(0, f"{base}?mode=ro")
    return uris


def reading_uri(path: str | Path) -> str:
    """A URI for a connection that only reads the study (the app's item browser).

    `mode=rw` where the study is writable: a study file that vanished is then an error,
    never silently re-created empty.
    """
    if study_access(path).writable:
        return f"{Path(path).resolve().as_uri()}?mode=rw"
    return read_only_uris(path)[0]
