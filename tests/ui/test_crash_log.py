"""A crash leaves a log file whose path the app shows, and the study stays as it was."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from tests.ui.test_workers import close_error_boxes, error_boxes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def window_factory(qtbot):  # noqa: ANN001, ANN201 - pytest-qt fixture
    """Main windows started as `launch` starts them (without opening a study)."""
    from meaningbench.ui.launch import start

    made = []

    def make():  # noqa: ANN202
        win = start(None, open_initial=False)
        qtbot.addWidget(win)
        made.append(win)
        return win

    yield make
    for win in made:
        win.close()


def ratings_in(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return conn.execute(
            "SELECT item_id, annotator_id, dimension_id, value, state FROM rating ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_is_logged_and_shown_and_the_study_stays(
    window, qtbot, study_with_facts
) -> None:
    from meaningbench.ui.crash_log import UNEXPECTED_TITLE, session_log_path

    path, _facts = study_with_facts
    before = ratings_in(path)
    assert before, "the study under test has ratings"
    assert window.studies.open_path(path)

    def broken_slot() -> None:
        raise ZeroDivisionError("the sum of the ratings was divided by nothing")

    QTimer.singleShot(0, broken_slot)  # called by Qt from its event loop, as a click would
    qtbot.waitUntil(lambda: bool(error_boxes()), timeout=10_000)
    box = error_boxes()[0]
    log = session_log_path()
    assert log is not None and log.is_file()
    text = log.read_text(encoding="utf-8")
    assert "ZeroDivisionError: the sum of the ratings was divided by nothing" in text
    assert "in broken_slot" in text and f"study: {path}" in text
    assert box.windowTitle() == UNEXPECTED_TITLE
    assert str(log) in box.text()
    assert f"The study {path.name} is intact" in box.text()
    assert "broken_slot" in box.detailedText()
    close_error_boxes()
    # The window carries on with the same study, and the file holds what it held.
    assert window.context.path == path and window.isVisible()
    assert ratings_in(path) == before


PROBE = r"""
import faulthandler, sys
from PySide6.QtCore import QTimer
from meaningbench.ui.launch import create_application, start
app = create_application()
window = start(None, open_initial=False)
QTimer.singleShot(200, faulthandler._sigsegv)  # a fault in native code
app.exec()
"""


def test_a_hard_crash_leaves_a_log_that_the_next_start_names(window_factory) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONFAULTHANDLER", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, timeout=120
    )
    assert done.returncode != 0, "the probe was meant to crash"
    home = Path(os.environ["MEANINGBENCH_HOME"])
    left = list((home / "logs").glob("session-*.log"))
    assert len(left) == 1 and "Fatal Python error" in left[0].read_text(encoding="utf-8")

    window = window_factory()
    boxes = error_boxes()
    assert len(boxes) == 1
    kept = home / "logs" / ("crash-" + left[0].name[len("session-") :])
    assert kept.is_file() and str(kept) in boxes[0].text()
    assert "ended unexpectedly" in boxes[0].text()
    close_error_boxes()
    window.close()
    # Named once: the next start says nothing.
    window_factory()
    assert not error_boxes()


def test_a_normal_end_leaves_no_log() -> None:
    script = (
        "from PySide6.QtCore import QTimer\n"
        "from meaningbench.ui.launch import create_application, launch\n"
        "app = create_application()\n"
        "QTimer.singleShot(300, app.quit)\n"
        "raise SystemExit(launch())\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0
    home = Path(os.environ["MEANINGBENCH_HOME"])
    assert (home / "logs").is_dir() and not list((home / "logs").iterdir())


SLOT_ERROR = r"""
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from meaningbench.ui.launch import create_application, launch
app = create_application()

def broken_slot():
    raise ZeroDivisionError("divided by nothing")

def read_box_and_quit():
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox))
    print("BOX:" + box.text().replace("\n", "|"), flush=True)
    app.quit()

QTimer.singleShot(300, broken_slot)
QTimer.singleShot(1500, read_box_and_quit)
raise SystemExit(launch())
"""


def test_the_log_named_after_an_error_is_there_after_the_app_ends() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", SLOT_ERROR], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    box = next(line for line in done.stdout.splitlines() if line.startswith("BOX:"))
    lines = box.split("|")
    named = Path(lines[lines.index("The details were written to") + 1])
    assert named.parent == Path(os.environ["MEANINGBENCH_HOME"]) / "logs"
    assert named.is_file(), f"the box named {named.name}; the folder holds " + ", ".join(
        p.name for p in named.parent.iterdir()
    )
    assert "ZeroDivisionError: divided by nothing" in named.read_text(encoding="utf-8")
