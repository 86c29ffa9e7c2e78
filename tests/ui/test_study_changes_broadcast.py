"""One write, one broadcast: what a rating or the battery changed reaches every screen once,
and each screen refreshes from it (real widgets, a real study file, offscreen)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.ops.child_process import in_child_process
from meaningbench.ops.score import score_job
from meaningbench.runtime.changes import EMPTY, StudyChanges
from meaningbench.ui.browser.page import BrowserPage
from meaningbench.ui.compare.page import ComparePage
from meaningbench.ui.dashboard.controller import DashboardController
from meaningbench.ui.dashboard.data_quality import DataQualityPanel
from meaningbench.ui.main_window import MainWindow
from tests.ui.conftest import open_in

# Every screen's one slot for the broadcast, by the name the test reports.
SLOTS: dict[str, tuple[type, str]] = {
    "window": (MainWindow, "_on_study_changed"),
    "browser": (BrowserPage, "_on_study_changed"),
    "dashboard": (DashboardController, "on_study_changed"),
    "data quality": (DataQualityPanel, "_on_study_changed"),
    "compare": (ComparePage, "_on_study_changed"),
}


@pytest.fixture
def heard(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[StudyChanges]]:
    """What each screen's slot received (patched before the window connects them)."""
    received: dict[str, list[StudyChanges]] = defaultdict(list)

    def counting(name: str, original: Any) -> Any:
        def slot(self: Any, changes: StudyChanges) -> Any:
            received[name].append(changes)
            return original(self, changes)

        return slot

    for name, (cls, attr) in SLOTS.items():
        monkeypatch.setattr(cls, attr, counting(name, getattr(cls, attr)))
    return received


@pytest.fixture
def all_screens(heard, qtbot, study_with_facts):  # noqa: ANN001, ANN201
    from meaningbench.ui.launch import start

    win = start(None, open_initial=False)
    qtbot.addWidget(win)
    path, facts = study_with_facts
    open_in(win, path, qtbot)
    for key in ("dashboard", "compare", "browser"):
        assert win.show_page(key)
    dashboard = win.page("dashboard")
    qtbot.waitUntil(lambda: dashboard.controller.state.loaded, timeout=30_000)
    qtbot.waitUntil(lambda: not win.runner.active, timeout=30_000)
    heard.clear()
    yield win, path, facts
    win.close()


def _ratings_cell(window, item_id: int) -> str | None:  # noqa: ANN001
    model = window.page("browser").model
    row = model.row_of(item_id)
    if row is None:
        return None
    return model.data(model.index(row, model.column_of("ratings")))


def test_a_rating_reaches_every_screen_once_and_they_refresh(all_screens, heard, qtbot) -> None:
    window, _path, _facts = all_screens
    browser = window.page("browser")
    controller = window.page("dashboard").controller
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("tester")
    screen = page.screen
    qtbot.waitUntil(lambda: not browser.model.loading, timeout=10_000)
    for _ in range(20):  # a control item is not in the browser's default view: pass it by
        if browser.model.row_of(screen.current_item().item_id) is not None:
            break
        screen.skip_current()
    item_id = screen.current_item().item_id
    assert browser.model.row_of(item_id) is not None
    browser.select_item(item_id)
    qtbot.waitUntil(lambda: _ratings_cell(window, item_id) is not None)
    cell_before = _ratings_cell(window, item_id)
    version = controller.version
    qtbot.keyClicks(QApplication.focusWidget() or screen, "75")
    qtbot.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)
    rating = StudyChanges.of(ratings=[item_id])
    assert dict(heard) == {name: [rating] for name in SLOTS}
    # The browser rereads the rated row: one more current rating.
    expected = str(int(cell_before or 0) + 1)
    qtbot.waitUntil(lambda: _ratings_cell(window, item_id) == expected, timeout=10_000)
    # The dashboard takes the new rater's rating into its analysis, without a reload.
    qtbot.waitUntil(lambda: controller.version == version + 1, timeout=10_000)
    assert "tester" in controller.state.rater_names


def test_the_batterys_scores_reach_every_screen_once_while_it_runs(
    all_screens, heard, qtbot
) -> None:
    window, path, _facts = all_screens
    browser = window.page("browser")
    columns = browser.model.columnCount()
    handle = window.runner.start(
        in_child_process(score_job, Path(path), ["compression"], {"workers": 1}),
        title="Running metrics",
    )
    qtbot.waitUntil(lambda: not handle.running, timeout=180_000)
    assert handle.outcome == "done", handle.failure
    assert [s.status for s in handle.value] == ["done"]
    for name in SLOTS:
        told = heard[name]
        assert told == heard["window"], name  # every screen heard the same broadcasts
        # Batches of scores, then the rest of the result once: nothing told twice.
        assert told[-1] == StudyChanges(runs=True)
        scored = [ids for changes in told[:-1] for _, ids in changes.scores]
        assert sum(len(ids) for ids in scored) == len(frozenset().union(*scored))
    union = EMPTY
    for changes in heard["browser"]:
        union |= changes
    assert union == handle.changes and [label for label, _ in union.scores] == ["compression"]
    # The browser shows the new run's column.
    qtbot.waitUntil(lambda: browser.model.columnCount() == columns + 1, timeout=10_000)


def test_saving_the_study_settings_is_one_broadcast_to_every_screen(
    all_screens, heard, qtbot
) -> None:
    window, _path, _facts = all_screens
    dialog = window.show_settings_dialog()
    dialog.name_edit.setText("Pilot")
    guidelines = dialog.sections["guidelines"]
    guidelines.guidelines.setPlainText("Rate meaning only.")
    assert dialog.save()
    # The name and every protocol tab are one write: each screen hears it once.
    assert dict(heard) == {name: [StudyChanges(settings=True)] for name in SLOTS}
    assert window.windowTitle() == "Pilot — MeaningBench"
    dialog.reject()
