"""Corpus page of the Attention tab: which tokens of a corpus file the model treats most like a token
of the input (exBERT's corpus search, offline), or which lines are like the whole input.

Index runs core.corpus.query.index_corpus in a TaskRunner (progress, Cancel; the cache makes a
second Index of the same file, model and layer instant); a search is one forward of the input in
another runner, superseded by the next. The page only renders: the table shows what the core
query returned, the matched token of each line in bold.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.corpus.query import MAX_K, CorpusAnswer, Neighbour, excerpt
from bertstudio.ui.widgets.attention_pages import readout_label
from bertstudio.ui.widgets.forms import browse_button
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.rich_text_table import HTML_ROLE, context_table
from bertstudio.workers.runner import TaskRunner

if TYPE_CHECKING:
    from bertstudio.core.corpus.index import CorpusIndex
    from bertstudio.core.models import LoadRequest, ModelInfo
    from bertstudio.core.tasks.attention.bundle import AttentionBundle
    from bertstudio.core.tasks.attention.state import AttentionViewState

COLUMNS = ("Score", "Token", "Line", "Context")
UI_MAX_K = min(MAX_K, 200)  # rows the table shows at once; the CLI gives up to MAX_K


class CorpusHost(Protocol):
    """What the page reads of the Attention tab (all public)."""

    view_state: AttentionViewState
    bundle: AttentionBundle | None
    runner: TaskRunner  # the tab's attention runs: the page follows each one as it is shown

    @property
    def model_info(self) -> ModelInfo | None: ...

    def model_request(self) -> LoadRequest | None: ...


def context_html(neighbour: Neighbour) -> str:
    before, match, after = excerpt(neighbour)
    return html.escape(before) + (f"<b>{html.escape(match)}</b>" if match else "") + html.escape(after)


class CorpusPage(QWidget):
    """Index a corpus file at a layer; search it with a token of the shown input (or the whole input)."""

    def __init__(self, host: CorpusHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.index: CorpusIndex | None = None
        self.indexed_for: tuple[Any, str, int] | None = None  # (request, path, layer) of self.index
        self._pending: tuple[Any, str, int] = (None, "", 0)  # what the running Index is for
        self.answer: CorpusAnswer | None = None
        self.query_tokens: list[tuple[int, str]] = []  # (position in the input, token) offered as queries
        self.query_text = ""
        self.index_runner = TaskRunner(self)
        self.query_runner = TaskRunner(self)
        self.status = readout_label("Choose a corpus file and press Index.")
        self.table = context_table(COLUMNS)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(self._build_index_row())
        layout.addWidget(self.status)
        layout.addLayout(self._build_query_row())
        layout.addWidget(self.table, 1)
        self._connect(host)
        self._sentences_toggled(False)

    def _build_index_row(self) -> QBoxLayout:
        """The corpus file, the layer and Index / Cancel."""
        self.path = QLineEdit()
        self.path.setPlaceholderText("A UTF-8 text file, one sentence or passage per line")
        self.browse = browse_button(self.path, "Corpus file", "Text (*.txt);;All files (*)")
        self.demo = QPushButton("Demo corpus")
        self.demo.setToolTip("Sentences with ambiguous words (bank, play, light…), shipped with BERT Studio")
        self.demo.clicked.connect(self.use_demo)
        self.layer = QSpinBox()
        self.layer.setRange(0, 0)
        self.layer.setToolTip("0 = the embeddings, 1..layers = the encoder layers' outputs")
        self.index_button = QPushButton("Index")
        self.index_button.setToolTip("Run the model over every line (cached on disk: the next time is instant)")
        self.index_button.clicked.connect(self.start_index)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_index)
        return row(QLabel("Corpus"), self.path, self.browse, self.demo, QLabel("Layer"), self.layer, self.index_button,
                   self.cancel_button, stretch=1)

    def _build_query_row(self) -> QBoxLayout:
        """The token to search with (or the whole input), how many, Search, and what was found."""
        self.token = QComboBox()
        self.token.setToolTip("The token of the input to search with (click a token in the head view to pick it)")
        self.token.setMinimumContentsLength(14)
        self.k = QSpinBox()
        self.k.setRange(1, UI_MAX_K)
        self.k.setValue(20)
        self.k.setToolTip(f"How many neighbours (1-{UI_MAX_K})")
        self.sentences = QCheckBox("Sentences like this one")
        self.sentences.setToolTip("Compare the whole input's mean-pooled vector with every line's")
        self.search_button = QPushButton("Search")
        self.search_button.clicked.connect(self.search)
        self.summary = readout_label("")
        return row(QLabel("Token"), self.token, QLabel("K"), self.k, self.sentences, self.search_button, self.summary)

    def _connect(self, host: CorpusHost) -> None:
        self.index_runner.started.connect(lambda: self._set_indexing(True))
        self.index_runner.finished.connect(lambda: self._set_indexing(False))
        self.index_runner.progress.connect(lambda event: self.status.setText(getattr(event, "message", "")))
        self.index_runner.result.connect(self._indexed)
        self.index_runner.error.connect(lambda error: self._failed("Indexing failed", error))
        self.index_runner.stopping.connect(lambda: self.status.setText("Cancelling…"))
        self.index_runner.cancelled.connect(lambda: self.status.setText("Indexing cancelled."))
        self.query_runner.result.connect(self.show_answer)
        self.query_runner.error.connect(lambda error: self._failed("Search failed", error))
        self.token.activated.connect(lambda _i: self.search())
        self.sentences.toggled.connect(self._sentences_toggled)
        self.k.editingFinished.connect(self.search)
        host.view_state.subscribe(lambda _c: self._focus_changed(), only={"focus"})
        # A new run (its first drawn stage, its result, its end) changes the input's tokens: follow it at
        # once, not at the next page switch. Queued: the tab has shown the run by the time we read it.
        queued = Qt.ConnectionType.QueuedConnection
        for signal in (host.runner.progress, host.runner.result, host.runner.finished):
            signal.connect(self._host_ran, queued)

    # -- inputs from the tab ------------------------------------------------------------------
    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.refresh()
        super().showEvent(event)

    def _host_ran(self, *_args: Any) -> None:
        """The tab showed a run (or a stage of it): its tokens, and a search with the new input."""
        text = self.query_text
        self.refresh()
        if self.query_text == text:
            return
        self.answer = None  # the old input's neighbours: not what the page now offers
        self.table.setRowCount(0)
        self.summary.setText("")
        if self.isVisible() and self.index is not None and self.query_text:
            self.search()

    def refresh(self) -> None:
        """Read the tab's model (layers) and shown input (its tokens) again; keep what still applies."""
        info = self.host.model_info
        layers = int(info.layers or 0) if info is not None else 0
        if self.layer.maximum() != layers:
            self.layer.setRange(0, layers)
            self.layer.setValue(layers)
        if self.indexed_for is not None and self.indexed_for[0] != self.host.model_request():
            self.index, self.indexed_for = None, None  # another model: its states differ
            self.status.setText("The model changed: press Index to index the corpus with it.")
        bundle = self.host.bundle
        result = bundle.result if bundle is not None else None
        tokens: list[tuple[int, str]] = []
        if result is not None:
            end = result.b_start if result.b_start is not None else len(result.tokens)
            tokens = [(i, t) for i, t in enumerate(result.tokens[:end]) if not result.special[i]]
        text = result.text if result is not None else ""
        if tokens != self.query_tokens or text != self.query_text:
            current = self.token.currentIndex()
            self.query_tokens, self.query_text = tokens, text
            self.token.clear()
            self.token.addItems([f"{i}: {t}" for i, t in tokens])
            if tokens:
                self.token.setCurrentIndex(current if 0 <= current < len(tokens) else 0)
        self.token.setEnabled(bool(tokens) and not self.sentences.isChecked())
        if not tokens:
            self.token.setPlaceholderText("show attention first")

    def _focus_changed(self) -> None:
        """A token clicked in the head view: search with it, if it is one of the offered tokens."""
        focus = self.host.view_state.focus
        if focus is None:
            return
        positions = [i for i, _ in self.query_tokens]
        if focus[1] in positions:
            self.token.setCurrentIndex(positions.index(focus[1]))
            if self.isVisible() and self.index is not None:
                self.search()

    def _sentences_toggled(self, on: bool) -> None:
        self.token.setEnabled(bool(self.query_tokens) and not on)
        self.table.setColumnHidden(1, on)
        if self.index is not None:
            self.search()

    def use_demo(self) -> None:
        from bertstudio.resources import resource_path

        self.path.setText(str(resource_path("corpus", "ambiguous_words.txt")))

    # -- index ---------------------------------------------------------------------------------
    def start_index(self) -> None:
        from bertstudio.core.corpus.query import corpus_index_job

        self.refresh()
        request = self.host.model_request()
        path = self.path.text().strip()
        if request is None:
            self.status.setText("Load a model first (the model bar above): the corpus is indexed with it.")
            return
        if not path:
            self.status.setText("Choose a corpus file first: one sentence or passage per line.")
            return
        layer = self.layer.value()
        self.status.setText(f"Indexing {Path(path).name} at layer {layer}…")
        self._pending = (request, path, layer)
        self.index_runner.start(corpus_index_job, request, path, layer)

    def cancel_index(self) -> None:
        self.index_runner.cancel()

    def _set_indexing(self, busy: bool) -> None:
        self.index_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)

    def _indexed(self, outcome: tuple[CorpusIndex, tuple[Any, ...]]) -> None:
        index, notes = outcome
        self.index, self.indexed_for = index, self._pending
        where = Path(self._pending[1]).name
        said = " ".join(note.text for note in notes)
        self.status.setText(f"Indexed {where}: {len(index.lines):,} lines, {index.token_count:,} tokens at "
                            f"layer {index.layer}. {said}".strip())
        self.search()

    def _failed(self, what: str, error: BaseException) -> None:
        hint = getattr(error, "hint", "")
        self.status.setText(f"{what}: {error}" + (f" {hint}" if hint else ""))

    # -- search --------------------------------------------------------------------------------
    def search(self) -> None:
        from bertstudio.core.corpus.query import corpus_query_job

        self.refresh()
        request = self.host.model_request()
        if self.index is None or request is None:
            self.summary.setText("Index a corpus first.")
            return
        sentences = self.sentences.isChecked()
        if not self.query_text:
            self.summary.setText("Show attention for a text first: its tokens are what you search with.")
            return
        row = self.token.currentIndex()
        if not sentences and not 0 <= row < len(self.query_tokens):
            self.summary.setText("Choose a token of the input.")
            return
        token = None if sentences else self.query_tokens[row][0]
        self.summary.setText("Searching…")
        self.query_runner.start(corpus_query_job, request, self.index, self.query_text, token, self.k.value())

    def show_answer(self, answer: CorpusAnswer) -> None:
        self.answer = answer
        self.summary.setText(f"{answer.query}: {answer.summary}")
        self.table.setUpdatesEnabled(False)
        self.table.setRowCount(len(answer.neighbours))
        for line, n in enumerate(answer.neighbours):
            items = [QTableWidgetItem(value) for value in (f"{n.score:.4f}", n.token, str(n.line), "")]
            for number in (items[0], items[2]):
                number.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            items[3].setData(HTML_ROLE, context_html(n))
            items[3].setToolTip(n.context[:1000])
            for column, item in enumerate(items):
                self.table.setItem(line, column, item)
        self.table.setUpdatesEnabled(True)

    def table_rows(self) -> list[tuple[float, str, int, str]]:
        """(score, token, line, context) as the table shows them (tests compare with the core)."""
        def cell(line: int, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> str:
            item = self.table.item(line, column)
            return str(item.data(role)) if item is not None else ""

        return [(float(cell(line, 0)), cell(line, 1), int(cell(line, 2)), cell(line, 3, HTML_ROLE))
                for line in range(self.table.rowCount())]

