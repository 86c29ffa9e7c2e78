"""Side by side (sxs): the outputs of one source rated together, by keys only, with the
order shown recorded; undo, skip, revise and resume work on the whole unit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from sqlalchemy import select

from meaningbench.annotation.protocols import set_protocol
from meaningbench.db.models import Item, Rating
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key
CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def _current(study) -> list[Rating]:
    with study.session() as s:
        return list(s.scalars(select(Rating).where(Rating.state == "current").order_by(Rating.id)))


def _rate_unit(qtbot, screen, digits: list[str]) -> list[int]:
    shown = screen.current_unit().item_ids
    for i, d in enumerate(digits):
        if i:
            press(qtbot, screen, K.Key_Tab)
        type_text(qtbot, screen, d)
    press(qtbot, screen, K.Key_Return)
    return shown


def test_a_unit_shows_one_source_and_its_outputs_each_on_a_slider(qtbot, make_sxs, study) -> None:
    screen = make_sxs()
    unit = screen.current_unit()
    with study.session() as s:
        items = [s.get(Item, i) for i in unit.item_ids]
        assert len({it.source_group for it in items}) == 1 and len(items) == 2
    assert screen.source.text.text() == items[0].source
    assert [c.panel.text.text() for c in screen.columns] == [it.output for it in items]
    assert QApplication.focusWidget() is screen.columns[0].row.scale


def test_enter_stores_each_output_with_the_order_shown(qtbot, make_sxs, study) -> None:
    screen = make_sxs()
    type_text(qtbot, screen, "3")
    press(qtbot, screen, K.Key_Return)
    assert _current(study) == [], "one output unrated: nothing is stored"
    press(qtbot, screen, K.Key_Tab)
    assert QApplication.focusWidget() is screen.columns[1].row.scale
    type_text(qtbot, screen, "8")
    shown = screen.current_unit().item_ids
    press(qtbot, screen, K.Key_Return)
    ratings = _current(study)
    assert [(r.item_id, r.value) for r in ratings] == [(shown[0], 30.0), (shown[1], 80.0)]
    assert [r.display for r in ratings] == [
        {"position": 0, "items": shown},
        {"position": 1, "items": shown},
    ]
    assert ratings[0].submitted_at == ratings[1].submitted_at
    assert screen.current_unit().item_ids != shown
    assert screen.saved_label.text().startswith("Saved ✓")


def test_the_order_is_random_but_stable_across_a_restart(qtbot, make_sxs, study) -> None:
    screen = make_sxs()
    orders = []
    for _ in range(6):
        shown = screen.current_unit().item_ids
        orders.append(shown)
        second = make_sxs("alice")  # a second window, as after a crash
        assert second.current_unit().item_ids == shown
        second.close()
        with qtbot.waitActive(screen):
            screen.activateWindow()
        screen.columns[0].row.scale.setFocus()
        _rate_unit(qtbot, screen, ["5", "6"])
    recorded = {tuple(r.display["items"]) for r in _current(study)}
    assert recorded == {tuple(o) for o in orders}
    assert screen.current_unit() is None
    assert screen.progress_label.text().startswith("12 of 12 rated · ")


def test_undo_skip_and_revise_work_on_the_unit(qtbot, make_sxs, study) -> None:
    screen = make_sxs()
    first = _rate_unit(qtbot, screen, ["2", "9"])
    press(qtbot, screen, K.Key_Z, CTRL)
    assert _current(study) == []
    assert screen.current_unit().item_ids == first
    skipped = screen.current_unit().item_ids
    press(qtbot, screen, K.Key_S)
    assert screen.current_unit().item_ids != skipped
    rated = _rate_unit(qtbot, screen, ["4", "7"])
    press(qtbot, screen, K.Key_Left, ALT)
    unit = screen.current_unit()
    assert unit.reviewing and unit.item_ids == rated
    assert [c.row.scale.value() for c in screen.columns] == [40.0, 70.0]
    press(qtbot, screen, K.Key_Right)  # 40 → 41 on the focused slider
    press(qtbot, screen, K.Key_Return)
    values = {r.item_id: r.value for r in _current(study)}
    assert values == {rated[0]: 41.0, rated[1]: 70.0}
    with study.session() as s:
        old = s.scalars(select(Rating).where(Rating.state == "superseded")).all()
        assert {r.item_id for r in old} == set(rated)


def test_the_sliders_stand_level_whatever_the_lengths_of_the_outputs(qtbot, study) -> None:
    from meaningbench.ui.annotation.side_by_side import SideBySideScreen

    outputs = ["Short.", "A middling output of a dozen words or so, no more.", "Long " * 90]
    with study.session() as s:
        # One source with three outputs, from one word to many lines.
        first = s.scalars(select(Item).order_by(Item.id)).first()
        same = s.scalars(select(Item).where(Item.source_group == first.source_group)).all()
        for item, text in zip(same, outputs, strict=False):
            item.output = text
        kept = ("dataset_id", "source", "references", "source_group", "meta")
        third = Item(**{c: getattr(first, c) for c in kept}, system="system-9", pair_key="long")
        third.output = outputs[2]
        s.add(third)
    set_protocol(study, "sxs")
    screen = SideBySideScreen(study, "alice")
    qtbot.addWidget(screen)
    screen.show()
    qtbot.waitExposed(screen)
    while len(screen.current_unit().items) < 3:
        press(qtbot, screen, K.Key_S)
    assert sorted(len(c.panel.text.text()) for c in screen.columns) == [6, 50, 450]
    for size in [(1400, 900), (1024, 700), (1366, 768)]:
        screen.resize(*size)
        qtbot.wait(50)
        tops = [c.row.scale.mapTo(screen, c.row.scale.rect().topLeft()).y() for c in screen.columns]
        assert len(set(tops)) == 1, f"{size}: slider tops at {tops}"
        assert len({c.panel.height() for c in screen.columns}) == 1


def test_chorded_digits_set_no_slider_side_by_side(qtbot, make_sxs, study) -> None:
    screen = make_sxs()
    first = screen.columns[0].row.scale
    for target in (first, screen):
        for mod in (CTRL, ALT, Qt.KeyboardModifier.MetaModifier):
            qtbot.keyClick(target, K.Key_5, mod)
    assert all(c.row.scale.value() is None for c in screen.columns)
    press(qtbot, screen, K.Key_Return)
    assert _current(study) == []


def test_f_flags_the_output_in_focus_and_the_keys_go_back_to_the_sliders(
    qtbot, make_sxs, study
) -> None:
    from meaningbench.db.models import ItemNote

    screen = make_sxs()
    first, second = screen.columns[0].row.scale, screen.columns[1].row.scale
    press(qtbot, screen, K.Key_Tab)
    assert QApplication.focusWidget() is second
    press(qtbot, screen, K.Key_F)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is screen._flag_dialog.comment)
    type_text(qtbot, screen, "not a sentence")
    press(qtbot, screen, K.Key_Return)
    assert screen.hint.text() == "Flagged."
    with study.session() as s:
        notes = s.execute(select(ItemNote.item_id, ItemNote.flagged, ItemNote.comment)).all()
    assert notes == [(screen.current_unit().item_ids[1], True, "not a sentence")]
    # As when the unit was shown: the first output's slider takes the digits.
    qtbot.waitUntil(lambda: QApplication.focusWidget() is first)
    type_text(qtbot, screen, "3")
    assert first.value() == 30 and second.value() is None
    # Shift+Tab goes back through the outputs as Tab goes forth.
    press(qtbot, screen, K.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert QApplication.focusWidget() is second
