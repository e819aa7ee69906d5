"""NER tab: entities highlighted by type with a legend, an entity table, wordpieces, strategies compared."""

from __future__ import annotations

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
)

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner import STRATEGIES, Entity, NerResult, entity_type, label_hint
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.span_text import Span, SpanText

STRATEGY_HELP = {
    "none": "every wordpiece on its own, with its B-/I- tag",
    "simple": "adjacent wordpieces with the same type are grouped",
    "first": "a word takes the label of its first wordpiece",
    "average": "a word takes the label with the best average score over its wordpieces",
    "max": "a word takes the label of its highest-scoring wordpiece",
}


def ner_job(request: LoadRequest, text: str, aggregation: str, control: TaskControl) -> NerResult:
    from bertstudio.core.models import load_model
    from bertstudio.core.tasks.ner import tag

    loaded = load_model(request, control)
    control.check()
    return tag(loaded, text, aggregation)


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
        self.views = QTabWidget()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.highlight)
        splitter.addWidget(self.entities)
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
        if self.result is not None and self.current_strategy() in self.result.comparison:
            self._show_entities(self.result, self.result.comparison[self.current_strategy()])  # no rerun needed
        elif self.model_info is not None and self.text.toPlainText().strip():
            self.run()

    def current_strategy(self) -> str:
        return str(self.strategy.currentData())

    def run(self) -> None:
        self.run_job(ner_job, self.text.toPlainText(), self.current_strategy())

    # -- output ----------------------------------------------------------------------------
    def show_result(self, result: NerResult) -> None:
        self.result = result
        self.highlight.set_kinds(result.entity_types)
        self._show_entities(result, result.entities)
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
        notes = [result.truncation.message if result.truncation else "", result.head_warning, result.label_hint,
                 *result.notes]
        self.show_message("\n".join(n for n in notes if n))
        self.status.emit(f"NER: {len(result.entities)} entities ({result.aggregation})")

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
