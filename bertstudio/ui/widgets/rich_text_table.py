"""A QTableWidget whose last column is rich text: a matched token in bold inside its context (the
Attention tab's corpus search, the Features tab's feature card). The item's HTML_ROLE text is drawn
as HTML on one line, elided by the column's width; its display text stays plain (sorting, copying)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
)

from bertstudio.ui.widgets.forms import read_only_table

HTML_ROLE = Qt.ItemDataRole.UserRole + 1


class RichTextDelegate(QStyledItemDelegate):
    """Draws an item's HTML_ROLE text as rich text (the matched token in bold), one line, elided by width."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
              ) -> None:
        text = index.data(HTML_ROLE)
        if not text:
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(2)
        doc.setHtml(text)
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, option.palette.color(role))
        painter.save()
        rect = option.rect
        painter.translate(rect.left(), rect.top() + max(0.0, (rect.height() - doc.size().height()) / 2))
        painter.setClipRect(QRectF(0, 0, rect.width(), rect.height()))
        doc.documentLayout().draw(painter, context)
        painter.restore()


def context_table(columns: tuple[str, ...]) -> QTableWidget:
    """A read-only table of whole rows; its last column is rich text (HTML_ROLE) taking the room left,
    the others as wide as their contents."""
    table = read_only_table(columns, stretch=(len(columns) - 1,))
    table.setItemDelegateForColumn(len(columns) - 1, RichTextDelegate(table))
    return table
