"""Who holds a study's write lock for a long transaction, so that waiters can say so.

SQLite tells a waiting process only that the database is locked. A long writer (an import,
all or nothing in one transaction) names itself in a small file beside the study,
`STUDY-writer`, once it holds the lock, and removes it when its transaction is over; a
waiter reads it and names that process while it lives. The file is written only by the
lock's holder, so two writers never race for it. Nothing goes into the study itself: a
failed import leaves the study exactly as it was. A file left by a killed writer names a
dead process: waiters ignore it and the next writer to take the lock removes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from meaningbench.db.processes import ProcessId, is_alive, this_process


def writer_file(study_path: str | Path) -> Path:
    return Path(f"{study_path}-writer")


def _read(study_path: str | Path) -> tuple[str, ProcessId] | None:
    try:
        data = json.loads(writer_file(study_path).read_text(encoding="utf-8"))
        owner = ProcessId(int(data["pid"]), str(data["host"]), data.get("started"))
        return str(data["command"]), owner
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current_writer(study_path: str | Path) -> str | None:
    """ "import, pid 123" for the live process that named itself; None if none."""
    found = _read(study_path)
    if found is None or not is_alive(found[1]):
        return None
    command, owner = found
    return f"{command}, {owner.describe()}"


def clear_stale_writer(study_path: str | Path) -> None:
    """Remove the file of a writer that is gone. Call it holding the write lock."""
    if not writer_file(study_path).exists():
        return
    found = _read(study_path)
    if found is None or not is_alive(found[1]):
        with suppress(OSError):
            writer_file(study_path).unlink()


@contextmanager
def announced_writer(study_path: str | Path, command: str) -> Iterator[None]:
    """Name this process as the holder of the write lock while the block runs.

    Enter it once the lock is held (after BEGIN IMMEDIATE). A folder that cannot be
    written only costs the name in waiters' messages.
    """
    me = this_process()
    path = writer_file(study_path)
    tmp = path.with_name(f"{path.name}.{me.pid}.tmp")
    payload = {"command": command, "pid": me.pid, "host": me.host, "started": me.started}
    try:
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with suppress(OSError):
            tmp.unlink()
    try:
        yield
    finally:
        found = _read(study_path)
        if found is not None and found[1] == me:
            with suppress(OSError):
                path.unlink()
