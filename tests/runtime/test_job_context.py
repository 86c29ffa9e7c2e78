"""The one job context: progress, cancel, log, messages and result, and the command line's
rendering of it as a text progress bar."""

from __future__ import annotations

import threading

import pytest

from meaningbench.jobs.terminal import run_with_progress_bar
from meaningbench.runtime import Cancelled, JobContext, Progress, run_job


def counting(ctx: JobContext) -> str:
    ctx.progress(0, 3, "starting", force=True)
    ctx.log("waiting for bleu: another process is scoring it")
    for i in range(3):
        ctx.check()
        ctx.progress(i + 1, 3, f"item {i + 1}", force=True)
        ctx.send("loss", [i])
    return "counted"


def test_the_job_context_has_one_import_path() -> None:
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("meaningbench.jobs.base")


def test_progress_log_and_messages_reach_their_listeners() -> None:
    progress: list[Progress] = []
    lines: list[str] = []
    sent: list[tuple[str, object]] = []
    ctx = JobContext(
        report=progress.append, on_notice=lines.append, on_message=lambda k, p: sent.append((k, p))
    )
    assert run_job(counting, ctx).value == "counted"
    assert [(p.done, p.total) for p in progress] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert lines == ["waiting for bleu: another process is scoring it"]
    assert sent == [("loss", [0]), ("loss", [1]), ("loss", [2])]


def test_without_a_log_listener_the_line_becomes_the_progress_message() -> None:
    progress: list[Progress] = []
    ctx = JobContext(report=progress.append)
    ctx.progress(2, 5, "scoring", force=True)
    ctx.notice("waiting for the lock")  # the name older jobs use
    assert progress[-1] == Progress(2, 5, "waiting for the lock")
    ctx.send("loss", [1])  # nobody listens: dropped, not an error


def test_progress_is_throttled_but_the_last_step_always_shows() -> None:
    progress: list[Progress] = []
    ctx = JobContext(report=progress.append, min_interval_s=3600.0)
    for i in range(1, 1001):
        ctx.progress(i, 1000)
    assert [p.done for p in progress] == [1, 1000]


def test_run_job_turns_cancel_and_errors_into_its_result() -> None:
    ctx = JobContext()
    ctx.cancel.cancel()
    assert run_job(counting, ctx).outcome == "cancelled"
    failed = run_job(lambda _ctx: 1 / 0, JobContext())
    assert failed.outcome == "failed" and isinstance(failed.error, ZeroDivisionError)
    done = run_job(lambda _ctx: 7, JobContext())
    assert (done.outcome, done.value, done.error) == ("done", 7, None)


def test_cancel_from_another_thread_stops_the_job_at_its_next_check() -> None:
    started = threading.Event()
    ctx = JobContext()

    def endless(ctx: JobContext) -> None:
        started.set()
        while True:
            ctx.check()
            ctx.cancel.wait(0.01)

    ended: dict[str, object] = {}
    worker = threading.Thread(target=lambda: ended.update(result=run_job(endless, ctx)))
    worker.start()
    assert started.wait(5)
    ctx.cancel.cancel()
    worker.join(5)
    assert not worker.is_alive() and getattr(ended["result"], "outcome", None) == "cancelled"


def test_the_command_line_renders_the_context_as_a_progress_bar(capsys) -> None:
    assert run_with_progress_bar(counting, description="Counting") == "counted"
    err = capsys.readouterr().err
    assert "Counting" in err and "3/3" in err
    assert "meaningbench: waiting for bleu: another process is scoring it" in err


def test_quiet_prints_only_the_log_lines(capsys) -> None:
    assert run_with_progress_bar(counting, description="Counting", quiet=True) == "counted"
    err = capsys.readouterr().err
    assert err == "meaningbench: waiting for bleu: another process is scoring it\n"


def test_ctrl_c_cancels_the_context_and_ends_as_cancelled(capsys) -> None:
    seen: list[JobContext] = []

    def interrupted(ctx: JobContext) -> None:
        seen.append(ctx)
        ctx.progress(1, 3, force=True)
        raise KeyboardInterrupt

    with pytest.raises(Cancelled):
        run_with_progress_bar(interrupted, description="Counting")
    assert seen[0].cancelled
