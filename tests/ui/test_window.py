"""Opening, creating and closing studies; recent studies; pages; dialogs open and close."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel

from meaningbench.settings import UserPrefs
from tests.ui.conftest import open_in
from tests.ui.test_workers import close_error_boxes, error_boxes


def test_new_study_is_created_opened_and_remembered(window, qtbot, tmp_path: Path) -> None:
    assert window.context.study is None and window.stack.currentWidget() is window.welcome
    assert not window.actions_.run_metrics.isEnabled()
    assert window.studies.create_path(tmp_path / "fresh")  # the suffix is added
    created = tmp_path / "fresh.mbstudy"
    assert created.exists()
    assert window.context.path == created
    assert window.windowTitle() == "fresh — MeaningBench"
    assert window.actions_.run_metrics.isEnabled()
    assert window.current_page() == "browser"
    assert UserPrefs.load().recent_studies[0] == str(created.resolve())
    assert "0 items" in window.status.counts_label.text()
    recent = [a.text() for a in window.actions_.recent_menu.actions()]
    assert "fresh.mbstudy" in recent


def test_open_recent_and_close(window, qtbot, study_with_facts, tmp_path: Path) -> None:
    path, facts = study_with_facts
    window.studies.create_path(tmp_path / "other.mbstudy")
    open_in(window, path, qtbot)
    assert f"{len(facts.item_ids)} items" in window.status.counts_label.text()
    recent = UserPrefs.load().recent_studies
    assert recent[:2] == [str(path.resolve()), str((tmp_path / "other.mbstudy").resolve())]
    window.studies.close_study()
    assert window.context.study is None
    assert window.stack.currentWidget() is window.welcome
    assert window.welcome.recent_list.count() == 2
    assert not window.nav.item(0).flags() & window.nav.item(0).flags().ItemIsEnabled
    # Activating a recent entry opens it.
    window.welcome.recent_list.itemActivated.emit(window.welcome.recent_list.item(0))
    qtbot.waitUntil(lambda: window.context.path == path)


def test_a_bad_file_shows_an_error_and_changes_nothing(window, qtbot, tmp_path: Path) -> None:
    bad = tmp_path / "notes.mbstudy"
    bad.write_text("just some text, not a study", encoding="utf-8")
    assert not window.studies.open_path(bad)
    qtbot.waitUntil(lambda: bool(error_boxes()))
    assert "not a MeaningBench study" in error_boxes()[0].text()
    close_error_boxes()
    assert not window.studies.open_path(tmp_path / "missing.mbstudy")
    qtbot.waitUntil(lambda: bool(error_boxes()))
    assert "no such study" in error_boxes()[0].text()
    close_error_boxes()
    assert window.context.study is None
    assert UserPrefs.load().recent_studies == []


def test_register_page_adds_and_replaces(window, qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    assert window.page_keys()[:4] == ["browser", "annotate", "dashboard", "compare"]
    window.register_page("dashboard", "Dashboard", lambda ctx: QLabel("real dashboard"))
    assert window.show_page("dashboard")
    assert window.stack.currentWidget().text() == "real dashboard"
    window.register_page("extra", "Extra", lambda ctx: QLabel(str(ctx.path)), icon="compare")
    assert window.nav.count() == len(window.page_keys()) and window.page_keys()[-1] == "extra"
    window.nav.setCurrentRow(window.nav.count() - 1)
    assert window.current_page() == "extra"
    assert window.stack.currentWidget().text() == str(path)


def test_dialogs_open_without_a_fuss(window, qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    keymap = window.show_keymap()
    texts = [keymap.table.item(r, 0).text() for r in range(keymap.table.rowCount())]
    assert "Run metrics" in texts
    assert "Submit and show the next item (once every scale is set)" in texts
    # Every page is listed with its own key, however many pages the window has.
    keys = {
        keymap.table.item(r, 0).text(): keymap.table.item(r, 1).text()
        for r in range(keymap.table.rowCount())
        if keymap.table.item(r, 1)
    }
    pages = len(window.page_keys())
    assert pages >= 5
    assert [keys.get(f"Go to {window.nav.item(i).text()}") for i in range(pages)] == [
        f"Ctrl+{i + 1}" for i in range(pages)
    ]
    keymap.close()
    about = window.show_about()
    assert "MeaningBench" in about.text()
    about.close()


def test_the_first_window_fits_the_screen_it_opens_on(window) -> None:
    from PySide6.QtCore import QRect

    from meaningbench.ui.window_state import default_geometry

    # A 1366×768 laptop with a 32-px panel: the default is cut to the free height.
    laptop = QRect(0, 32, 1366, 736)
    fitted = default_geometry(laptop)
    assert laptop.contains(fitted) and fitted.height() <= 736 - 40
    assert fitted.width() == 1280 and fitted.center() == laptop.center()
    assert default_geometry(QRect(0, 0, 2560, 1440)).size().toTuple() == (1280, 800)
    # The window itself, on the (offscreen, 800-px) screen it opened on: its frame ends
    # above the screen's bottom edge (its width cannot go below the window's minimum).
    free = window.screen().availableGeometry()
    assert free.top() <= window.geometry().top() and window.geometry().bottom() <= free.bottom()
    assert window.geometry().height() <= free.height() - 40
