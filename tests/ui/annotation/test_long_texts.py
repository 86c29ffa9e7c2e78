"""2,000-word pairs on the rating screen: panes that scroll, keys that still rate, spans
at the right offsets."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from sqlalchemy import select

from meaningbench.annotation.protocols import set_protocol
from meaningbench.db.models import Item, Rating, RatingSpan
from meaningbench.ui.annotation.span_editor import SpanEditor
from tests.annotation.long_texts import edit_text, german_like_text
from tests.ui.annotation.conftest import configure, press, type_text

K = Qt.Key
SHIFT = Qt.KeyboardModifier.ShiftModifier


def _make_long(study) -> None:
    with study.session() as s:
        for k, item in enumerate(s.scalars(select(Item).order_by(Item.id))):
            source = german_like_text(2_000, seed=k)
            item.source = source
            item.output = edit_text(source, rate=0.15, seed=k).output


def _bottom_of(widget, screen) -> int:
    return widget.mapTo(screen, widget.rect().bottomLeft()).y()


def test_a_long_pair_scrolls_in_its_panes_and_the_keys_still_rate(
    qtbot, make_screen, study
) -> None:
    _make_long(study)
    configure(study, diff_highlighting=True)
    screen = make_screen()
    qtbot.wait(20)
    item = screen.current_item()
    assert len(item.source.split()) >= 2_000
    assert screen.pair.texts() == (item.source, item.output)
    src, out = (pane.verticalScrollBar() for pane in screen.pair.panes())
    assert src.maximum() > 0 and out.maximum() > 0, "both texts scroll"
    # The scales and the submit button are on screen without scrolling the page.
    for widget in (screen.rows[0].scale, screen.submit_button):
        assert widget.isVisible() and _bottom_of(widget, screen) < screen.height()
    assert screen.link_button.isVisible()

    scale = screen.rows[0].scale
    assert QApplication.focusWidget() is scale
    press(qtbot, screen, K.Key_PageDown, SHIFT)
    press(qtbot, screen, K.Key_PageDown, SHIFT)
    assert src.value() == 2 * src.pageStep() and out.value() > 0
    assert scale.value() is None, "Shift+Page Down scrolls; it does not move the slider"
    assert QApplication.focusWidget() is scale, "the focus stays on the scale"
    press(qtbot, screen, K.Key_PageUp, SHIFT)
    assert src.value() == src.pageStep()

    type_text(qtbot, screen, "75")
    press(qtbot, screen, K.Key_Return)
    with study.session() as s:
        [rating] = s.scalars(select(Rating))
        assert (rating.item_id, rating.value) == (item.item_id, 75.0)
    assert screen.current_item().item_id != item.item_id
    assert src.value() == 0 and out.value() == 0, "the next item starts at its top"


def test_the_panes_scroll_together_until_t_unlinks_them(qtbot, make_screen, study) -> None:
    _make_long(study)
    screen = make_screen()
    qtbot.wait(20)
    src, out = (pane.verticalScrollBar() for pane in screen.pair.panes())
    src.setValue(src.maximum() // 2)  # the mouse wheel in the original
    assert abs(out.value() / out.maximum() - 0.5) < 0.02, "same share of each text"
    press(qtbot, screen, K.Key_T)
    assert not screen.pair.linked and not screen.link_button.isChecked()
    before = out.value()
    src.setValue(src.maximum())
    assert out.value() == before
    press(qtbot, screen, K.Key_T)
    assert screen.pair.linked


def test_short_pairs_need_no_scrolling(qtbot, make_screen) -> None:
    screen = make_screen()
    qtbot.wait(20)
    assert not screen.pair.overflows()
    assert not screen.link_button.isVisible()


def test_error_spans_at_the_end_of_a_long_output(qtbot, make_screen, study) -> None:
    _make_long(study)
    set_protocol(study, "esa")
    screen = make_screen()
    qtbot.wait(20)
    item = screen.current_item()
    editor = QApplication.focusWidget()
    assert isinstance(editor, SpanEditor) and editor.side == "output"
    bar = screen.pair.output.pane.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    # The last three words, a major error: the pane follows the cursor to the end.
    press(qtbot, screen, K.Key_End)
    assert bar.value() > bar.maximum() - bar.pageStep()
    source_bar = screen.pair.source.pane.verticalScrollBar()
    assert source_bar.value() > source_bar.maximum() // 2, "the original follows the output"
    press(qtbot, screen, K.Key_Left, SHIFT)
    press(qtbot, screen, K.Key_Left, SHIFT)
    press(qtbot, screen, K.Key_2)
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "3")
    press(qtbot, screen, K.Key_Return)
    last_three = " ".join(item.output.split()[-3:])
    start = item.output.rindex(last_three)
    with study.session() as s:
        [span] = s.scalars(select(RatingSpan))
        assert (span.side, span.severity) == ("output", "major")
        assert (span.start, span.end) == (start, len(item.output.rstrip()))
        assert span.text == last_three == item.output[span.start : span.end]
    assert start > 10_000, "an offset deep into the long text"


def test_a_click_in_a_pane_leaves_the_keys_with_the_scale(qtbot, make_screen, study) -> None:
    _make_long(study)
    screen = make_screen()
    qtbot.wait(20)
    item = screen.current_item()
    for pane in screen.pair.panes():
        qtbot.mouseClick(pane.viewport(), Qt.MouseButton.LeftButton)
    assert QApplication.focusWidget() is screen.rows[0].scale
    type_text(qtbot, screen, "6")
    press(qtbot, screen, K.Key_Return)
    with study.session() as s:
        [rating] = s.scalars(select(Rating))
        assert (rating.item_id, rating.value) == (item.item_id, 60.0)
