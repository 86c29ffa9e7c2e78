"""Claiming a metric run, so that two processes scoring one study never compute the same
(metric, config) twice.

A claim is the `running` metric_run row itself, with its owner (pid, host, start time),
written in one BEGIN IMMEDIATE transaction after checking that no live process runs the
same (metric, config): claiming is atomic across processes. Claims are optimistic: the job
checks its cache outside the lock (that can take a while on a large study) and notes the
runs of each (metric, config) it saw; the claim goes through only if those runs are still
what the check saw. Otherwise (another process finished or was killed meanwhile) the job
checks that metric's cache again and retries, so it scores exactly what is still missing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meaningbench.db.models import sql_now
from meaningbench.db.processes import ProcessId
from meaningbench.db.runs import RUN_COLUMNS, RunOwner, mark_interrupted
from meaningbench.db.study import Study
from meaningbench.metrics.base import Metric
from meaningbench.runtime import JobContext

from .score_store import CacheKey, RunsSeen, raw_connection

# How often a job waiting for a metric another process scores looks again.
OTHER_POLL_S = 0.25
# What the owner of another claim is called in messages (a `score`, the app).
OWNER_WORDS = "another job"


@dataclass(frozen=True)
class Claimed:
    """The run this job now owns; a resumed (interrupted) run carries what it had done."""

    run_id: int
    resumed: bool = False
    items_before: int = 0
    failed_before: int = 0
    elapsed_before: float = 0.0


@dataclass(frozen=True)
class Busy:
    """A live process scores this (metric, config) now."""

    run_id: int
    owner: ProcessId | None

    def describe(self) -> str:
        return f"{OWNER_WORDS} ({self.owner.describe()})" if self.owner else OWNER_WORDS


@dataclass(frozen=True)
class Changed:
    """The runs of this (metric, config) changed since the cache was checked."""


ClaimResult = Claimed | Busy | Changed

# Runs that jobs of this process are scoring now. A `running` run owned by this very
# process but not here was left open by a job that failed to close it (its final write
# failed): this process will never finish it, so it counts as interrupted, not as busy.
_ACTIVE: set[int] = set()
_ACTIVE_LOCK = threading.Lock()


def release(run_id: int) -> None:
    """The job that claimed the run is done with it (whatever its status)."""
    with _ACTIVE_LOCK:
        _ACTIVE.discard(run_id)


def _live(run: RunOwner, me: ProcessId) -> bool:
    """Whether a live job, here or in another process, is scoring the run."""
    if run.status != "running":
        return False
    if run.owner == me:
        with _ACTIVE_LOCK:
            return run.id in _ACTIVE
    return not run.owner_gone


def _versions(metric: Metric) -> str:
    return json.dumps(dict(metric.versions()), sort_keys=True)


def _same_versions(stored: Any, metric: Metric) -> bool:
    try:
        return json.dumps(json.loads(stored or "{}"), sort_keys=True) == _versions(metric)
    except (TypeError, ValueError):
        return False


def try_claim(
    study: Study, key: CacheKey, seen: RunsSeen, metric: Metric, label: str, me: ProcessId
) -> ClaimResult:
    """Claim the run of `metric`, resuming its interrupted run when one matches."""
    owned: list[int] = []
    try:
        return _claim(study, key, seen, metric, label, me, owned)
    except BaseException:  # not committed after all
        for run_id in owned:
            release(run_id)
        raise


def _claim(
    study: Study,
    key: CacheKey,
    seen: RunsSeen,
    metric: Metric,
    label: str,
    me: ProcessId,
    owned: list[int],
) -> ClaimResult:
    with study.session(write=True) as s:
        raw = raw_connection(s)
        rows = raw.execute(
            f"SELECT {RUN_COLUMNS}, model_id, versions, n_items, n_failed, elapsed_s "
            "FROM metric_run WHERE metric = ? AND config_hash = ? ORDER BY id",
            (key.metric, key.config_hash),
        ).fetchall()
        runs = [RunOwner.from_row(r) for r in rows]
        for run in runs:
            if _live(run, me):
                return Busy(run.id, run.owner)
        gone = [run for run in runs if run.status == "running"]
        if gone:
            # Its owner may have written scores after the cache check: check again.
            mark_interrupted(raw, gone)
            return Changed()
        if tuple((run.id, run.status) for run in runs) != seen:
            return Changed()
        resume = next(
            (
                (row, run)
                for row, run in zip(reversed(rows), reversed(runs), strict=True)
                if run.status == "interrupted"
                and row[5] == metric.model_id()
                and _same_versions(row[6], metric)
            ),
            None,
        )
        owner = (me.pid, me.host, me.started)
        if resume is not None:
            row, run = resume
            raw.execute(
                "UPDATE metric_run SET status = 'running', finished_at = NULL, error = NULL, "
                "owner_pid = ?, owner_host = ?, owner_started = ? WHERE id = ?",
                (*owner, run.id),
            )
            claimed = Claimed(run.id, True, int(row[7] or 0), int(row[8] or 0), float(row[9] or 0))
        else:
            cur = raw.execute(
                "INSERT INTO metric_run (metric, config, config_hash, label, model_id, device, "
                "versions, status, started_at, n_items, n_failed, elapsed_s, owner_pid, owner_host, "
                "owner_started) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, 0, 0, 0.0, ?, ?, ?)",
                (
                    metric.name,
                    json.dumps(dict(metric.config)),
                    metric.config_hash(),
                    label,
                    metric.model_id(),
                    metric.device(),
                    json.dumps(dict(metric.versions())),
                    sql_now(),
                    *owner,
                ),
            )
            claimed = Claimed(int(cur.lastrowid or 0))
        # Registered before the commit makes the row visible to this process's other jobs.
        with _ACTIVE_LOCK:
            _ACTIVE.add(claimed.run_id)
        owned.append(claimed.run_id)
    return claimed


def still_busy(study: Study, busy: Busy, me: ProcessId) -> bool:
    """Whether the run another process claimed is still running there (a read: polling it
    never takes the write lock)."""
    with study.session() as s:
        row = (
            raw_connection(s)
            .execute(f"SELECT {RUN_COLUMNS} FROM metric_run WHERE id = ?", (busy.run_id,))
            .fetchone()
        )
    if row is None:
        return False
    return _live(RunOwner.from_row(row), me)


def wait_for_other(
    study: Study,
    elsewhere: dict[int, Busy],
    labels: dict[int, str],
    ctx: JobContext,
    pump: Callable[[], None],
    announced: set[int],
    me: ProcessId,
) -> int | None:
    """Wait until one of the metrics (by index) that other jobs score is no longer running
    there: returns its index, or None after one poll interval. `pump` writes what this
    job's own workers sent back meanwhile. A killed owner counts as gone: its run is then
    resumed here.
    """
    for i, busy in elsewhere.items():
        if not still_busy(study, busy, me):
            return i
    for i, busy in elsewhere.items():
        if i not in announced:
            ctx.notice(f"waiting for {labels[i]}: {busy.describe()} is scoring it")
            announced.add(i)
    pump()
    ctx.cancel.wait(OTHER_POLL_S)
    return None
