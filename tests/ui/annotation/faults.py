"""A full disk and a read-only study for a screen running in this process, for the length
of a `with` block.

- Full disk: RLIMIT_FSIZE as `tests.fault_tools.file_size_limit` sets it for a child
  process, here the soft limit of this process at 0 with SIGXFSZ ignored: every write to a
  file fails with EFBIG, the operating system's refusal a full disk gives as ENOSPC. Both
  are put back when the block ends.
- Read-only: the study's connections refuse to write (SQLite's query_only), with the error
  a read-only file gives ("attempt to write a readonly database"); new connections are
  opened after the block.
"""

from __future__ import annotations

import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from meaningbench.db.study import Study


@contextmanager
def full_disk() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    before = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, before)


@contextmanager
def read_only(study: Study) -> Iterator[None]:
    def refuse_writes(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA query_only = ON")

    event.listen(study.engine, "connect", refuse_writes)
    study.close_connections()
    try:
        yield
    finally:
        event.remove(study.engine, "connect", refuse_writes)
        study.close_connections()
