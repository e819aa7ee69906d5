"""A QTableWidget whose last column is rich text: a matched token in bold inside its context (the
Attention tab's corpus search, the Features tab's feature card). The item's HTML_ROLE text is drawn
as HTML on one line, elided by the column's width; its display text stays plain (sorting, copying)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
)

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
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    last = len(columns) - 1
    table.setItemDelegateForColumn(last, RichTextDelegate(table))
    for column in range(len(columns)):
        mode = QHeaderView.ResizeMode.Stretch if column == last else QHeaderView.ResizeMode.ResizeToContents
        table.horizontalHeader().setSectionResizeMode(column, mode)
    return table
