"""Metric runs and the processes that own them: a `running` run whose owner is gone (killed,
a power cut) is `interrupted`, found and marked the next time the study is scored or
summarised, and resumed by the next scoring."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from meaningbench.db.models import sql_now
from meaningbench.db.processes import ProcessId, is_alive
from meaningbench.db.study import Study

RUN_COLUMNS = "id, status, owner_pid, owner_host, owner_started"


@dataclass(frozen=True)
class RunOwner:
    """A run's id and status, and the process that claimed it (None: not recorded)."""

    id: int
    status: str
    owner: ProcessId | None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunOwner:
        run_id, status, pid, host, started = row[:5]
        owner = None if pid is None else ProcessId(int(pid), str(host or ""), started)
        return cls(int(run_id), str(status), owner)

    @property
    def owner_gone(self) -> bool:
        """A running run whose owner no longer runs. A run without a recorded owner was
        started by a version that recorded none, before this study was upgraded."""
        return self.status == "running" and (self.owner is None or not is_alive(self.owner))


def interrupted_error(owner: ProcessId | None) -> str:
    who = f"the process scoring it ({owner.describe()})" if owner else "the process scoring it"
    return f"{who} ended before the run finished; scoring again resumes it"


def mark_interrupted(raw: sqlite3.Connection, runs: list[RunOwner]) -> None:
    """Inside a write transaction: close runs whose owner is gone, counting their scores."""
    raw.executemany(
        "UPDATE metric_run SET status = 'interrupted', "
        "finished_at = ?, error = ?, "
        "n_items = (SELECT COUNT(*) FROM score WHERE run_id = metric_run.id), "
        "n_failed = (SELECT COUNT(*) FROM score WHERE run_id = metric_run.id "
        "AND error IS NOT NULL) "
        "WHERE id = ? AND status = 'running'",
        [(sql_now(), interrupted_error(r.owner), r.id) for r in runs],
    )


def _raw(conn: object) -> sqlite3.Connection:
    raw = conn.connection.driver_connection  # type: ignore[attr-defined]
    assert isinstance(raw, sqlite3.Connection)
    return raw


def interrupt_gone_runs(study: Study) -> list[int]:
    """Mark every running run whose owner is gone as interrupted; returns their ids.

    A read finds them (most studies have none, and then nothing is written); the write
    transaction checks again, since another process may have done it in between.
    """
    sql = f"SELECT {RUN_COLUMNS} FROM metric_run WHERE status = 'running'"
    with study.session() as s:
        found = [RunOwner.from_row(r) for r in _raw(s.connection()).execute(sql)]
    if not any(r.owner_gone for r in found):
        return []
    with study.session(write=True) as s:
        raw = _raw(s.connection())
        gone = [r for r in (RunOwner.from_row(row) for row in raw.execute(sql)) if r.owner_gone]
        mark_interrupted(raw, gone)
    return [r.id for r in gone]


def close_completed(study: Study, run_ids: list[int]) -> None:
    """Interrupted runs that have nothing left to do (every item has its current score)
    are done: resuming them would score nothing."""
    with study.session(write=True) as s:
        _raw(s.connection()).executemany(
            "UPDATE metric_run SET status = 'done', error = NULL "
            "WHERE id = ? AND status = 'interrupted'",
            [(run_id,) for run_id in run_ids],
        )
