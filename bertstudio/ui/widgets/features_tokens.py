"""The Features tab's Tokens page: every token the model read, [CLS] and [SEP] included, with its
strongest features (the SAE's TopK codes); clicking a feature opens its card."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

SHOWN = 6  # features per token in the table (the tooltip lists all k)
FEATURE_ROLE = Qt.ItemDataRole.UserRole + 1


class TokensTable(QTableWidget):
    feature_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 1 + SHOWN, parent)
        self.setHorizontalHeaderLabels(["Token"] + [f"#{n + 1}" for n in range(SHOWN)])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        for column in range(1, 1 + SHOWN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        self.setToolTip("Each token's strongest features (feature: value); click one for its card")
        self.cellClicked.connect(self._clicked)
        self.encoding: Any = None

    def show_encoding(self, encoding: Any) -> None:
        self.encoding = encoding
        self.setRowCount(len(encoding.tokens))
        self.setVerticalHeaderLabels([str(n) for n in range(len(encoding.tokens))])
        for row, token in enumerate(encoding.tokens):
            item = QTableWidgetItem(token.token)
            item.setToolTip("\n".join(f"feature {f}: {v:.4f}" for f, v in token.features) or "no active feature")
            self.setItem(row, 0, item)
            for column in range(SHOWN):
                if column < len(token.features):
                    feature, value = token.features[column]
                    cell = QTableWidgetItem(f"{feature}  {value:.2f}")
                    cell.setData(FEATURE_ROLE, feature)
                    cell.setToolTip(f"feature {feature} = {value:.4f} on {token.token!r}: click for its card")
                else:
                    cell = QTableWidgetItem("")
                self.setItem(row, 1 + column, cell)

    def clear_encoding(self) -> None:
        self.encoding = None
        self.setRowCount(0)

    def feature_at(self, row: int, column: int) -> int | None:
        item = self.item(row, column)
        value = item.data(FEATURE_ROLE) if item is not None else None
        return int(value) if value is not None else None

    def _clicked(self, row: int, column: int) -> None:
        feature = self.feature_at(row, column if column > 0 else 1)
        if feature is not None:
            self.feature_chosen.emit(feature)
