"""The attention tab's views, each a subscriber of the one view state (core.tasks.attention.state):
the detail heatmap, the head view with its legend and scroll bar, the statistics table.

A view never writes another view; it writes the state, and redraws when the fields it uses
change. The head view, when it is not the page shown, only remembers that it is stale.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollBar,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.tasks.attention.bundle import AttentionBundle, detail_matrix, is_identity, shown, shown_heads
from bertstudio.core.tasks.attention.state import VIEW_FIELDS, AttentionViewState
from bertstudio.core.tasks.attention.view import STAT_COLUMNS, STAT_TITLES, HeadStatistics
from bertstudio.ui import theme
from bertstudio.ui.widgets.attention_head_view import VISIBLE_TOKENS, HeadView, head_colour
from bertstudio.ui.widgets.attention_heatmap import AttentionHeatmap
from bertstudio.ui.widgets.layouts import column, row


def readout_label(text: str) -> QLabel:
    """A one-line readout that never widens the window, however long the text (it is clipped)."""
    label = QLabel(text)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class StatePage(QWidget):
    """A view of the bundle under the state: redraws on its fields, or when shown if it was stale."""

    FIELDS: frozenset[str] = frozenset()

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.bundle: AttentionBundle | None = None
        self._stale = False
        state.subscribe(lambda _changed: self.refresh(), only=self.FIELDS)

    def set_bundle(self, bundle: AttentionBundle | None) -> None:
        self.bundle = bundle
        self.refresh()

    def refresh(self) -> None:
        if self.bundle is None:
            return
        if self.lazy() and not self.current():
            self._stale = True
            return
        self._stale = False
        self.draw(self.bundle)

    def current(self) -> bool:
        """The page its tab widget shows (whether or not the window shows the attention tab)."""
        stack = self.parentWidget()
        return not isinstance(stack, QStackedWidget) or stack.currentWidget() is self

    def became_current(self) -> None:
        if self._stale:
            self.refresh()

    def lazy(self) -> bool:
        """True: skip drawing while hidden (drawn when shown)."""
        return True

    def draw(self, bundle: AttentionBundle) -> None:
        raise NotImplementedError


class DetailPage(StatePage):
    """One head, the layer mean or rollout as a large heatmap; arrow keys move between heads."""

    FIELDS = frozenset({"layer", "head", "source", "colours"}) | VIEW_FIELDS

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.layer = QSpinBox()
        self.layer.setPrefix("layer ")
        self.head = QSpinBox()
        self.head.setPrefix("head ")
        self.layer.valueChanged.connect(lambda v: state.update(layer=v))
        self.head.valueChanged.connect(lambda v: state.update(head=v))
        self.heatmap = AttentionHeatmap()
        self.heatmap.arrow.connect(state.move)
        self.title = ""
        self._colours = "viridis"  # the heatmap's own default
        self.readout = readout_label("Hover the heatmap: query -> key: weight   (←/→ or [ / ]: head, ↑/↓: layer)")
        self.heatmap.hovered.connect(self.readout.setText)
        # the layer/head boxes sit in the tab's option row and the readout beside the page tabs, and
        # the key tokens need no "key" caption: every pixel goes to the rows (20 labels at 1280x800)
        self.heatmap.hide_label("bottom")
        self.heatmap.ci.layout.setContentsMargins(2, 4, 2, 2)
        # before a run: a plain sentence instead of an empty heatmap and a colour bar that mean nothing
        self.empty = QLabel("Show attention (Ctrl+Enter) to see one head's weights here: query rows, key columns.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.heatmap, 1)
        self.set_bundle(None)

    def set_bundle(self, bundle: AttentionBundle | None) -> None:
        self.empty.setVisible(bundle is None)
        self.heatmap.setVisible(bundle is not None)
        super().set_bundle(bundle)

    def lazy(self) -> bool:
        return False  # the detail view is what tests and exports read: always current

    def draw(self, bundle: AttentionBundle) -> None:
        s = self.state.settings
        layers, heads = bundle.result.layers, bundle.result.heads
        for box, top, value in ((self.layer, layers - 1, s.layer), (self.head, heads - 1, s.head)):
            with QSignalBlocker(box):  # the state already holds the value: no echo back into it
                box.setRange(0, top)
                box.setValue(value)
        self.head.setEnabled(s.source == "head")
        if s.colours != self._colours:  # a colour map change re-renders the bar: only when it changed
            self._colours = s.colours
            self.heatmap.set_colormap(s.colours)
        matrix, queries, keys, title = detail_matrix(bundle, s)
        # no plot title: the option row names the head, and the rows get the room (20 labels at 1280x800)
        self.heatmap.set_matrix(matrix, queries, keys)
        self.title = title
        what = "norm ||αf(x)||" if s.norms and bundle.result.norms is not None else "weight"
        self.readout.setText(f"{title}: hover for query -> key: {what} (←/→ or [ ]: head, ↑/↓: layer)")


def _swatch(colour: str) -> QIcon:
    pixmap = QPixmap(14, 14)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)


class HeadPage(StatePage):
    """BertViz's head view for the chosen layer and heads; the head list is its colour legend."""

    FIELDS = frozenset({"layer", "heads_shown", "focus"}) | VIEW_FIELDS

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.head_list = QListWidget()
        self.head_list.setMaximumWidth(120)
        self.head_list.setToolTip("Tick heads to draw; each head's lines have its colour")
        self.head_list.itemChanged.connect(self._ticked)
        self.head_view = HeadView()
        self.head_view.focus_changed.connect(self._focus_clicked)
        self.readout = readout_label("Hover a token to see only its lines; click it to keep them")
        self.head_view.hovered.connect(self.readout.setText)
        self.scroll_bar = QScrollBar(Qt.Orientation.Vertical)
        self.scroll_bar.valueChanged.connect(lambda value: self.head_view.scroll_to(value - 0.5))
        self.head_view.range_changed.connect(self._range_changed)
        self.fit = QPushButton("All tokens")
        self.fit.setToolTip("Zoom out to every token (the wheel zooms, dragging scrolls)")
        self.fit.clicked.connect(lambda: self.head_view.zoom(self.head_view.count))
        self.near = QPushButton(f"{VISIBLE_TOKENS} tokens")
        self.near.clicked.connect(lambda: self.head_view.zoom(VISIBLE_TOKENS))
        self.lines_label = QLabel()
        theme.follow(self.lines_label, lambda c: f"QLabel {{ color: {c.secondary}; }}")
        main = QVBoxLayout()
        main.addLayout(row(self.readout, self.lines_label, self.near, self.fit, stretch=0))
        main.addLayout(row(self.head_view, self.scroll_bar, stretch=0), 1)
        layout = QHBoxLayout(self)
        layout.addWidget(column(QLabel("Heads"), self.head_list))
        layout.addLayout(main, 1)

    def set_heads(self, count: int) -> None:
        """One checkable, coloured entry per head of the model."""
        if self.head_list.count() == count:
            return
        with QSignalBlocker(self.head_list):
            self.head_list.clear()
            for head in range(count):
                item = QListWidgetItem(_swatch(head_colour(head)), f"head {head}")
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                self.head_list.addItem(item)

    def _ticked(self, _item: QListWidgetItem) -> None:
        self.state.update(heads_shown=tuple(i for i in range(self.head_list.count())
                                            if self.head_list.item(i).checkState() == Qt.CheckState.Checked))

    def _focus_clicked(self, focus: tuple[int, int] | None) -> None:
        """A click on a shown token: remember its position in the full input (views may hide some)."""
        if focus is None or self.bundle is None:
            self.state.update(focus=None)
            return
        _q, _k, view = shown(self.bundle.result, self.state.settings.options(self.bundle.result.b_start is not None))
        side, index = focus
        self.state.update(focus=(side, int((view.rows if side == 0 else view.cols)[index])))

    def _range_changed(self, low: float, high: float) -> None:
        span = max(1, int(round(high - low)))
        with QSignalBlocker(self.scroll_bar):
            self.scroll_bar.setRange(0, max(0, self.head_view.count - span))
            self.scroll_bar.setPageStep(span)
            self.scroll_bar.setValue(int(round(low + 0.5)))

    def draw(self, bundle: AttentionBundle) -> None:
        s = self.state.settings
        with QSignalBlocker(self.head_list):
            for i in range(self.head_list.count()):
                self.head_list.item(i).setCheckState(Qt.CheckState.Checked if i in s.heads_shown
                                                     else Qt.CheckState.Unchecked)
        result = bundle.result
        queries, keys, _view = shown(result, s.options(result.b_start is not None))
        values, view, norms = shown_heads(result, s)
        full = values[s.layer]
        identity = is_identity(view, result.length)
        matrices = [(h, full[h] if identity else view.apply(full[h])) for h in s.heads_shown]
        if norms:  # lines by norm, relative to the largest of the heads shown (the bins are shares of it)
            top = max((float(m.max()) for _h, m in matrices if m.size), default=0.0) or 1.0
            matrices = [(h, m / top) for h, m in matrices]
        self.head_view.set_heads(queries, keys, matrices)
        pinned = None
        if s.focus is not None:
            side, position = s.focus
            where = np.nonzero((view.rows if side == 0 else view.cols) == position)[0]
            pinned = (side, int(where[0])) if len(where) else None
        self.head_view.pin(pinned)
        drawn, total = self.head_view.drawn
        scale = "norms, relative to the largest shown" if norms else ""
        lines = f"strongest {drawn:,} of {total:,} lines in view" if total > drawn else ""
        self.lines_label.setText("; ".join(part for part in (scale, lines) if part))
        if pinned is None:
            self.readout.setText(f"layer {s.layer}, heads {', '.join(map(str, s.heads_shown)) or 'none'}: "
                                 "hover a token to see only its lines; click it to keep them")


class _NumberItem(QTableWidgetItem):
    """Sorts by value, not by text."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, value)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return float(self.data(Qt.ItemDataRole.UserRole)) < float(other.data(Qt.ItemDataRole.UserRole))


class StatisticsTable(QTableWidget):
    """One row per head, from layer 0 head 0 on; sortable; a click opens the head."""

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(0, 2 + len(STAT_COLUMNS), parent)
        self.view_state = state
        self.setHorizontalHeaderLabels(["layer", "head", *(STAT_TITLES[c] for c in STAT_COLUMNS)])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Qt's default sort indicator is column 0 descending: the table started at the last layer
        self.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)
        self.setToolTip("Averages over query tokens. Sort by a column; click a row to open that head.")
        state.subscribe(lambda _changed: self.mark_current(), only={"layer", "head"})

    def mark_current(self) -> None:
        """Select the row of the head the other views show (wherever sorting put it)."""
        wanted = (self.view_state.layer, self.view_state.head)
        for line in range(self.rowCount()):
            if self.item(line, 0) is not None and self.head_at(line) == wanted:
                with QSignalBlocker(self):
                    self.selectRow(line)
                return

    def fill(self, statistics: HeadStatistics | None) -> None:
        self.setSortingEnabled(False)
        rows = statistics.rows() if statistics is not None else []
        self.setRowCount(len(rows))
        for r, (layer, head, *values) in enumerate(rows):
            self.setItem(r, 0, _NumberItem(layer, str(layer)))
            self.setItem(r, 1, _NumberItem(head, str(head)))
            for c, value in enumerate(values, start=2):
                self.setItem(r, c, _NumberItem(value, f"{value:.3f}"))
        self.setSortingEnabled(True)  # re-sorts by the indicator: layer 0 first unless the person chose
        self.resizeColumnsToContents()
        self.mark_current()

    def head_at(self, row: int) -> tuple[int, int]:
        layer, head = self.item(row, 0), self.item(row, 1)
        assert layer is not None and head is not None, f"no head in row {row}"
        return int(layer.data(Qt.ItemDataRole.UserRole)), int(head.data(Qt.ItemDataRole.UserRole))
