"""A flag set on the rating screen reaches the open browser at once: under the Flagged
filter the item joins the rows, and without it the flag column marks it (real window, real
study file, offscreen)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.annotation.conftest import press, type_text
from tests.ui.conftest import open_in

K = Qt.Key


def _rows(browser) -> set[int]:  # noqa: ANN001
    model = browser.model
    return {model.item_id(row) for row in range(model.rowCount())}


def _flag_cell(browser, item_id: int) -> str:  # noqa: ANN001
    model = browser.model
    row = model.row_of(item_id)
    assert row is not None
    return str(model.data(model.index(row, model.column_of("flag"))) or "")


def _loaded(browser) -> bool:  # noqa: ANN001
    return not browser.model.loading


def _unflagged(qtbot, screen, flagged: set[int]) -> int:  # noqa: ANN001
    """The item on screen once S has skipped those already flagged (the queue's order is
    the rater's own)."""
    while screen.current_item().item_id in flagged:
        press(qtbot, screen, K.Key_S)
    return screen.current_item().item_id


def test_a_flag_on_the_rating_screen_shows_in_the_open_browser(
    window, qtbot, study_with_facts
) -> None:
    path, facts = study_with_facts
    window.show()
    open_in(window, path, qtbot)
    browser = window.page("browser")
    # The rater's queue may open on a control item: the browser shows every kind.
    browser.kind_combo.setCurrentIndex(browser.kind_combo.findData("all"))
    browser.flagged_check.setChecked(True)
    qtbot.waitUntil(lambda: _loaded(browser) and _rows(browser) == facts.flagged, timeout=10_000)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("flagger")
    screen = page.screen
    item = _unflagged(qtbot, screen, facts.flagged)
    press(qtbot, screen, K.Key_F)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is screen._flag_dialog.comment)
    type_text(qtbot, screen, "cut off")
    press(qtbot, screen, K.Key_Return)
    assert screen.flag_chip.isVisible()
    # The browser was not reopened: the broadcast of the flag's changes brought it in.
    qtbot.waitUntil(
        lambda: _loaded(browser) and _rows(browser) == facts.flagged | {item}, timeout=10_000
    )
    # Without the filter, the flag column marks the next item flagged.
    browser.flagged_check.setChecked(False)
    qtbot.waitUntil(lambda: _loaded(browser) and item in _rows(browser), timeout=10_000)
    assert _flag_cell(browser, item) == "⚑"
    press(qtbot, screen, K.Key_S)
    following = _unflagged(qtbot, screen, facts.flagged | {item})
    assert _flag_cell(browser, following) == ""
    press(qtbot, screen, K.Key_F)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is screen._flag_dialog.comment)
    press(qtbot, screen, K.Key_Return)
    qtbot.waitUntil(lambda: _flag_cell(browser, following) == "⚑", timeout=10_000)
