"""The Annotate page picks the screen for the study's protocol, runs the practice block
first, and warns the coordinator about raters below the study's thresholds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.annotation.practice import add_practice
from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import utcnow
from meaningbench.db.study import create_study, open_study
from tests.annotation.factories import add_items
from tests.ui.conftest import open_in

K = Qt.Key


def _study(path: Path, protocol: str, sources: int = 6, outputs: int = 2) -> Path:
    st = create_study(path)
    try:
        add_items(st, sources, outputs)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 3, False
            save_settings(s, cfg)
        set_protocol(st, protocol)
    finally:
        st.close()
    return path


def _key(qtbot, key, text: str = "") -> None:
    target = QApplication.focusWidget()
    if text:
        qtbot.keyClicks(target, text)
    else:
        qtbot.keyClick(target, key)


def test_practice_first_then_the_side_by_side_screen(window, qtbot, tmp_path) -> None:  # noqa: F811
    from meaningbench.ui.annotation.practice_screen import PracticeScreen
    from meaningbench.ui.annotation.side_by_side import SideBySideScreen

    path = _study(tmp_path / "sxs.mbstudy", "sxs")
    st = open_study(path)
    try:
        add_practice(st, [("A long original sentence.", "A short one.", 30.0, 70.0, "Half.")])
    finally:
        st.close()
    open_in(window, path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("newcomer")
    assert isinstance(page.stack.currentWidget(), PracticeScreen)
    _key(qtbot, None, "5")
    _key(qtbot, K.Key_Return)
    assert "within the expected 30–70" in page.practice.result.text()
    _key(qtbot, K.Key_Return)
    assert isinstance(page.screen, SideBySideScreen)
    assert page.stack.currentWidget() is page.screen and page.practice is None
    page.stop()
    assert page.start("newcomer")  # practice done once: straight to the study
    assert isinstance(page.stack.currentWidget(), SideBySideScreen)


def test_the_coordinator_is_warned_about_a_hurried_straight_liner(window, qtbot, tmp_path) -> None:  # noqa: F811
    path = _study(tmp_path / "da.mbstudy", "da")
    st = open_study(path)
    try:
        sess = AnnotationSession(st, "cy")
        while (item := sess.next_item()) is not None:
            now = utcnow()
            sess.submit(
                item.item_id,
                {"meaning": 50.0},
                shown_at=now - timedelta(seconds=1),
                submitted_at=now,
            )
    finally:
        st.close()
    open_in(window, path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    page.page_shown()
    assert page.rater_checks.isVisible()
    text = page.rater_checks.text()
    assert "⚠ cy:" in text and "straight-lining" in text and "median 1.0 s per item" in text


def _rating_as_ana(win, qtbot, path: Path):  # noqa: ANN001, ANN202 - the Annotate page
    """The study open in the window and ana's queue on the Annotate page."""
    open_in(win, path, qtbot)
    win.activateWindow()
    assert win.show_page("annotate")
    page = win.page("annotate")
    assert page.start("ana")
    return page


def _sxs_keys(qtbot, host) -> None:  # noqa: ANN001
    """`3 0`, Tab, `9 0`, Tab, `5`, Tab, `4 0`: where the rater's keys go, as typed."""
    for i, digits in enumerate(["30", "90", "5", "40"]):
        if i:
            qtbot.keyClick(QApplication.focusWidget() or host, K.Key_Tab)
        qtbot.keyClicks(QApplication.focusWidget() or host, digits)


def test_sxs_keys_reach_the_first_output_on_open_and_resume(window, qtbot, tmp_path) -> None:  # noqa: F811
    page = _rating_as_ana(window, qtbot, _study(tmp_path / "sxs4.mbstudy", "sxs", 3, 4))
    screen = page.screen
    _sxs_keys(qtbot, window)
    assert [c.row.scale.value() for c in screen.columns] == [30.0, 90.0, 50.0, 40.0]
    qtbot.keyClick(QApplication.focusWidget(), K.Key_Return)
    assert screen.progress_label.text().startswith("Outputs 5–8 of 12 · ")
    # Resume: the queue opened again, and the page shown again after another page.
    page.stop()
    assert page.start("ana")
    screen = page.screen
    assert window.show_page("browser") and window.show_page("annotate")
    assert QApplication.focusWidget() is screen.columns[0].row.scale
    _sxs_keys(qtbot, window)
    assert [c.row.scale.value() for c in screen.columns] == [30.0, 90.0, 50.0, 40.0]


def _underline_differs(editor, rect) -> bool:  # noqa: ANN001
    """Whether the 2-px line under `rect` is painted (it differs from the text's background)."""
    image = editor.grab().toImage()
    y = int(rect.bottom()) - 1
    background = image.pixelColor(editor.width() - 3, y)
    xs = range(int(rect.left()) + 1, int(rect.right()) - 1)
    return any(image.pixelColor(x, y) != background for x in xs)


def test_esa_texts_match_in_size_and_the_cursor_shows(window, qtbot, tmp_path) -> None:  # noqa: F811
    from PySide6.QtGui import QFontInfo

    screen = _rating_as_ana(window, qtbot, _study(tmp_path / "esa.mbstudy", "esa")).screen
    for _ in range(2):  # the first item and the next one
        original, simplified = screen.pair.source.text, screen.pair.output.text
        assert simplified is screen.span_editors[0]
        size = QFontInfo(original.font()).pixelSize()
        assert QFontInfo(simplified.font()).pixelSize() == size
        assert size > QFontInfo(QApplication.font()).pixelSize()
        editor = screen.span_editors[0]
        assert QApplication.focusWidget() is editor
        cursor = editor._line_rects(*editor.selection())[0]
        later_word = editor._line_rects(*editor._words[2])[0]
        assert _underline_differs(editor, cursor)
        assert not _underline_differs(editor, later_word)
        _key(qtbot, K.Key_Tab)  # the score takes the keys: the cursor still shows
        assert QApplication.focusWidget() is not editor
        assert _underline_differs(editor, cursor)
        _key(qtbot, None, "6")
        _key(qtbot, K.Key_Return)
