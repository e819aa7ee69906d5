"""NER tab: entities highlighted by type with a legend, an entity table, wordpieces, strategies compared.

Optionally a second model ("Compare with…") tags the same text in the same worker job; its
entities are highlighted beside A's and a table marks each one same / relabelled / removed / added.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner import STRATEGIES, Entity, NerResult, entity_type, label_hint
from bertstudio.core.tasks.ner import compare as compare_entities_of
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import COLOR_A, COLOR_B, CompareSource
from bertstudio.ui.widgets.span_text import Span, SpanText

CHANGE_COLOURS = {"same": "#e6e6e6", "relabelled": "#ffd2a8", "removed": "#f4b4b4", "added": "#bfe8bf"}

STRATEGY_HELP = {
    "none": "every wordpiece on its own, with its B-/I- tag",
    "simple": "adjacent wordpieces with the same type are grouped",
    "first": "a word takes the label of its first wordpiece",
    "average": "a word takes the label with the best average score over its wordpieces",
    "max": "a word takes the label of its highest-scoring wordpiece",
}


def ner_job(request: LoadRequest, text: str, aggregation: str, compare_source: str | None = None, *,
            control: TaskControl) -> Outcome:
    """Tag with model A; when comparing, tag the same text with model B and diff the entities."""
    from bertstudio.core.jobs import run_task
    from bertstudio.core.tasks.ner import tag

    return run_task(request, control, lambda loaded: tag(loaded, text, aggregation), compare_source,
                    lambda a, b: compare_entities_of(a.entities, b.entities))


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _item(value: object) -> QTableWidgetItem:
    if isinstance(value, float):
        item = QTableWidgetItem(f"{value:.3f}")
    else:
        item = QTableWidgetItem("" if value is None else str(value))
    item.setData(Qt.ItemDataRole.UserRole, value)
    return item


class NerTab(TaskTab):
    TASK = "ner"
    TITLE = "NER"
    ORDER = 30

    def build(self) -> None:
        self.result: NerResult | None = None
        self.outcome: Outcome | None = None
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Type or paste text to tag…")
        self.text.setMaximumHeight(90)
        self.strategy = QComboBox()
        for name in STRATEGIES:
            self.strategy.addItem(name, name)
            self.strategy.setItemData(self.strategy.count() - 1, STRATEGY_HELP[name], Qt.ItemDataRole.ToolTipRole)
        self.strategy.setCurrentText("simple")
        self.strategy.setToolTip("How wordpieces are grouped into entities (transformers' aggregation_strategy)")
        self.strategy.currentIndexChanged.connect(self._strategy_changed)
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for line in examples("ner"):
            self.examples.addItem(line, line)
        self.examples.activated.connect(self._example_chosen)
        self.run_button = QPushButton("Tag")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.labels_note = QLabel()
        self.labels_note.setWordWrap(True)

        self.highlight = SpanText()
        self.entities = _table(["text", "type", "score", "start", "end"])
        self.entities.itemSelectionChanged.connect(self._entity_selected)
        self.wordpieces = _table(["wordpiece", "label", "score", "start", "end"])
        self.wordpieces.itemSelectionChanged.connect(self._wordpiece_selected)
        self.compare = _table(list(STRATEGIES))
        # model B ("Compare with…"): its highlighted entities and each change from A
        self.compare_source = CompareSource(self.model_bar.source)
        self.title_a = QLabel()
        self.title_a.setVisible(False)
        self.title_b = QLabel()
        self.highlight_b = SpanText(legend=False)
        self.highlight_b.colour = self.highlight.colour  # B shows each type in A's colour
        self.changes_summary = QLabel()
        self.changes_summary.setWordWrap(True)
        self.changes = _table(["change", "text", "A", "B", "start", "end"])
        self.changes.itemSelectionChanged.connect(self._change_selected)
        self.side_b = QWidget()
        side_b = QVBoxLayout(self.side_b)
        side_b.setContentsMargins(0, 0, 0, 0)
        for widget in (self.title_b, self.highlight_b, self.changes_summary):
            side_b.addWidget(widget)
        side_b.addWidget(self.changes, 1)
        self.side_b.setVisible(False)
        self.views = QTabWidget()
        splitter = QSplitter(Qt.Orientation.Vertical)
        side_a = QWidget()  # model A: its highlighted text and entity table; B's below when comparing
        column_a = QVBoxLayout(side_a)
        column_a.setContentsMargins(0, 0, 0, 0)
        column_a.addWidget(self.title_a)
        column_a.addWidget(self.highlight, 1)
        splitter.addWidget(side_a)
        splitter.addWidget(self.entities)
        splitter.addWidget(self.side_b)
        self.views.addTab(splitter, "Entities")
        self.views.addTab(self.wordpieces, "Wordpieces")
        self.views.addTab(self.compare, "Compare strategies")

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Aggregation"))
        controls.addWidget(self.strategy)
        controls.addWidget(self.examples)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(self.text)
        self.body.addLayout(controls)
        self.body.addWidget(self.compare_source)
        self.body.addWidget(self.labels_note)
        self.body.addWidget(self.views, 1)
        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        labels = [info.id2label[i] for i in sorted(info.id2label)]
        self.highlight.set_kinds([entity_type(label) for label in labels if label != "O"])
        hint = label_hint(info.id2label)
        self.labels_note.setText(f"Labels: {', '.join(labels)}" + (f"<br><i>{hint}</i>" if hint else ""))

    def _example_chosen(self, index: int) -> None:
        text = self.examples.itemData(index)
        if text:
            self.text.setPlainText(text)
        self.examples.setCurrentIndex(0)

    def _strategy_changed(self) -> None:
        strategy = self.current_strategy()
        outcome = self.outcome
        if (self.result is not None and strategy in self.result.comparison
                and (outcome is None or outcome.second is None or strategy in outcome.second.comparison)):
            self._show_entities(self.result, self.result.comparison[strategy])  # no rerun needed
            if outcome is not None and outcome.second is not None:
                second = outcome.second.comparison[strategy]
                self._show_second(outcome, second, compare_entities_of(self.shown_entities, second))
        elif self.model_info is not None and self.text.toPlainText().strip():
            self.run()

    def current_strategy(self) -> str:
        return str(self.strategy.currentData())

    def run(self) -> None:
        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        self.run_job(ner_job, self.text.toPlainText(), self.current_strategy(), compare_source)

    # -- output ----------------------------------------------------------------------------
    def show_result(self, outcome: Outcome) -> None:
        self.outcome = outcome
        result = self.result = outcome.result
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
                    item.setToolTip(f"characters {e.start}–{e.end}")
                else:
                    item = _item("")
                self.compare.setItem(row, column, item)
        self.show_message("\n".join(n.text for n in outcome.notes))
        self.status.emit(f"NER: {len(result.entities)} entities ({result.aggregation})"
                         + (f"; B: {len(outcome.second.entities)}" if outcome.second is not None else ""))

    def _show_second(self, outcome: Outcome, entities: tuple[Entity, ...], diff: Any) -> None:
        """Model B's entities highlighted under A's, and the table of changes (A -> B)."""
        assert outcome.second is not None
        source_a = self.model_request().source if self.model_request() else "A"
        self.title_a.setText(f"<b style='color:{COLOR_A}'>A</b> {html.escape(str(source_a))}")
        self.title_b.setText(f"<b style='color:{COLOR_B}'>B</b> {html.escape(outcome.second_source)}")
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
                self.changes.setItem(r, c, item)
        if diff.changed:
            self.changes_summary.setText(
                f"<b style='color:#a40000'>Entities changed (A → B):</b> {len(diff.relabelled)} relabelled, "
                f"{len(diff.removed)} removed, {len(diff.added)} added; {len(diff.same)} the same.")
        else:
            self.changes_summary.setText(f"Same entities in A and B ({len(diff.same)}).")

    def _change_selected(self) -> None:
        rows = self.changes.selectionModel().selectedRows()
        if rows:
            role = Qt.ItemDataRole.UserRole
            start, end = (self.changes.item(rows[0].row(), c).data(role) for c in (4, 5))
            self.highlight.select(int(start), int(end))
            self.highlight_b.select(int(start), int(end))

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
                table.setItem(r, c, item)

    def _select_from(self, table: QTableWidget) -> None:
        rows = table.selectionModel().selectedRows()
        if not rows:
            return
        row = rows[0].row()
        role = Qt.ItemDataRole.UserRole
        start, end = table.item(row, 3).data(role), table.item(row, 4).data(role)
        if start is not None and end is not None:
            self.highlight.select(int(start), int(end))

    def _entity_selected(self) -> None:
        self._select_from(self.entities)

    def _wordpiece_selected(self) -> None:
        self._select_from(self.wordpieces)
