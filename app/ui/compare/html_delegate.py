"""Draws a cell's HTML (the word diff) wrapped to the column width."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

PADDING = 6


class HtmlDelegate(QStyledItemDelegate):
    def __init__(self, role: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role

    def _document(self, option: QStyleOptionViewItem, html: str, width: float) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        doc.setHtml(html)
        doc.setTextWidth(max(40.0, width - 2 * PADDING))
        return doc

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        html = index.data(self.role)
        if not html:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        doc = self._document(option, html, option.rect.width())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = QPalette.ColorGroup.Active
        ctx.palette.setColor(
            QPalette.ColorRole.Text,
            opt.palette.color(
                group,
                QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text,
            ),
        )
        painter.save()
        top = option.rect.top() + max(PADDING, (option.rect.height() - doc.size().height()) / 2)
        painter.translate(option.rect.left() + PADDING, top)
        painter.setClipRect(QRectF(0, 0, option.rect.width() - PADDING, option.rect.height()))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        html = index.data(self.role)
        if not html:
            return super().sizeHint(option, index)
        width = option.rect.width() if option.rect.width() > 0 else 420
        doc = self._document(option, html, width)
        return QSize(int(doc.idealWidth()) + 2 * PADDING, int(doc.size().height()) + 2 * PADDING)
