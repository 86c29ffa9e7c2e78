"""Jobs in a child process: result, progress, messages, cancel, errors with the child's trace."""

from __future__ import annotations

import os
import time

from meaningbench.errors import InputError
from meaningbench.ops.child_process import in_child_process
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import EMPTY, StudyChanges, Wrote
from tests.ui.test_workers import close_error_boxes, error_boxes


def counting(ctx, n: int) -> dict[str, int]:  # noqa: ANN001 - runs in the child
    for i in range(n):
        ctx.progress(i + 1, n, f"step {i + 1}", force=True)
        ctx.send("tick", i)
    return {"pid": os.getpid(), "n": n}


def telling(ctx, labels: list[str]) -> Wrote[int]:  # noqa: ANN001 - runs in the child
    told = EMPTY
    for k, label in enumerate(labels):
        batch = StudyChanges.of(scores={label: [k]})
        ctx.changed(batch)  # what the battery does after each committed batch
        told |= batch
    return Wrote(len(labels), told | StudyChanges(runs=True))


def naming(ctx, n: int, *, name: str = "unnamed") -> str:  # noqa: ANN001 - runs in the child
    return f"{name}×{n} in {os.getpid()}"


def dividing(ctx) -> float:  # noqa: ANN001
    return 1 / 0


def bad_file(ctx) -> None:  # noqa: ANN001
    raise InputError("not a number", file="ratings.csv", row=4, column="rating")


def endless(ctx) -> None:  # noqa: ANN001
    while True:
        ctx.progress(1, None, "waiting", force=True)
        ctx.check()
        time.sleep(0.01)


def test_result_progress_and_messages_come_back(window, qtbot) -> None:
    handle = window.runner.start(in_child_process(counting, 5), title="count")
    ticks: list[int] = []
    handle.message.connect(lambda kind, payload: ticks.append(payload))
    done: list[int] = []
    handle.progress.connect(lambda p: done.append(p.done))
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    assert handle.outcome == "done", handle.failure
    assert handle.value["n"] == 5 and handle.value["pid"] != os.getpid()  # another process
    assert ticks == [0, 1, 2, 3, 4]
    assert done[-1] == 5


def test_keywords_reach_the_target_in_the_child() -> None:
    job = in_child_process(naming, 3, name="bleu")
    said = job(JobContext())
    assert said.startswith("bleu×3 in ") and said != f"bleu×3 in {os.getpid()}"
    assert in_child_process(naming, 2)(JobContext()).startswith("unnamed×2 in ")


def test_changes_told_in_the_child_reach_the_screens_once(window, qtbot) -> None:
    received: list[StudyChanges] = []
    window.context.study_changed.connect(received.append)
    handle = window.runner.start(in_child_process(telling, ["bleu", "sari"]), title="Score")
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    assert handle.outcome == "done", handle.failure
    assert handle.value == 2  # the screen's result, unwrapped
    assert received == [
        StudyChanges.of(scores={"bleu": [0]}),
        StudyChanges.of(scores={"sari": [1]}),
        StudyChanges(runs=True),  # the result's rest; the batches are not told twice
    ]


def test_a_bug_in_the_child_shows_its_traceback(window, qtbot) -> None:
    handle = window.runner.start(in_child_process(dividing), title="Divide")
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    assert handle.outcome == "failed" and not handle.failure.is_user_error
    qtbot.waitUntil(lambda: bool(error_boxes()))
    box = error_boxes()[0]
    assert "division by zero" in box.text()
    assert "ZeroDivisionError" in box.detailedText() and "dividing" in box.detailedText()
    close_error_boxes()


def test_a_user_error_in_the_child_keeps_row_and_column(window, qtbot) -> None:
    handle = window.runner.start(in_child_process(bad_file), title="Import")
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    assert handle.failure.is_user_error
    qtbot.waitUntil(lambda: bool(error_boxes()))
    assert error_boxes()[0].text() == "ratings.csv, row 4, column 'rating': not a number"
    close_error_boxes()


def test_cancel_reaches_the_child(window, qtbot) -> None:
    handle = window.runner.start(in_child_process(endless), title="Endless")
    qtbot.waitUntil(lambda: handle.last_progress is not None, timeout=60_000)
    handle.cancel()
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    assert handle.outcome == "cancelled"
    assert not error_boxes()


def stubborn(ctx) -> None:  # noqa: ANN001 - never checks its cancel flag
    ctx.progress(1, None, "busy", force=True)
    time.sleep(600)


def test_closing_the_window_ends_a_job_that_does_not_stop(qtbot) -> None:
    from meaningbench.ui.launch import start

    win = start(None, open_initial=False)
    qtbot.addWidget(win)
    handle = win.runner.start(in_child_process(stubborn), title="Stubborn")
    qtbot.waitUntil(lambda: handle.last_progress is not None, timeout=60_000)
    started = time.monotonic()
    win.close()
    assert time.monotonic() - started < 30  # 5 s of grace, then the process is ended
    qtbot.waitUntil(lambda: not handle.running, timeout=10_000)
    assert handle.outcome == "failed"
    assert not error_boxes()  # the window is closing: no dialog about it
