"""Check boxes are seen in both themes, measured on their pixels: an unchecked box's border
and a checked box's tick stand out at WCAG's 3:1 for controls, in a plain QCheckBox (the
Sweep page's choices) and in a list of checkable items (Run metrics' metric list)."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QStyle,
    QStyleOptionButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tests.ui.test_contrast import contrast

MIN_CONTRAST = 3.0


def pixels(image: QImage, rect: QRect) -> list[QColor]:
    return [
        image.pixelColor(x, y)
        for x in range(max(rect.left(), 0), min(rect.right() + 1, image.width()))
        for y in range(max(rect.top(), 0), min(rect.bottom() + 1, image.height()))
    ]


def border_contrast(image: QImage, rect: QRect, background: QColor) -> float:
    """The strongest contrast of the indicator's pixels against what is around it."""
    return max(contrast(c, background) for c in pixels(image, rect.adjusted(-1, -1, 1, 1)))


def tick_contrast(image: QImage, rect: QRect) -> float:
    """The strongest contrast inside a checked box against its own fill (its commonest
    colour): a tick scores high, a box that is only filled scores 1."""
    inner = pixels(image, rect.adjusted(3, 3, -3, -3))
    fill = Counter(c.rgb() for c in inner).most_common(1)[0][0]
    return max(contrast(c, QColor.fromRgb(fill)) for c in inner)


def box_indicator(box: QCheckBox) -> QRect:
    opt = QStyleOptionButton()
    box.initStyleOption(opt)
    return box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)


def item_indicator(tree: QTreeWidget, item: QTreeWidgetItem) -> QRect:
    """The check box of an item: a square of the row's height at the row's left, found
    on the pixels (the style places it), in viewport coordinates."""
    row = tree.visualItemRect(item)
    side = row.height()
    return QRect(row.left(), row.top(), side + 4, side)


@pytest.fixture(params=["light", "dark"])
def themed(request, window):  # noqa: ANN001, ANN201
    window.set_theme(request.param)
    return request.param


def test_check_box_border_and_tick(themed, qtbot) -> None:
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    off, on = QCheckBox("BERTScore"), QCheckBox("SBERT cosine")
    on.setChecked(True)
    layout.addWidget(off)
    layout.addWidget(on)
    host.show()
    qtbot.waitExposed(host)
    background = host.palette().color(QPalette.ColorRole.Window)
    off_image = off.grab().toImage()
    assert border_contrast(off_image, box_indicator(off), background) >= MIN_CONTRAST, themed
    on_image = on.grab().toImage()
    assert tick_contrast(on_image, box_indicator(on)) >= MIN_CONTRAST, themed
    assert border_contrast(on_image, box_indicator(on), background) >= MIN_CONTRAST, themed


def test_checkable_items_border_and_tick(themed, qtbot) -> None:
    tree = QTreeWidget()
    qtbot.addWidget(tree)
    tree.setHeaderHidden(True)
    tree.setRootIsDecorated(False)
    items = []
    for text, state in (("BLEU", Qt.CheckState.Unchecked), ("chrF", Qt.CheckState.Checked)):
        item = QTreeWidgetItem([text])
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, state)
        tree.addTopLevelItem(item)
        items.append(item)
    tree.resize(300, 120)
    tree.show()
    qtbot.waitExposed(tree)
    image = tree.viewport().grab().toImage()
    background = tree.palette().color(QPalette.ColorRole.Base)
    off, on = (item_indicator(tree, it) for it in items)
    assert border_contrast(image, off, background) >= MIN_CONTRAST, themed
    assert tick_contrast(image, on) >= MIN_CONTRAST, themed
