"""Tables for evaluation results that stay responsive at 10,000 rows: a model over plain tuples
(no widget per cell) behind a QSortFilterProxyModel. Sorting is one Python `sorted` over the raw
values in the model (the proxy's per-pair lessThan calls into Python cost seconds at this size),
and the filter matches a lower-cased text of each row prepared once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

SORT_ROLE = Qt.ItemDataRole.UserRole
Index = QModelIndex | QPersistentModelIndex


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


class RecordsModel(QAbstractTableModel):
    """Rows of plain values under fixed headers; each row may carry a payload (e.g. a RowResult)."""

    def __init__(self, headers: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headers = list(headers)
        self.records: list[tuple[Any, ...]] = []
        self.payloads: list[Any] = []
        self.search: list[str] = []  # each row's cells, lower case, for the filter
        self._sorted: tuple[int, Qt.SortOrder] | None = None

    def set_records(self, records: Sequence[tuple[Any, ...]], payloads: Sequence[Any] | None = None,
                    headers: Sequence[str] | None = None) -> None:
        self.beginResetModel()
        if headers is not None:
            self.headers = list(headers)
        self.records = [tuple(r) for r in records]
        self.payloads = list(payloads) if payloads is not None else [None] * len(self.records)
        self.search = ["\t".join(_shown(v) for v in r).lower() for r in self.records]
        self._sorted = None
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.headers) or not self.records or self._sorted == (column, order):
            return
        values = [r[column] for r in self.records]
        if all(isinstance(v, int | float) for v in values):  # missing (NaN) last either way
            keys: list[Any] = [(v != v, v) for v in values]
        else:
            keys = [("" if v is None else str(v)).lower() for v in values]
        rows = sorted(range(len(values)), key=keys.__getitem__, reverse=order == Qt.SortOrder.DescendingOrder)
        self.beginResetModel()
        self.records = [self.records[i] for i in rows]
        self.payloads = [self.payloads[i] for i in rows]
        self.search = [self.search[i] for i in rows]
        self._sorted = (column, order)
        self.endResetModel()

    def clear(self) -> None:
        self.set_records([])

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        value = self.records[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return _shown(value)
        if role == SORT_ROLE:
            return value
        if role == Qt.ItemDataRole.ToolTipRole and isinstance(value, str) and len(value) > 60:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, int | float) and not isinstance(value, bool):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section] if section < len(self.headers) else None
        return super().headerData(section, orientation, role)


class RecordsProxy(QSortFilterProxyModel):
    """Keeps the model's order (the model sorts itself) and filters on the prepared row texts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.needle = ""

    def set_needle(self, text: str) -> None:
        self.beginFilterChange()
        self.needle = text.strip().lower()
        self.endFilterChange()

    def setSourceModel(self, model: RecordsModel) -> None:  # type: ignore[override]  # noqa: N802 - Qt API
        self.records_model = model
        super().setSourceModel(model)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802 - Qt API
        return not self.needle or self.needle in self.records_model.search[source_row]

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)


class RecordsView(QTableView):
    """A sortable, filterable view of a RecordsModel; `payload_at(view_row)` maps back through the proxy."""

    opened = Signal(object)  # the payload of a double-clicked row that has one (a row of the evaluated file…)

    def __init__(self, headers: Sequence[str], stretch: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doubleClicked.connect(self._open)
        self.source_model = RecordsModel(headers, self)
        self.proxy = RecordsProxy(self)
        self.proxy.setSourceModel(self.source_model)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # the file's order until clicked
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(stretch is None)
        self._stretch = stretch
        self._fit_columns(0)  # an empty table's headers are not cut ("mean |attribution|")

    def set_records(self, records: Sequence[tuple[Any, ...]], payloads: Sequence[Any] | None = None,
                    headers: Sequence[str] | None = None) -> None:
        self.source_model.set_records(records, payloads, headers)
        self._fit_columns(len(records))

    def _fit_columns(self, rows: int) -> None:
        """Columns as wide as their header and (up to 200 rows) their cells; the stretch column takes the rest."""
        stretch = self._stretch if self._stretch is not None and self._stretch < self.source_model.columnCount() else -1
        if stretch >= 0:
            self.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        if rows <= 200:  # measuring every row's text is what makes big tables slow
            self.resizeColumnsToContents()
            if stretch >= 0:
                self.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)

    def set_filter(self, text: str) -> None:
        self.proxy.set_needle(text)

    def payload_at(self, view_row: int) -> Any:
        source = self.proxy.mapToSource(self.proxy.index(view_row, 0))
        return self.source_model.payloads[source.row()] if source.isValid() else None

    def _open(self, index: QModelIndex) -> None:
        payload = self.payload_at(index.row())
        if payload is not None:
            self.opened.emit(payload)

    def visible_rows(self) -> int:
        return self.proxy.rowCount()
