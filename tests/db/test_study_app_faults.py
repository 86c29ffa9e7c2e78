"""The app on a read-only study, a study whose upgrade fails, and a full disk: a message,
never a crash. The window runs as a process of its own, for a user the file modes stop."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.db.study import copy_study, create_study
from tests.fault_tools import ROOT, env, files_in, make_old_study, unprivileged, write_pairs

WINDOW = r"""
import json, sys, time
from PySide6.QtWidgets import QApplication
from meaningbench.ui.launch import start

window = start(None, open_initial=False)
app = QApplication.instance()
opened = window.studies.open_path(sys.argv[1])
rows = exported = None
if opened:
    page = window.page("browser")
    deadline = time.monotonic() + 30
    while (page.model.loading or page.model.rowCount() == 0) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    rows = page.model.rowCount()
    window.start_annotation()
    # A write on the GUI thread from a Qt slot, outside any handler (as a settings or
    # scene edit does): the hook says why it failed.
    from PySide6.QtCore import QTimer
    from meaningbench.ops.settings import set_setting
    QTimer.singleShot(
        0, lambda: window.runner.run_now(set_setting(window.context.study, "name", "renamed"))
    )
    for _ in range(20):
        app.processEvents()
        time.sleep(0.01)
    if len(sys.argv) > 2:  # export through the dialog, as a user would
        dialog = window.show_export_dialog()
        dialog.path_edit.setText(sys.argv[2])
        job = dialog.start()
        while job.running:
            app.processEvents()
            time.sleep(0.01)
        exported = [job.outcome, str(job.failure or "")]
        dialog.close()
app.processEvents()
errors = [w.text() for w in app.topLevelWidgets() if w.objectName() == "mbErrorDialog"]
print(json.dumps({"opened": opened, "title": window.windowTitle(), "rows": rows,
                  "errors": errors, "exported": exported}))
window.close()
"""


def _window(study: Path, home: Path, as_user: object, *more: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", WINDOW, str(study), *more],
        env={**env(), "MEANINGBENCH_HOME": str(home)},
        cwd=ROOT,
        preexec_fn=as_user,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def test_a_study_in_a_read_only_folder_is_browsed_and_not_rated(tmp_path: Path, home: Path) -> None:
    as_user = unprivileged()
    from meaningbench.datasets.importer import import_file

    built = create_study(tmp_path / "built.mbstudy")
    import_file(built, write_pairs(tmp_path / "p.csv", 40))
    built.close()
    folder = tmp_path / "medium"
    folder.mkdir()
    study = copy_study(tmp_path / "built.mbstudy", folder / "s.mbstudy")
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    out = tmp_path / "out"
    out.mkdir()
    try:
        shown = _window(study, home, as_user, str(out / "items.csv"))
    finally:
        folder.chmod(stat.S_IRWXU)
    assert shown["opened"] and shown["rows"] == 40
    assert "(read-only)" in shown["title"]
    rate, write = sorted(shown["errors"], key=lambda text: str(study) in text)
    assert "is read-only" in rate and "Copy the study to a writable folder" in rate
    assert write.startswith(f"{study}: the study is read-only")
    assert shown["exported"] == ["done", ""]
    assert len((out / "items.csv").read_text(encoding="utf-8").splitlines()) == 41
    assert files_in(folder) == ["s.mbstudy"]


def test_a_failed_upgrade_is_a_message(tmp_path: Path, home: Path) -> None:
    study = make_old_study(tmp_path / "old.mbstudy", dangling=True)
    shown = _window(study, home, None)
    assert not shown["opened"]
    assert len(shown["errors"]) == 1
    assert "failed" in shown["errors"][0] and ".bak-0002-" in shown["errors"][0]
    assert "left as it was" in shown["errors"][0]


def test_a_full_disk_in_a_job_is_the_users_message_not_a_bug_report(tmp_path: Path) -> None:
    from meaningbench.ui.workers import JobFailure

    # A genuine SQLITE_FULL: the database may not grow past its page limit.
    conn = sqlite3.connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 100)
    conn.close()
    failure = JobFailure("Import", caught.value, "trace")
    assert failure.is_user_error
    assert "the disk is full" in failure.message and "Free some disk space" in failure.message
