"""The small pieces the task views' forms repeat: a Browse… button, a spin box, a
text box and a read-only table, each built one way so the views say what they hold, not how."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
)


def browse_button(target: QLineEdit | Callable[[str], None], title: str, filters: str = "", *, folder: bool = False,
                  text: str = "Browse…", then: Callable[[], None] | None = None) -> QPushButton:
    """A button that asks for a file (`filters`) or a folder and puts it into `target` (a line edit, or a
    function given the path), then calls `then`."""
    button = QPushButton(text)

    def choose() -> None:
        start = target.text() if isinstance(target, QLineEdit) else ""
        if folder:
            path = QFileDialog.getExistingDirectory(button, title, start)
        else:
            path, _ = QFileDialog.getOpenFileName(button, title, start, filters)
        if not path:
            return
        if isinstance(target, QLineEdit):
            target.setText(path)
        else:
            target(path)
        if then is not None:
            then()

    button.clicked.connect(choose)
    return button


def spin_box(low: int, high: int, value: int | None = None, *, prefix: str = "", tip: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    if value is not None:
        spin.setValue(value)
    spin.setPrefix(prefix)
    spin.setToolTip(tip)
    return spin


def text_box(placeholder: str, height: int) -> QPlainTextEdit:
    """A plain-text input at most `height` pixels tall."""
    box = QPlainTextEdit()
    box.setPlaceholderText(placeholder)
    box.setMaximumHeight(height)
    return box


def read_only_table(headers: Sequence[str], stretch: Sequence[int] = (0,), *, rows: bool = True) -> QTableWidget:
    """A table the user reads (one row selected at a time when `rows`): the `stretch` columns share the
    room, the others take what their contents need; no row numbers."""
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if rows:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    for column in range(len(headers)):
        mode = QHeaderView.ResizeMode.Stretch if column in stretch else QHeaderView.ResizeMode.ResizeToContents
        header.setSectionResizeMode(column, mode)
    return table


def listed_or_typed(combo: QComboBox) -> str:
    """An editable combo's choice: the path behind a listed item (its data) while its text is shown
    unchanged, else what the user typed."""
    index = combo.currentIndex()
    data = combo.itemData(index) if index >= 0 else None
    if data and combo.itemText(index) == combo.currentText():
        return str(data)
    return combo.currentText().strip()


def set_cells(table: QTableWidget, line: int, texts: Sequence[str], tip: str | None = None) -> None:
    """One row's texts, each with a tooltip (default: its own text, whole where the column cuts it)."""
    for column, text in enumerate(texts):
        item = QTableWidgetItem(text)
        item.setToolTip(text if tip is None else tip)
        table.setItem(line, column, item)
