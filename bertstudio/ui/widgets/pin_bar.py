"""Edit and pin: keep an input and its result, edit, and see each edit's result beside the pinned one.

`Pins` is the plain list (the pinned input first, then the edits, each with its view state, its
input and its result); `PinBar` is the row that shows it: Pin, the list to step through
(Alt+Left/Right), Unpin, what changed, "Explain A and B…" (the pinned input's and the shown edit's
attributions side by side, where the task has Explain) and "What would flip this?" where the task
has a search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QToolButton, QWidget

from bertstudio.core.workspace_file import MAX_PINS
from bertstudio.ui.widgets.elided_label import ElidedLabel


@dataclass
class PinEntry:
    label: str  # "pinned", "edit 1"...
    view: dict[str, Any]  # the tab's state() for this input (what the workspace keeps)
    inputs: Any  # the spec's input dataclass; None when it could not be read back
    result: Any = None  # None until run (restored from a workspace, or after a model change)


class Pins:
    """The pinned input (first) and the edits since, at most MAX_PINS; `current` is the one shown."""

    def __init__(self) -> None:
        self.entries: list[PinEntry] = []
        self.current = 0
        self._edits = 0

    @property
    def active(self) -> bool:
        return bool(self.entries)

    @property
    def pinned(self) -> PinEntry:
        return self.entries[0]

    def pin(self, view: dict[str, Any], inputs: Any, result: Any) -> None:
        self.entries, self.current, self._edits = [PinEntry("pinned", view, inputs, result)], 0, 0

    def clear(self) -> None:
        self.entries, self.current = [], 0

    def add(self, view: dict[str, Any], inputs: Any, result: Any) -> PinEntry:
        """An edit's result: the entry with the same input is updated, else a new one is kept."""
        for index, entry in enumerate(self.entries):
            if entry.inputs == inputs:
                entry.result, entry.view, self.current = result, view, index
                return entry
        self._edits += 1
        self.entries.append(PinEntry(f"edit {self._edits}", view, inputs, result))
        if len(self.entries) > MAX_PINS:
            del self.entries[1]  # the oldest edit goes; the pinned input stays
        self.current = len(self.entries) - 1
        return self.entries[-1]

    def forget_results(self) -> None:
        """Another model: the kept results belong to the old one."""
        for entry in self.entries:
            entry.result = None

    def to_json(self) -> list[dict[str, Any]]:
        return [{"label": entry.label, "view": entry.view} for entry in self.entries]

    def restore(self, saved: list[dict[str, Any]], inputs: list[Any], current: int) -> None:
        self.entries = [PinEntry(str(item.get("label", "")), dict(item.get("view") or {}), given)
                        for item, given in zip(saved[:MAX_PINS], inputs, strict=False)]
        self._edits = max(0, len(self.entries) - 1)
        self.current = min(max(current, 0), max(len(self.entries) - 1, 0))


def summary(diff: Any) -> str:
    """A line for what changed from the pinned result to the edit (a RankingDiff or one per row/mask)."""
    items = list(diff) if isinstance(diff, list | tuple) else [diff]
    first = items[0] if items else None
    if first is None or not hasattr(first, "top_changed"):
        return "compared below"
    moved = f"changed: {first.top_a} → {first.top_b}" if first.top_changed else f"unchanged: {first.top_a}"
    largest = max((d for d in first.deltas if d.delta is not None), key=lambda d: abs(d.delta), default=None)
    return moved + (f"; largest change {largest.label} {largest.delta:+.3f}" if largest is not None else "")


class PinBar(QWidget):
    """Pin / the kept inputs / Unpin / what changed / What would flip this?"""

    pin_clicked = Signal()
    unpin_clicked = Signal()
    stepped = Signal(int)  # the entry chosen
    flip_clicked = Signal()
    pair_clicked = Signal()
    trace_clicked = Signal()

    def __init__(self, can_flip: bool, parent: QWidget | None = None, can_explain: bool = False) -> None:
        super().__init__(parent)
        self.pin_button = QPushButton("Pin")
        self.pin_button.setToolTip("Keep this input and its result; edit and run to see the new result beside it")
        self.pin_button.setEnabled(False)
        self.entries = QComboBox()
        self.entries.setToolTip("The pinned input and your edits (Alt+Left / Alt+Right)")
        self.entries.setMinimumWidth(160)
        self.entries.setMaximumWidth(320)
        self.back, self.forward = QToolButton(), QToolButton()
        self.back.setText("◀")
        self.back.setToolTip("Previous edit (Alt+Left)")
        self.forward.setText("▶")
        self.forward.setToolTip("Next edit (Alt+Right)")
        self.unpin_button = QPushButton("Unpin")
        self.unpin_button.setToolTip("Forget the pinned input and the edits")
        self.summary = ElidedLabel()
        self.can_explain = can_explain
        self.pair_button = QPushButton("Explain A and B…")
        self.pair_button.setToolTip("The pinned input's and this edit's attributions side by side, and their "
                                    "difference (same method, same target)")
        self.trace_button = QPushButton("Trace why…")
        self.trace_button.setToolTip("Activation patching: which layer, token position and attention head carry the "
                                     "pinned answer (clean: the pinned input; corrupted: this edit)")
        self.flip_button = QPushButton("What would flip this?…")
        self.flip_button.setToolTip("Search for the smallest edits of the input that change the prediction")
        self.flip_button.setVisible(can_flip)
        self.flip_button.setEnabled(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for widget in (self.pin_button, self.back, self.entries, self.forward, self.unpin_button, self.summary,
                       self.pair_button, self.trace_button, self.flip_button):
            row.addWidget(widget, 1 if widget is self.summary else 0)
        self.pin_button.clicked.connect(self.pin_clicked)
        self.unpin_button.clicked.connect(self.unpin_clicked)
        self.flip_button.clicked.connect(self.flip_clicked)
        self.pair_button.clicked.connect(self.pair_clicked)
        self.trace_button.clicked.connect(self.trace_clicked)
        self.entries.activated.connect(self.stepped)
        self.back.clicked.connect(lambda: self.step_by(-1))
        self.forward.clicked.connect(lambda: self.step_by(1))
        self.show_pins(Pins())

    def step_by(self, offset: int) -> None:
        index = self.entries.currentIndex() + offset
        if self.entries.count() and 0 <= index < self.entries.count():
            self.entries.setCurrentIndex(index)
            self.stepped.emit(index)

    def show_pins(self, pins: Pins, line: str = "") -> None:
        """The list as it is now, the shown one chosen, and what changed (`line`)."""
        self.entries.blockSignals(True)
        self.entries.clear()
        for entry in pins.entries:
            typed = [v.strip() for v in entry.view.values() if isinstance(v, str) and " " in v.strip()]  # texts
            text = " / ".join(typed)[:80]
            self.entries.addItem(f"{entry.label}: {text}" if text else entry.label)
        self.entries.setCurrentIndex(pins.current if pins.active else -1)
        self.entries.blockSignals(False)
        for widget in (self.entries, self.back, self.forward, self.unpin_button):
            widget.setVisible(pins.active)
        self.back.setEnabled(pins.current > 0)
        self.forward.setEnabled(pins.current < len(pins.entries) - 1)
        self.summary.setText(line if pins.active else "")
        self.pair_button.setVisible(self.can_explain and pins.active)
        self.pair_button.setEnabled(comparing(pins))
        self.trace_button.setVisible(self.can_explain and pins.active)
        self.trace_button.setEnabled(comparing(pins))


def comparing(pins: Pins) -> bool:
    """An edit is shown beside the pinned input, both with results."""
    return (pins.active and 0 < pins.current < len(pins.entries) and pins.pinned.result is not None
            and pins.entries[pins.current].result is not None)
