"""The esa, likert and hidden-number screens, driven by keys only, against the file."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from sqlalchemy import select

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.spans import words
from meaningbench.db.models import Dimension, Rating, RatingSpan
from meaningbench.ui.annotation.rows import SET_TEXT, UNSET_TEXT
from meaningbench.ui.annotation.span_editor import SpanEditor
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def _current(study) -> list[Rating]:
    with study.session() as s:
        return list(s.scalars(select(Rating).where(Rating.state == "current").order_by(Rating.id)))


def _spans(study, rating_id: int) -> list[tuple[str, int, int, str, str]]:
    with study.session() as s:
        rows = s.scalars(
            select(RatingSpan).where(RatingSpan.rating_id == rating_id).order_by(RatingSpan.start)
        )
        return [(r.side, r.start, r.end, r.severity, r.text) for r in rows]


def test_esa_marks_spans_by_keys_then_scores(qtbot, make_screen, study) -> None:
    set_protocol(study, "esa")
    screen = make_screen()
    item = screen.current_item()
    editor = QApplication.focusWidget()
    assert isinstance(editor, SpanEditor) and editor.side == "output"
    w = words(item.output)
    # Words 2–3 a major error, word 5 a minor one.
    press(qtbot, screen, K.Key_Right)
    press(qtbot, screen, K.Key_Right, SHIFT)
    press(qtbot, screen, K.Key_2)
    for _ in range(2):
        press(qtbot, screen, K.Key_Right)
    press(qtbot, screen, K.Key_1)
    press(qtbot, screen, K.Key_Return)
    assert _current(study) == [], "no score yet: nothing is submitted"
    press(qtbot, screen, K.Key_Tab)
    assert QApplication.focusWidget() is screen.rows[0].scale
    type_text(qtbot, screen, "4")
    press(qtbot, screen, K.Key_Return)
    [rating] = _current(study)
    assert (rating.item_id, rating.value) == (item.item_id, 40.0)
    assert _spans(study, rating.id) == [
        ("output", w[1][0], w[2][1], "major", item.output[w[1][0] : w[2][1]]),
        ("output", w[4][0], w[4][1], "minor", item.output[w[4][0] : w[4][1]]),
    ]
    # The next item's text has no spans; the focus is back on the text.
    assert QApplication.focusWidget() is screen.span_editors[0]
    assert screen.span_editors[0].spans() == []


def test_esa_revision_delete_and_undo(qtbot, make_screen, study) -> None:
    set_protocol(study, "esa")
    screen = make_screen()
    item = screen.current_item()
    press(qtbot, screen, K.Key_2)  # the first word, major
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "3")
    press(qtbot, screen, K.Key_Return)
    press(qtbot, screen, K.Key_Left, ALT)  # back to revise it
    assert screen.current_item().item_id == item.item_id
    editor = screen.span_editors[0]
    assert [s.severity for s in editor.spans()] == ["major"]
    assert QApplication.focusWidget() is editor
    press(qtbot, screen, K.Key_Delete)
    assert editor.spans() == []
    press(qtbot, screen, K.Key_Return)  # a change of spans alone is a revision
    [rating] = _current(study)
    assert rating.value == 30.0 and rating.supersedes_id is not None
    assert _spans(study, rating.id) == []
    press(qtbot, screen, K.Key_Z, CTRL)  # undo the revision: the major span is back
    assert [s.severity for s in screen.span_editors[0].spans()] == ["major"]
    [restored] = _current(study)
    assert _spans(study, restored.id)[0][3] == "major"


def test_esa_with_source_spans_marks_omissions_in_the_original(qtbot, make_screen, study) -> None:
    set_protocol(study, "esa", source_spans=True)
    screen = make_screen()
    item = screen.current_item()
    assert [e.side for e in screen.span_editors] == ["output", "source"]
    press(qtbot, screen, K.Key_Tab)  # output → source
    assert QApplication.focusWidget() is screen.span_editors[1]
    press(qtbot, screen, K.Key_End)
    press(qtbot, screen, K.Key_1)
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "9")
    press(qtbot, screen, K.Key_Return)
    [rating] = _current(study)
    last = words(item.source)[-1]
    assert _spans(study, rating.id) == [
        ("source", last[0], last[1], "minor", item.source[last[0] : last[1]])
    ]


def test_a_severity_key_on_a_span_regrades_it_whole_after_a_stretch_that_went_nowhere(
    qtbot, make_screen, study
) -> None:
    """Shift+→ on the last word selects no more (the cursor stays there): 1 then gives the
    span under it a new severity, as with no Shift, and never cuts it to that word."""
    set_protocol(study, "esa")
    screen = make_screen()
    item = screen.current_item()
    w = words(item.output)
    press(qtbot, screen, K.Key_End)
    press(qtbot, screen, K.Key_Left)
    press(qtbot, screen, K.Key_Right, SHIFT)
    press(qtbot, screen, K.Key_2)  # the last two words, major
    press(qtbot, screen, K.Key_Right, SHIFT)  # at the end: still the last word
    press(qtbot, screen, K.Key_1)
    press(qtbot, screen, K.Key_Left, SHIFT)
    press(qtbot, screen, K.Key_Right, SHIFT)  # there and back: one word again
    press(qtbot, screen, K.Key_1)
    [span] = screen.span_editors[0].spans()
    assert (span.start, span.end, span.severity) == (w[-2][0], w[-1][1], "minor")


def test_source_spans_turned_off_later_stay_with_a_revisited_rating(
    qtbot, make_screen, study
) -> None:
    set_protocol(study, "esa", source_spans=True)
    screen = make_screen()
    press(qtbot, screen, K.Key_1)  # output: the first word, minor
    press(qtbot, screen, K.Key_Tab)
    press(qtbot, screen, K.Key_2)  # source: the first word, major
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "5")
    press(qtbot, screen, K.Key_Return)
    [rating] = _current(study)
    given = _spans(study, rating.id)
    assert [side for side, *_ in given] == ["output", "source"]
    screen.close()
    set_protocol(study, "esa", source_spans=False)  # the lead turns them off
    screen = make_screen()
    press(qtbot, screen, K.Key_Left, ALT)  # back to the rated item, only to look
    assert screen.current_item().item_id == rating.item_id
    press(qtbot, screen, K.Key_Return)
    [still] = _current(study)
    assert still.id == rating.id and _spans(study, still.id) == given
    press(qtbot, screen, K.Key_Left, ALT)  # a revision keeps them too
    press(qtbot, screen, K.Key_Delete)  # the output's span goes
    press(qtbot, screen, K.Key_Return)
    [revised] = _current(study)
    assert revised.id != rating.id and _spans(study, revised.id) == given[1:]


def test_likert_points_are_labelled_and_typed(qtbot, make_screen, study) -> None:
    set_protocol(study, "likert")
    screen = make_screen()
    [row] = screen.rows
    assert row.scale.scale.point_labels[2] == "about half the meaning preserved"
    type_text(qtbot, screen, "9")  # not a point of the scale
    assert row.scale.value() is None
    type_text(qtbot, screen, "4")
    press(qtbot, screen, K.Key_Left)
    assert row.scale.value() == 3
    press(qtbot, screen, K.Key_Return)
    [rating] = _current(study)
    with study.session() as s:
        dim = s.get(Dimension, rating.dimension_id)
        assert (dim.scale, rating.value) == ("likert", 3.0)
    press(qtbot, screen, K.Key_S)  # skip, flag and undo work as on the slider
    press(qtbot, screen, K.Key_Z, CTRL)
    assert _current(study) == []


def test_hidden_number_shows_a_tick_and_never_the_value(qtbot, make_screen, study) -> None:
    set_protocol(study, hidden_number=True)
    screen = make_screen()
    row = screen.rows[0]
    assert row.number.text() == UNSET_TEXT
    type_text(qtbot, screen, "7")
    press(qtbot, screen, K.Key_Right)
    assert row.scale.value() == 71
    assert row.number.text() == SET_TEXT
    assert not any(ch.isdigit() for ch in row.number.text() + row.number.toolTip())
    press(qtbot, screen, K.Key_Return)
    assert [r.value for r in _current(study)] == [71.0]
    assert screen.saved_label.text().startswith("Saved ✓")
