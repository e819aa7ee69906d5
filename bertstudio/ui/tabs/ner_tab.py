"""NER tab: entities highlighted by type with a legend, an entity table, wordpieces, strategies compared.

Optionally a second model ("Compare with…") tags the same text in the same worker job; its
entities are highlighted beside A's and a table marks each one same / relabelled / removed / added.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import ModelInfo
from bertstudio.core.tasks.ner import DEFAULT_STRATEGY, STRATEGIES, NerInput, NerResult, label_hint
from bertstudio.core.tasks.ner.entities import Entity, EntityDiff, entity_type
from bertstudio.core.tasks.ner.entities import compare_entities as compare_entities_of
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.theme import colors, ink_on
from bertstudio.ui.widgets.forms import read_only_table, text_box
from bertstudio.ui.widgets.layouts import splitter
from bertstudio.ui.widgets.span_text import Span, SpanText

CHANGE_COLOURS = {"same": "#e6e6e6", "relabelled": "#ffd2a8", "removed": "#f4b4b4", "added": "#bfe8bf"}

STRATEGY_HELP = {
    "none": "every wordpiece on its own, with its B-/I- tag",
    "simple": "adjacent wordpieces with the same type are grouped",
    "first": "a word takes the label of its first wordpiece",
    "average": "a word takes the label with the best average score over its wordpieces",
    "max": "a word takes the label of its highest-scoring wordpiece",
}


def _table(headers: list[str], stretch: Sequence[int] = (0,)) -> QTableWidget:
    table = read_only_table(headers, stretch)  # the text gets the room, not "end"
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    return table


def _column(*widgets: QWidget) -> QWidget:
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget, 1 if isinstance(widget, QSplitter | QTableWidget) else 0)
    return holder


def _split(top: QWidget, bottom: QWidget) -> QSplitter:
    """The highlighted text above its table; the table gets most of the room."""
    split = splitter(Qt.Orientation.Vertical, top, bottom)
    split.setStretchFactor(0, 1)
    split.setStretchFactor(1, 2)
    return split


def _item(value: object) -> QTableWidgetItem:
    if isinstance(value, float):
        item = QTableWidgetItem(f"{value:.3f}")
    else:
        item = QTableWidgetItem("" if value is None else str(value))
    item.setData(Qt.ItemDataRole.UserRole, value)
    return item


class NerTab(TaskTab):
    SPEC_KEY = "ner"
    ONNX_RUNTIME = True  # its runs are whole forwards: an exported model may run them (ONNX Runtime)
    BOUND = {"text": "text", "aggregation": "aggregation"}  # the workspace binds these by name
    RUN_LABEL = "Tag"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.text = text_box("Type or paste text to tag…", 90)
        self.strategy = QComboBox()
        for name in STRATEGIES:
            self.strategy.addItem(name, name)
            self.strategy.setItemData(self.strategy.count() - 1, STRATEGY_HELP[name], Qt.ItemDataRole.ToolTipRole)
        self.strategy.setCurrentText(DEFAULT_STRATEGY)
        self.strategy.setToolTip("How wordpieces are grouped into entities (transformers' aggregation_strategy)")
        self.strategy.currentIndexChanged.connect(self._strategy_changed)
        self.labels_note = QLabel()
        self.labels_note.setWordWrap(True)
        self.options.addWidget(QLabel("Aggregation"))
        self.options.addWidget(self.strategy)
        box.addWidget(self.text)
        box.addWidget(self.labels_note)

    def build_results(self, box: QVBoxLayout) -> None:
        self.shown_entities: tuple[Entity, ...] = ()
        self.highlight = SpanText()
        self.entities = _table(["text", "type", "score", "start", "end"])
        self.entities.itemSelectionChanged.connect(lambda: self._select_from(self.entities, self.highlight))
        self.wordpieces = _table(["wordpiece", "label", "score", "start", "end"])
        self.wordpieces.itemSelectionChanged.connect(lambda: self._select_from(self.wordpieces, self.highlight))
        self.compare = _table(list(STRATEGIES), stretch=range(len(STRATEGIES)))
        # model B ("Compare with…"): its highlighted entities and each change from A, in a column beside A's
        self.title_a = QLabel()
        self.title_a.setVisible(False)
        self.title_b = QLabel()
        self.highlight_b = SpanText(legend=False, colours_of=self.highlight)  # each type in A's colour
        self.changes_summary = QLabel()
        self.changes_summary.setWordWrap(True)
        self.changes = _table(["change", "text", "A", "B", "start", "end"], stretch=(1,))
        self.changes.itemSelectionChanged.connect(
            lambda: self._select_from(self.changes, self.highlight, self.highlight_b))
        self.side_b = _column(self.title_b, _split(self.highlight_b, _column(self.changes_summary, self.changes)))
        self.side_b.setVisible(False)
        side_a = _column(self.title_a, _split(self.highlight, self.entities))
        sides = splitter(Qt.Orientation.Horizontal, side_a, self.side_b)
        self.views = QTabWidget()
        self.views.addTab(sides, "Entities")
        self.views.addTab(self.wordpieces, "Wordpieces")
        self.views.addTab(self.compare, "Compare strategies")
        box.addWidget(self.views, 1)

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        labels = [info.id2label[i] for i in sorted(info.id2label)]
        self.highlight.set_kinds([entity_type(label) for label in labels if label != "O"])
        hint = label_hint(info.id2label)
        self.labels_note.setText(f"Labels: {', '.join(labels)}" + (f"<br><i>{hint}</i>" if hint else ""))

    def examples(self) -> list[tuple[str, Any]]:
        return [(line, line) for line in examples("ner")]

    def use_example(self, data: Any) -> None:
        self.text.setPlainText(str(data))

    def inputs(self) -> NerInput:
        return NerInput(self.text.toPlainText(), self.current_strategy())

    def set_inputs(self, inputs: NerInput) -> None:
        self.text.setPlainText(inputs.text)
        self.aggregation = inputs.aggregation

    @property
    def aggregation(self) -> str:
        return self.current_strategy()

    @aggregation.setter
    def aggregation(self, strategy: str) -> None:
        """Set without re-drawing or running (a filled-in input, a restored workspace): only the user's
        choice of another strategy does that."""
        if strategy in STRATEGIES:
            self.strategy.blockSignals(True)
            self.strategy.setCurrentText(strategy)
            self.strategy.blockSignals(False)

    def _strategy_changed(self) -> None:
        strategy = self.current_strategy()
        outcome = self.outcome
        if (self.result is not None and strategy in self.result.comparison
                and (outcome is None or outcome.second is None or strategy in outcome.second.comparison)):
            self._show_entities(self.result, self.result.comparison[strategy])  # no rerun needed
            if outcome is not None and outcome.second is not None:
                second = outcome.second.comparison[strategy]
                self._show_second(outcome, second, compare_entities_of(self.shown_entities, second))
            self.redrawn_for(lambda inputs: replace(inputs, aggregation=strategy))  # not out of date
        elif self.model_info is not None and self.text.toPlainText().strip():
            self.run()

    def current_strategy(self) -> str:
        return str(self.strategy.currentData())

    # -- output ----------------------------------------------------------------------------
    def clear_result(self) -> None:
        self.shown_entities = ()
        self.highlight.set_spans("", [])
        for table in (self.entities, self.wordpieces, self.compare, self.changes):
            table.setRowCount(0)
        self.title_a.setVisible(False)
        self.side_b.setVisible(False)

    def show_outcome(self, outcome: Outcome) -> None:
        result = outcome.result
        self.highlight.set_kinds(result.entity_types)
        self._show_entities(result, result.entities)
        if outcome.second is not None:
            self.highlight.set_kinds(outcome.second.entity_types)
            self._show_second(outcome, outcome.second.entities, outcome.diff)
        else:
            self.title_a.setVisible(False)
            self.side_b.setVisible(False)
        self._fill(self.wordpieces, [(p.word, p.label, p.score, p.start, p.end) for p in result.wordpieces],
                   [p.entity_type if p.label != "O" else None for p in result.wordpieces])
        rows = max([len(v) for v in result.comparison.values()] + [1])
        self.compare.setRowCount(rows)
        for column, strategy in enumerate(STRATEGIES):
            entities = result.comparison.get(strategy)
            for row in range(rows):
                if entities is None:
                    text = "(not available)" if row == 0 else ""
                    item = _item(text)
                    item.setToolTip(result.unavailable.get(strategy, ""))
                elif row < len(entities):
                    e = entities[row]
                    item = _item(f"{e.word}  {e.label}  {e.score:.2f}")
                    item.setBackground(QColor(self.highlight.colour(e.entity_type)))
                    item.setForeground(QColor(ink_on(self.highlight.colour(e.entity_type))))  # readable when dark
                    item.setToolTip(f"characters {e.start}–{e.end}")
                else:
                    item = _item("")
                self.compare.setItem(row, column, item)
        self.status.emit(f"NER: {len(result.entities)} entities ({result.aggregation})"
                         + (f"; B: {len(outcome.second.entities)}" if outcome.second is not None else ""))

    def _show_second(self, outcome: Outcome, entities: tuple[Entity, ...], diff: EntityDiff) -> None:
        """Model B's entities highlighted under A's, and the table of changes (A -> B)."""
        assert outcome.second is not None
        source_a = self.source_a(outcome)
        self.title_a.setText(f"<b style='color:{colors().series_a}'>A</b> {html.escape(str(source_a))}")
        self.title_b.setText(f"<b style='color:{colors().series_b}'>B</b> {html.escape(outcome.second_source)}")
        self.title_a.setVisible(True)
        self.side_b.setVisible(True)
        self.diff = diff
        change_of = {(b.start, b.end): f"relabelled from {a.label}" for a, b in diff.relabelled}
        change_of.update({(e.start, e.end): "added (not in A)" for e in diff.added})
        self.highlight_b.set_spans(outcome.second.text, [
            Span(e.start, e.end, e.entity_type,
                 f"{e.label} {e.score:.3f}" + (f" · {change_of[(e.start, e.end)]}"
                                               if (e.start, e.end) in change_of else ""))
            for e in entities if e.start is not None and e.end is not None
        ])
        text_a, text_b = outcome.result.text, outcome.second.text  # the words as written, not as tokenized
        rows = ([("relabelled", text_a[a.start:a.end], a.label, b.label, a.start, a.end) for a, b in diff.relabelled]
                + [("removed", text_a[e.start:e.end], e.label, "", e.start, e.end) for e in diff.removed]
                + [("added", text_b[e.start:e.end], "", e.label, e.start, e.end) for e in diff.added]
                + [("same", text_a[a.start:a.end], a.label, b.label, a.start, a.end) for a, b in diff.same])
        self.changes.clearSelection()
        self.changes.setRowCount(len(rows))
        for r, values in enumerate(rows):
            for c, value in enumerate(values):
                item = _item(value)
                item.setBackground(QColor(CHANGE_COLOURS[values[0]]))
                item.setForeground(QColor(ink_on(CHANGE_COLOURS[values[0]])))
                self.changes.setItem(r, c, item)
        if diff.changed:
            self.changes_summary.setText(
                f"<b style='color:{colors().error}'>Entities changed (A → B):</b> {len(diff.relabelled)} relabelled, "
                f"{len(diff.removed)} removed, {len(diff.added)} added; {len(diff.same)} the same.")
        else:
            self.changes_summary.setText(f"Same entities in A and B ({len(diff.same)}).")


    def _show_entities(self, result: NerResult, entities: tuple[Entity, ...]) -> None:
        self.shown_entities = entities
        self.highlight.set_spans(result.text, [
            Span(e.start, e.end, e.entity_type, f"{e.label} {e.score:.3f}")
            for e in entities if e.start is not None and e.end is not None
        ])
        self._fill(self.entities, [(result.text[e.start:e.end] if e.start is not None else e.word, e.label,
                                    e.score, e.start, e.end) for e in entities],
                   [e.entity_type for e in entities])

    def _fill(self, table: QTableWidget, rows: list[tuple], kinds: list[str | None]) -> None:
        table.clearSelection()
        table.setRowCount(len(rows))
        for r, (values, kind) in enumerate(zip(rows, kinds, strict=True)):
            for c, value in enumerate(values):
                item = _item(value)
                if kind and c in (0, 1):
                    item.setBackground(QColor(self.highlight.colour(kind)))
                    item.setForeground(QColor(ink_on(self.highlight.colour(kind))))
                table.setItem(r, c, item)

    def _select_from(self, table: QTableWidget, *texts: SpanText) -> None:
        """Select the chosen row's span (its last two columns: start, end) in `texts`."""
        rows = table.selectionModel().selectedRows()
        if not rows:
            return
        row, last = rows[0].row(), table.columnCount() - 1
        items = (table.item(row, last - 1), table.item(row, last))
        span = [item.data(Qt.ItemDataRole.UserRole) for item in items if item is not None]
        if len(span) == 2 and None not in span:
            for text in texts:
                text.select(int(span[0]), int(span[1]))
