"""Ops run in a child process (`in_child_process`), as the app runs its heavy writes, on a
real study: the battery's scores are written by the child and its batches told to the
parent's context as they commit, a refused request comes back as a user error with nothing
written, and a cancel stops the child's job. No Qt: the parent's context is a plain one."""

from __future__ import annotations

import os
import threading
import time

import pytest

from meaningbench.db.study import Study
from meaningbench.ops.child_process import (
    ChildJobError,
    ChildUserError,
    in_child_process,
    terminate_all,
)
from meaningbench.ops.score import score_job
from meaningbench.runtime import Cancelled, JobContext, Progress
from meaningbench.runtime.changes import EMPTY, StudyChanges
from tests.jobs.conftest import make_rows
from tests.jobs.studydata import add_items
from tests.ops.study_rows import every_row, rows


def endless(ctx: JobContext) -> None:
    """Runs in the child until its cancel flag is set."""
    while True:
        ctx.progress(1, None, "waiting", force=True)
        ctx.check()
        time.sleep(0.01)


def whose(ctx: JobContext, *, fail: bool) -> int:
    """The child's process id, or a bug."""
    if fail:
        raise ZeroDivisionError("a bug in the child")
    return os.getpid()


def test_the_battery_in_a_child_writes_and_tells_its_batches(new_study: Study) -> None:
    ids = add_items(new_study, make_rows(12))
    told: list[StudyChanges] = []
    ctx = JobContext(on_changes=told.append)
    wrote = in_child_process(score_job, new_study.path, ["compression"], {"workers": 1})(ctx)
    (summary,) = wrote.value
    assert summary.status == "done" and summary.scored == 12
    assert rows(new_study.path, "SELECT COUNT(*) FROM score") == [(12,)]
    assert wrote.changes.runs
    assert wrote.changes.scores_by_label == {summary.label: frozenset(ids)}
    merged = EMPTY
    for batch in told:  # the batches crossed from the child while it ran
        merged |= batch
    assert merged.scores_by_label == wrote.changes.scores_by_label


def test_a_refused_request_comes_back_as_a_user_error_and_writes_nothing(
    new_study: Study,
) -> None:
    add_items(new_study, make_rows(4))
    before = every_row(new_study.path)
    job = in_child_process(score_job, new_study.path, ["no_such_metric"], {"workers": 1})
    with pytest.raises(ChildUserError, match="no_such_metric"):
        job(JobContext())
    assert every_row(new_study.path) == before


def test_a_bug_keeps_the_childs_trace_and_keywords_reach_the_target() -> None:
    assert in_child_process(whose, fail=False)(JobContext()) != os.getpid()
    with pytest.raises(ChildJobError, match="a bug in the child") as caught:
        in_child_process(whose, fail=True)(JobContext())
    assert "ZeroDivisionError" in caught.value.child_trace


def test_a_cancel_stops_the_job_in_the_child() -> None:
    ctx = JobContext()

    def report(p: Progress) -> None:
        ctx.cancel.cancel()  # the child is running: stop it

    ctx.report = report
    with pytest.raises(Cancelled):
        in_child_process(endless)(ctx)


def test_terminate_all_ends_a_running_child_at_once() -> None:
    """What the window does when it closes: the job's child is ended, and the job fails."""
    started = threading.Event()
    ended: list[BaseException] = []

    def run() -> None:
        try:
            in_child_process(endless)(JobContext(report=lambda p: started.set()))
        except BaseException as exc:  # noqa: BLE001 - what the job ended with
            ended.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(120), "the child never reported"
    assert terminate_all() == 1
    thread.join(60)
    assert not thread.is_alive()
    assert len(ended) == 1 and isinstance(ended[0], ChildJobError)
    assert terminate_all() == 0
