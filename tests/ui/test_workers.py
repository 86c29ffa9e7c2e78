"""Jobs on worker threads: results, progress, cancel and errors reach the GUI thread."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QApplication, QMessageBox

from meaningbench.errors import InputError
from meaningbench.ui.dialogs.errors import ERROR_DIALOG_NAME
from meaningbench.ui.workers import JobRunner


def error_boxes() -> list[QMessageBox]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == ERROR_DIALOG_NAME and w.isVisible()
    ]


def close_error_boxes() -> None:
    for box in error_boxes():
        box.close()


def test_result_and_progress_arrive_on_the_gui_thread(qtbot) -> None:
    runner = JobRunner()
    gui_thread = threading.get_ident()
    seen: dict[str, object] = {}

    def job(ctx):  # noqa: ANN001
        seen["worker"] = threading.get_ident()
        for i in range(5):
            ctx.progress(i + 1, 5, f"step {i + 1}", force=True)
        return 42

    progress = []
    handle = runner.start(job, title="sum")
    handle.progress.connect(lambda p: progress.append((p.done, threading.get_ident())))
    handle.result.connect(lambda v: seen.update(result=v, result_thread=threading.get_ident()))
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert seen["worker"] != gui_thread
    assert seen["result"] == 42 and seen["result_thread"] == gui_thread
    assert handle.outcome == "done" and handle.value == 42
    assert all(t == gui_thread for _d, t in progress)
    assert handle.last_progress is not None and handle.last_progress.done == 5
    assert runner.active == []


def test_a_failing_job_shows_an_error_and_the_app_goes_on(window, qtbot) -> None:
    def broken(ctx):  # noqa: ANN001
        ctx.progress(1, 3, "working")
        raise ZeroDivisionError("the divisor was zero")

    failures = []
    handle = window.runner.start(broken, title="Broken job", on_failed=failures.append)
    qtbot.waitUntil(lambda: not handle.running, timeout=5000)
    qtbot.waitUntil(lambda: bool(error_boxes()), timeout=5000)
    box = error_boxes()[0]
    assert "the divisor was zero" in box.text()
    assert "ZeroDivisionError" in box.detailedText()  # a bug gets its traceback
    assert handle.outcome == "failed" and failures and failures[0].title == "Broken job"
    close_error_boxes()
    # The window still works: another job runs and the UI answers.
    handle2 = window.runner.start(lambda ctx: "fine", title="After")
    qtbot.waitUntil(lambda: not handle2.running, timeout=5000)
    assert handle2.value == "fine"
    window.change_text_size(+1)
    assert window.theme.scale > 1.0


def test_a_user_error_shows_its_message_without_a_traceback(window, qtbot) -> None:
    def bad_input(ctx):  # noqa: ANN001
        raise InputError("not a number", file="ratings.csv", row=7, column="score")

    handle = window.runner.start(bad_input, title="Import")
    qtbot.waitUntil(lambda: bool(error_boxes()), timeout=5000)
    box = error_boxes()[0]
    assert box.text() == "ratings.csv, row 7, column 'score': not a number"
    assert box.detailedText() == ""
    assert handle.failure is not None and handle.failure.is_user_error
    close_error_boxes()


def test_cancel_stops_the_job_at_its_next_check(qtbot) -> None:
    runner = JobRunner()
    started = threading.Event()
    done_batches = []

    def long_job(ctx):  # noqa: ANN001
        started.set()
        for i in range(10_000):
            ctx.check()
            done_batches.append(i)
            threading.Event().wait(0.002)
        return "finished"

    handle = runner.start(long_job, title="long")
    assert started.wait(5)
    handle.cancel()
    qtbot.waitUntil(lambda: not handle.running, timeout=5000)
    assert handle.outcome == "cancelled"
    assert handle.value is None
    assert 0 < len(done_batches) < 10_000


def test_the_status_bar_shows_a_running_job_and_can_cancel_it(window, qtbot) -> None:
    release = threading.Event()

    def job(ctx):  # noqa: ANN001
        ctx.progress(3, 10, "", force=True)
        while not release.wait(0.01):
            ctx.check()

    handle = window.runner.start(job, title="Scoring")
    indicator = window.status.jobs
    qtbot.waitUntil(lambda: indicator.isVisible() and "3/10" in indicator.label.text())
    assert indicator.bar.maximum() == 10 and indicator.bar.value() == 3
    indicator.cancel_button.click()
    qtbot.waitUntil(lambda: not handle.running, timeout=5000)
    assert handle.outcome == "cancelled"
    assert not indicator.isVisible()


def test_the_job_panel_lists_every_running_job_and_cancels_the_one_chosen(window, qtbot) -> None:
    release = threading.Event()

    def job(ctx):  # noqa: ANN001
        ctx.progress(1, 4, "", force=True)
        while not release.wait(0.01):
            ctx.check()
        return "done"

    older = window.runner.start(job, title="Importing")
    newer = window.runner.start(job, title="Running metrics")
    heard: list[str] = []
    older.cancelling.connect(lambda: heard.append("older"))  # what its own dialog hears
    indicator = window.status.jobs
    qtbot.waitUntil(lambda: indicator.jobs_button.isVisible())
    qtbot.waitUntil(lambda: older.last_progress is not None and newer.last_progress is not None)
    assert indicator.jobs_button.text() == "2 jobs"
    indicator.jobs_menu.aboutToShow.emit()
    entries = [a.text() for a in indicator.jobs_menu.actions()]
    assert entries == ["Running metrics: 1/4", "Importing: 1/4"]
    indicator.jobs_menu.actions()[1].trigger()  # cancel the older job from the panel
    qtbot.waitUntil(lambda: not older.running, timeout=5000)
    assert older.outcome == "cancelled" and heard == ["older"] and newer.running
    assert not indicator.jobs_button.isVisible()  # one job left: no list
    release.set()
    qtbot.waitUntil(lambda: not newer.running, timeout=5000)
    assert newer.outcome == "done"


def test_the_status_bar_follows_the_next_job_without_handling_its_progress_twice(
    window, qtbot
) -> None:
    first_done, go_on = threading.Event(), threading.Event()
    step = threading.Event()

    def short(ctx):  # noqa: ANN001
        first_done.wait(5)

    def long(ctx):  # noqa: ANN001
        go_on.wait(5)
        for k in range(1, 4):
            step.wait(5)
            step.clear()
            ctx.progress(k, 3, "", force=True)
        while not ctx.cancel.cancelled:
            ctx.check()
            threading.Event().wait(0.01)

    indicator = window.status.jobs
    seen: list[int] = []
    original = indicator._on_progress
    indicator._on_progress = lambda h, p: (seen.append(p.done), original(h, p))  # type: ignore[method-assign]
    second = window.runner.start(long, title="Second")
    window.runner.start(short, title="First")
    qtbot.waitUntil(lambda: indicator.label.text().startswith("First"))
    first_done.set()
    qtbot.waitUntil(lambda: indicator.label.text().startswith("Second"))
    go_on.set()
    for k in range(1, 4):
        step.set()
        qtbot.waitUntil(lambda k=k: f"{k}/3" in indicator.label.text())
    assert seen == [1, 2, 3]
    second.cancel()
    qtbot.waitUntil(lambda: not second.running, timeout=5000)


def test_the_status_bar_renders_the_jobs_log_and_messages(window, qtbot) -> None:
    """The app's rendering of the one job context (the command line's is a text bar)."""
    release = threading.Event()

    def job(ctx):  # noqa: ANN001
        ctx.progress(2, 4, "", force=True)
        ctx.log("waiting for bleu: another process is scoring it")
        ctx.send("loss", [1, 2])
        release.wait(5)
        ctx.progress(4, 4, "", force=True)
        return "scored"

    handle = window.runner.start(job, title="Scoring")
    messages = []
    handle.message.connect(lambda kind, payload: messages.append((kind, payload)))
    indicator = window.status.jobs
    qtbot.waitUntil(lambda: "waiting for bleu" in indicator.label.text(), timeout=5000)
    assert indicator.label.text() == "Scoring: waiting for bleu: another process is scoring it"
    assert indicator.bar.value() == 2 and indicator.bar.maximum() == 4
    release.set()
    qtbot.waitUntil(lambda: not handle.running, timeout=5000)
    assert handle.value == "scored" and handle.outcome == "done"
    assert handle.log_lines == ["waiting for bleu: another process is scoring it"]
    assert messages == [("loss", [1, 2])]
