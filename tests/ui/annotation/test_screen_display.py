"""What the rating screen shows: the pair as stored, diff tints, controls like any item."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from sqlalchemy import select

from meaningbench.annotation.model import ShownItem
from meaningbench.db.models import Item
from tests.ui.annotation.conftest import configure, press, type_text


def _visible_text(screen) -> str:
    return " ".join(label.text() for label in screen.findChildren(QLabel) if label.isVisible())


def test_pair_shown_verbatim_with_highlighting_off(make_screen, study) -> None:
    screen = make_screen()
    item = screen.current_item()
    with study.session() as s:
        row = s.get(Item, item.item_id)
        assert screen.pair.texts() == (row.source, row.output)
    assert screen.pair.source.text.textFormat() == Qt.TextFormat.PlainText
    assert "background-color" not in screen.pair.source.text.text()


def test_diff_highlighting_when_the_study_asks(make_screen, study) -> None:
    configure(study, diff_highlighting=True)
    screen = make_screen()
    item = screen.current_item()
    markup = screen.pair.output.text.text()
    assert screen.pair.output.text.textFormat() == Qt.TextFormat.RichText
    assert "background-color" in markup
    # The words read the same as the stored texts, tints or not.
    assert screen.pair.texts() == (item.source, item.output)


def test_control_items_look_like_any_other(qtbot, make_screen, study) -> None:
    configure(study, qc_enabled=True)
    screen = make_screen("carol")
    kinds = set()
    for _ in range(screen.queue.progress().total):
        shown = screen.current_item()
        with study.session() as s:
            kinds.add(s.get(Item, shown.item_id).kind)
        text = _visible_text(screen).lower()
        assert "control" not in text and "repeat" not in text and "degraded" not in text
        assert not screen.banner.isVisible()
        type_text(qtbot, screen, "5")
        press(qtbot, screen, Qt.Key.Key_Return)
    assert {"regular", "control-degraded", "control-identical", "control-repeat"} <= kinds
    # What a screen receives has no field that could tell a control apart.
    assert "kind" not in ShownItem.__dataclass_fields__
    assert "parent_id" not in ShownItem.__dataclass_fields__


def test_long_pairs_scroll_instead_of_pushing_the_scales_away(qtbot, make_screen, study) -> None:
    long_text = " ".join(["A very long sentence that goes on and on."] * 120)
    with study.session() as s:
        for item in s.scalars(select(Item)):
            item.source = long_text
    screen = make_screen()
    qtbot.wait(20)
    assert screen.rows[0].scale.isVisible()
    bottom = screen.rows[0].scale.mapTo(screen, screen.rows[0].scale.rect().bottomLeft()).y()
    assert bottom < screen.height()


def test_guidelines_come_from_the_study(make_screen, study) -> None:
    configure(study, guidelines="# Our rules\n\n- rate **meaning** only")
    screen = make_screen()
    text = screen.guidelines.browser.toPlainText()
    assert text.startswith("Our rules") and "rate meaning only" in text


def test_theme_change_follows_the_palette(qtbot, make_screen) -> None:
    from PySide6.QtGui import QColor, QPalette

    screen = make_screen()
    pal = QPalette(screen.palette())
    pal.setColor(QPalette.ColorRole.Base, QColor("#123456"))
    pal.setColor(QPalette.ColorRole.Window, QColor("#101010"))
    screen.setPalette(pal)
    qtbot.wait(10)
    assert "#123456" in screen.pair.styleSheet()
