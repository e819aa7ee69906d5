"""A layout that wraps its items onto the next line when the width runs out (Qt's FlowLayout example).

A row of controls laid out by a QHBoxLayout asks for the sum of its items' widths: one row of a task
tab (compare with, heads off, Run, Cancel, Explain) held every tab at 936-990 pixels, wider than a
900-pixel window. In a flow the row asks for its widest item only and wraps below that width.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QSizePolicy, QWidget


class FlowLayout(QLayout):
    """Items left to right, wrapping; height for width, so the parent grows a line when it wraps."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        """One line of every item: what the row wants when there is room."""
        visible = [item for item in self._items if not item.isEmpty()]
        width = sum(item.sizeHint().width() for item in visible) + self._spacing * max(0, len(visible) - 1)
        height = max((item.sizeHint().height() for item in visible), default=0)
        margins = self.contentsMargins()
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802
        """The widest single item: below that nothing can wrap any more."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Place the items line by line inside `rect`, each centred on its line; the height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        lines: list[list[tuple[QLayoutItem, int]]] = [[]]
        x = area.x()
        for item in self._items:
            if item.isEmpty():
                continue
            width = min(item.sizeHint().width(), area.width()) if area.width() > 0 else item.sizeHint().width()
            width = max(width, item.minimumSize().width())
            if lines[-1] and x + width > area.right() + 1:
                lines.append([])
                x = area.x()
            lines[-1].append((item, width))
            x += width + self._spacing
        y = area.y()
        for line in lines:
            height = max((item.sizeHint().height() for item, _ in line), default=0)
            x = area.x()
            for item, width in line:
                if move:
                    own = item.sizeHint().height()
                    item.setGeometry(QRect(QPoint(x, y + (height - own) // 2), QSize(width, own)))
                x += width + self._spacing
            y += height + self._spacing
        return max(0, y - self._spacing) - rect.y() + margins.bottom()

def group(*widgets: QWidget, stretch_first: bool = False) -> QWidget:
    """Widgets that stay together on one line of a flow (a label and its field, a row of buttons)."""
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        row.addWidget(widget, 1 if stretch_first and index == 0 else 0)
    holder.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return holder


class HeightForWidth(QWidget):
    """Holds a layout with wrapping rows and says their wrapped height as its least height: a splitter
    pane or a scroll area's page knows no height-for-width, so without it the wrapped lines overlapped
    the widgets below (Attention's options over its model view at 900x600)."""

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        layout = self.layout()
        needed = layout.heightForWidth(self.width()) if layout is not None else -1
        if needed > 0 and needed != self.minimumHeight():
            self.setMinimumHeight(needed)


def wrapping_row(flow: FlowLayout) -> HeightForWidth:
    """`flow` in a widget that keeps room for every line it wraps onto."""
    holder = HeightForWidth()
    flow.setContentsMargins(0, 0, 0, 0)
    holder.setLayout(flow)
    return holder
